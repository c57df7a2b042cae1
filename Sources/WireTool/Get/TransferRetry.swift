import FoundationEssentials
import Wire
import WireClient

/// `--retry N` with curl's meaning, decided by WireClient's `RetryPolicy`:
/// - transient failures are timeouts (exit 28) and unresolvable hosts (6, which curl retries as a timeout), a refused
///   connection (7) with `--retry-connrefused`, and the responses 408, 429, 500, 502, 503 and 504 (with or without
///   `--fail`); with `--retry-all-errors`, every failure (a 404 only with `--fail`, since without it a 404 is an
///   answer, not a failure);
/// - every method is retried, as curl does;
/// - the wait doubles from 1 second up to 10 minutes, or is `--retry-delay` every time; a `Retry-After` on the
///   response (seconds or an HTTP-date) sets it instead, however long;
/// - with `--retry-max-time`, as curl 7.88 counts it: a retry is made only while the time since the first attempt is
///   under the limit (its wait is not added, so the last retry may start after the limit); a wait the server's
///   `Retry-After` asks for is added (to the whole seconds elapsed, as curl does), and when the two exceed the limit
///   the retries end with curl's warning (`stopWarning`).
///
/// Before each retry, curl's warning on standard error (unless `-s`):
/// `Warning: Problem : HTTP error. Will retry in 1 seconds. 2 retries left.`
package struct TransferRetry {
    /// A retry to make.
    package struct Retry: Equatable {
        /// How long to wait first.
        package var delay: Duration
        /// curl's warning line, with its line end.
        package var warning: String
    }

    /// The policy built from the command line.
    let policy: RetryPolicy
    private let maxTime: Duration?
    private let started: ContinuousClock.Instant
    /// The attempt in flight, from 1.
    private(set) var attempt = 1
    /// curl's warning when the last decision ended the retries because the server's `Retry-After` would run past
    /// `--retry-max-time` (with its line ends, wrapped as curl wraps it); nil otherwise.
    package private(set) var stopWarning: String?

    /// The retry state of one URL, started now.
    package init(_ options: FetchOptions.RetryOptions, now: ContinuousClock.Instant = .now) {
        var errorCodes: Set<ClientError.Code> = [.timedOut, .cannotFindHost]
        if options.connectionRefused { errorCodes.insert(.cannotConnectToHost) }
        policy = RetryPolicy(
            maximumRetries: options.count,
            baseDelay: options.delay ?? .seconds(1),
            multiplier: options.delay == nil ? 2 : 1,
            maximumDelay: max(options.delay ?? .zero, .seconds(600)),
            jitter: .none,
            retryableMethods: nil,
            retryableStatusCodes: RetryPolicy.transientStatusCodes,
            retryableErrorCodes: errorCodes,
            retriesAllErrors: options.allErrors,
            maximumRetryAfter: .seconds(Int64.max / 4))
        maxTime = options.maxTime
        started = now
    }

    /// Whether any retry may happen at all (`--retry` above 0).
    var isEnabled: Bool { policy.maximumRetries > 0 }

    /// The retry for a response whose status is transient, or nil to keep the response.
    package mutating func retry(url: String, status: Int, headers: HTTPHeaders, now: ContinuousClock.Instant = .now) -> Retry? {
        guard isEnabled, policy.retryableStatusCodes.contains(status) else { return nil }
        var response = ClientResponse(url: Self.url(url), statusCode: status)
        response.headers = headers
        return decide(
            url: url, response: response, error: ClientError(.unacceptableStatusCode(status), response: response),
            problem: ": HTTP error", now: now)
    }

    /// The retry for a failed transfer, or nil to report the failure.
    package mutating func retry(url: String, failure: TransferFailure, now: ContinuousClock.Instant = .now) -> Retry? {
        guard isEnabled else { return nil }
        let code = Self.code(for: failure.status)
        let problem =
            switch code {
            case _ where !policy.retryableErrorCodes.contains(code): "(retrying all errors)"
            case .cannotConnectToHost: ": connection refused"
            default: ": timeout"
            }
        return decide(url: url, response: nil, error: ClientError(code), problem: problem, now: now)
    }

    private mutating func decide(
        url: String, response: ClientResponse?, error: ClientError, problem: String,
        now: ContinuousClock.Instant
    ) -> Retry? {
        stopWarning = nil
        var budget: RetryBudget? = nil
        var generator = SystemRandomNumberGenerator()
        let elapsed = started.duration(to: now)
        // curl 7.88 looks only at the time gone so far; the wait comes after.
        if let maxTime, elapsed >= maxTime { return nil }
        let outcome = policy.evaluate(
            ClientRequest(url: Self.url(url)), attempt: attempt, response: response,
            error: error, now: elapsed, date: Date(), budget: &budget, using: &generator)
        guard case .retry(let delay, let source) = outcome else { return nil }
        // Except for a server's Retry-After, added to the whole seconds elapsed (curl's integer division).
        if let maxTime, source == .retryAfter, delay > .zero, .seconds(elapsed.components.seconds) + delay > maxTime {
            stopWarning = CurlWarning.text(
                "The Retry-After: time would make this command line exceed the maximum allowed time for retries.")
            return nil
        }
        let left = policy.maximumRetries - attempt + 1
        attempt += 1
        return Retry(
            delay: delay,
            warning: "Warning: Problem \(problem). Will retry in \(Self.seconds(delay)) seconds. "
                + "\(left) retries left.\n")
    }

    /// The WireClient code standing for a curl exit status; only the policy reads it, and every status that is not
    /// transient maps to a code outside the transient set.
    static func code(for status: Int32) -> ClientError.Code {
        switch status {
        case ExitStatus.timedOut: .timedOut
        case ExitStatus.unknownHost: .cannotFindHost
        case ExitStatus.couldNotConnect: .cannotConnectToHost
        case ExitStatus.malformedURL: .badURL
        case ExitStatus.tooManyRedirects: .tooManyRedirects
        case ExitStatus.writeError: .cannotWriteToFile
        case ExitStatus.readError: .fileNotReachable
        case ExitStatus.tooLarge: .responseTooLarge
        case ExitStatus.tlsHandshake, ExitStatus.localCertificate: .secureConnectionFailed
        case ExitStatus.peerVerification, ExitStatus.pinMismatch: .serverCertificateUntrusted
        case ExitStatus.aborted: .cancelled
        case ExitStatus.httpError: .unacceptableStatusCode(400)
        default: .networkConnectionLost
        }
    }

    /// Whole seconds as a whole number, as curl prints them; otherwise up to three decimals.
    static func seconds(_ delay: Duration) -> String {
        let (whole, attoseconds) = delay.components
        let milliseconds = attoseconds / 1_000_000_000_000_000
        if milliseconds == 0 { return String(whole) }
        var fraction = String(milliseconds)
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(whole).\(fraction)"
    }

    private static func url(_ text: String) -> URL {
        URL(string: text) ?? URL(string: "http://invalid/")!
    }
}
