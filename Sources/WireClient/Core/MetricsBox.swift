import Wire

/// An exchange's metrics as a response or a completion carries them: Wire's record of an exchange that ended (read
/// when asked: it no longer changes), or a snapshot (a cache's response, metrics set by hand). Reading the record
/// only when asked spares every task a copy of the whole snapshot (its addresses, timings and request head) that
/// most callers never look at. Equal and hashed by the metrics it gives.
final class MetricsBox: Sendable, Hashable {
    private enum Source: Sendable {
        case record(HTTPClientMetrics)
        case snapshot(HTTPClientMetrics.Snapshot)
    }

    private let source: Source

    /// The metrics of an exchange whose body ended, read from Wire's record each time they are asked for.
    init(finished record: HTTPClientMetrics) {
        source = .record(record)
    }

    /// Metrics as given.
    init(_ snapshot: HTTPClientMetrics.Snapshot) {
        source = .snapshot(snapshot)
    }

    /// The metrics.
    var value: HTTPClientMetrics.Snapshot {
        switch source {
        case .record(let record): record.snapshot
        case .snapshot(let snapshot): snapshot
        }
    }

    static func == (lhs: MetricsBox, rhs: MetricsBox) -> Bool { lhs === rhs || lhs.value == rhs.value }

    func hash(into hasher: inout Hasher) { hasher.combine(value) }
}
