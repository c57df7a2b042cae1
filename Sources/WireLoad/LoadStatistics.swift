/// What went wrong during a load run, by kind.
package enum LoadErrorKind: String, Sendable, Hashable, CaseIterable, Comparable {
    /// A connection could not be opened (refused, unreachable, timed out).
    case connect
    /// Reading failed or the server closed the connection while requests were in flight.
    case read
    /// Writing a request failed.
    case write
    /// A request was not answered within the timeout.
    case timeout
    /// The response's status was not 2xx or 3xx (the response still counts as a request).
    case status
    /// The response was not valid HTTP/1.1.
    case parse

    package static func < (lhs: LoadErrorKind, rhs: LoadErrorKind) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// Counters of one loop's share of a run, merged across loops at the end.
package struct LoadStatistics: Sendable, Hashable {
    /// Responses received in full (whatever their status).
    package var responses = 0
    /// Bytes read from the sockets: heads and bodies, as wrk counts them.
    package var bytesRead = 0
    /// Errors by kind; a failed request counts once.
    package var errors: [LoadErrorKind: Int] = [:]
    /// For each kind, how often each distinct reason occurred (at most `maxReasons` reasons each).
    package var reasons: [LoadErrorKind: [String: Int]] = [:]
    /// Responses by status code, for codes other than 2xx and 3xx.
    package var unexpectedStatuses: [Int: Int] = [:]
    /// Pipelined requests sent again because the server closed the connection (`Connection: close`)
    /// before reaching them.
    package var resentRequests = 0

    /// Distinct reasons kept per kind; later new ones are counted under the kind only.
    static let maxReasons = 8

    package init() {}

    /// The errors of every kind.
    package var errorCount: Int { errors.values.reduce(0, +) }

    /// Counts `count` errors of `kind` for `reason`.
    mutating func note(_ kind: LoadErrorKind, _ reason: String, count: Int = 1) {
        guard count > 0 else { return }
        errors[kind, default: 0] += count
        if reasons[kind, default: [:]][reason] != nil || reasons[kind, default: [:]].count < Self.maxReasons {
            reasons[kind, default: [:]][reason, default: 0] += count
        }
    }

    /// Counts a response with a status other than 2xx or 3xx.
    mutating func noteUnexpectedStatus(_ code: Int) {
        errors[.status, default: 0] += 1
        unexpectedStatuses[code, default: 0] += 1
    }

    /// What these counters gained since `earlier`, an earlier reading of the same counters (an
    /// interval's share). Reasons are kept only where their count grew.
    package func subtracting(_ earlier: LoadStatistics) -> LoadStatistics {
        var difference = LoadStatistics()
        difference.responses = responses - earlier.responses
        difference.bytesRead = bytesRead - earlier.bytesRead
        difference.resentRequests = resentRequests - earlier.resentRequests
        for (kind, count) in errors where count != earlier.errors[kind] ?? 0 {
            difference.errors[kind] = count - (earlier.errors[kind] ?? 0)
        }
        for (kind, table) in reasons {
            for (reason, count) in table where count != earlier.reasons[kind]?[reason] ?? 0 {
                difference.reasons[kind, default: [:]][reason] = count - (earlier.reasons[kind]?[reason] ?? 0)
            }
        }
        for (code, count) in unexpectedStatuses where count != earlier.unexpectedStatuses[code] ?? 0 {
            difference.unexpectedStatuses[code] = count - (earlier.unexpectedStatuses[code] ?? 0)
        }
        return difference
    }

    /// Adds another loop's counters to these.
    package mutating func merge(_ other: LoadStatistics) {
        responses += other.responses
        bytesRead += other.bytesRead
        errors.merge(other.errors, uniquingKeysWith: +)
        for (kind, table) in other.reasons {
            reasons[kind, default: [:]].merge(table, uniquingKeysWith: +)
        }
        unexpectedStatuses.merge(other.unexpectedStatuses, uniquingKeysWith: +)
        resentRequests += other.resentRequests
    }
}

/// Records latencies on one loop; each loop owns one, and they are summarized after the run.
///
/// A value type kept inside its loop's worker: recording takes no lock and crosses no thread.
package protocol LatencyRecorder: SendableMetatype {
    /// What the run hands back for this loop's latencies.
    associatedtype Summary: Sendable
    /// An empty recorder; made on the loop that will own it.
    init()
    /// Records one request's latency.
    mutating func record(nanoseconds: UInt64)
    /// Forgets everything recorded (at the end of the warm-up).
    mutating func reset()
    /// This loop's latencies, for merging with the others.
    func summary() -> Summary
    /// The latencies recorded since the last call (or since measuring started), for an interval
    /// report; `summary()` still includes them.
    mutating func takeInterval() -> Summary
}
