import FoundationEssentials

/// When a failed request is sent again: a pure decision with exponential backoff and jitter, honouring
/// `Retry-After`, within a retry count and, optionally, a retry budget.
///
/// A value with no clock and no sleeping: `evaluate` takes the present (a monotonic reading for the budget, the wall
/// clock for `Retry-After` dates) and a random number generator, and returns how long to wait. `RetryInterceptor` is
/// the shell that feeds it a clock and waits.
///
/// The rules, in order:
/// 1. The method must be retryable (by default the idempotent ones: GET HEAD PUT DELETE OPTIONS TRACE, compared
///    case-insensitively), else `.methodNotRetryable`.
/// 2. The failure must be transient: the response's status (or the status of an `.unacceptableStatusCode` error)
///    is in `retryableStatusCodes`, or the error's code is in `retryableErrorCodes`, or `retriesAllErrors` is set;
///    else `.notTransient`.
/// 3. `attempt` (1 for the first failure) must be at most `maximumRetries`, else `.retriesExhausted`.
/// 4. The delay: a decodable `Retry-After` on the response, when `honorsRetryAfter`, taken as is (no jitter) and
///    refused as `.retryAfterTooLong` when longer than `maximumRetryAfter` (by default `maximumDelay`); otherwise (no field, or one that cannot be
///    decoded) the backoff `baseDelay × multiplier^(attempt − 1)`, capped at `maximumDelay`, then jittered.
/// 5. The budget, when given, must allow one more retry (which is then taken), else `.budgetExhausted`.
public struct RetryPolicy: Sendable {
    /// How the backoff delay is randomised, so that clients failing together do not retry together.
    public enum Jitter: Sendable, Hashable {
        /// The backoff as computed.
        case none
        /// Uniform in [0, backoff] ("full jitter"): spreads retries the most; the default.
        case full
        /// Uniform in [backoff / 2, backoff] ("equal jitter"): spreads them while keeping half the wait.
        case equal
    }

    /// Why a failure is not retried.
    public enum StopReason: Sendable, Hashable {
        /// The method is not in `retryableMethods`.
        case methodNotRetryable
        /// Neither the status nor the error is transient.
        case notTransient
        /// `maximumRetries` retries were made already.
        case retriesExhausted
        /// The retry budget is spent.
        case budgetExhausted
        /// The server's `Retry-After` asks for a longer wait than `maximumDelay`.
        case retryAfterTooLong
    }

    /// Where a retry's delay came from.
    public enum DelaySource: Sendable, Hashable {
        /// The exponential backoff (jittered).
        case backoff
        /// The response's `Retry-After`.
        case retryAfter
    }

    /// The policy's verdict, with its reason.
    public enum Outcome: Sendable, Hashable {
        /// Retry after `delay`.
        case retry(after: Duration, source: DelaySource)
        /// Do not retry.
        case stop(StopReason)

        /// The verdict as a retrier returns it: `.retryAfter(delay)` or `.doNotRetry`.
        public var decision: RetryDecision {
            switch self {
            case .retry(let delay, _): .retryAfter(delay)
            case .stop: .doNotRetry
            }
        }
    }

    /// The idempotent methods (RFC 9110 §9.2.2), retried by default.
    public static let idempotentMethods: Set<String> = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"]
    /// The statuses retried by default: request timeout, too many requests, and the server errors that say "later".
    public static let transientStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504]
    /// The errors retried by default: timeouts and failures to reach or keep the server.
    public static let transientErrorCodes: Set<ClientError.Code> = [
        .timedOut, .cannotConnectToHost, .networkConnectionLost, .cannotFindHost, .notConnectedToInternet,
    ]

    /// The most retries of one request (not counting the first attempt).
    public var maximumRetries: Int
    /// The first retry's backoff.
    public var baseDelay: Duration
    /// The factor between one backoff and the next (1 for a fixed delay).
    public var multiplier: Double
    /// The longest single delay: backoff is capped here; a longer `Retry-After` stops retrying (unless
    /// `maximumRetryAfter` says otherwise).
    public var maximumDelay: Duration
    /// How the backoff is randomised.
    public var jitter: Jitter
    /// The methods retried (upper case); nil retries every method.
    public var retryableMethods: Set<String>?
    /// The statuses retried.
    public var retryableStatusCodes: Set<Int>
    /// The error codes retried.
    public var retryableErrorCodes: Set<ClientError.Code>
    /// Whether every failure is transient (curl's `--retry-all-errors`); the method rule still applies.
    public var retriesAllErrors: Bool
    /// Whether a response's `Retry-After` sets the delay.
    public var honorsRetryAfter: Bool
    /// The longest `Retry-After` honoured (a longer one stops retrying); nil for `maximumDelay`. curl, for one,
    /// caps its backoff at 10 minutes but waits as long as the server asks.
    public var maximumRetryAfter: Duration?

    /// A policy; the defaults retry an idempotent request twice, after about 0.5 s and 1 s (full jitter), up to
    /// 30 s for one delay.
    /// - Parameters:
    ///   - maximumRetries: The most retries; 2 by default.
    ///   - baseDelay: The first backoff; 0.5 s by default.
    ///   - multiplier: The factor between backoffs, 1 or more; 2 by default.
    ///   - maximumDelay: The cap on one delay; 30 s by default.
    ///   - jitter: The randomisation; `.full` by default.
    ///   - retryableMethods: The methods retried; the idempotent ones by default, nil for all.
    ///   - retryableStatusCodes: The statuses retried; `transientStatusCodes` by default.
    ///   - retryableErrorCodes: The error codes retried; `transientErrorCodes` by default.
    ///   - retriesAllErrors: Whether every failure is transient; false by default.
    ///   - honorsRetryAfter: Whether `Retry-After` sets the delay; true by default.
    ///   - maximumRetryAfter: The longest `Retry-After` honoured; nil (the default) for `maximumDelay`.
    public init(
        maximumRetries: Int = 2,
        baseDelay: Duration = .milliseconds(500),
        multiplier: Double = 2,
        maximumDelay: Duration = .seconds(30),
        jitter: Jitter = .full,
        retryableMethods: Set<String>? = RetryPolicy.idempotentMethods,
        retryableStatusCodes: Set<Int> = RetryPolicy.transientStatusCodes,
        retryableErrorCodes: Set<ClientError.Code> = RetryPolicy.transientErrorCodes,
        retriesAllErrors: Bool = false,
        honorsRetryAfter: Bool = true,
        maximumRetryAfter: Duration? = nil
    ) {
        precondition(maximumRetries >= 0, "maximumRetries is 0 or more")
        precondition(baseDelay >= .zero && maximumDelay >= .zero, "retry delays are 0 or more")
        precondition(multiplier >= 1 && multiplier.isFinite, "the backoff multiplier is a finite number, 1 or more")
        self.maximumRetries = maximumRetries
        self.baseDelay = baseDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.jitter = jitter
        self.retryableMethods = retryableMethods.map { Set($0.map { $0.uppercased() }) }
        self.retryableStatusCodes = retryableStatusCodes
        self.retryableErrorCodes = retryableErrorCodes
        self.retriesAllErrors = retriesAllErrors
        self.honorsRetryAfter = honorsRetryAfter
        self.maximumRetryAfter = maximumRetryAfter
    }

    /// Whether the failure is one this policy retries, whatever the count, delay and budget (rules 1 and 2).
    /// - Parameters:
    ///   - method: The request's method.
    ///   - response: The response, if any.
    ///   - error: The failure.
    public func isRetryable(method: String, response: ClientResponse?, error: ClientError) -> Bool {
        stopReason(method: method, response: response, error: error) == nil
    }

    /// The verdict for one failed attempt.
    /// - Parameters:
    ///   - request: The request as sent.
    ///   - attempt: Which attempt failed, 1 for the first.
    ///   - response: The response, if one was received.
    ///   - error: Why the attempt failed.
    ///   - now: The present on the budget's monotonic timeline (unused without a budget).
    ///   - date: The wall-clock present, for `Retry-After` dates.
    ///   - budget: The retry budget to draw on, or nil for none; one retry is withdrawn when the verdict is retry.
    ///   - generator: The randomness for jitter.
    public func evaluate(
        _ request: ClientRequest, attempt: Int, response: ClientResponse?, error: ClientError,
        now: Duration, date: Date, budget: inout RetryBudget?, using generator: inout some RandomNumberGenerator
    ) -> Outcome {
        if let reason = stopReason(method: request.method, response: response, error: error) { return .stop(reason) }
        guard attempt <= maximumRetries else { return .stop(.retriesExhausted) }
        let outcome: Outcome
        if honorsRetryAfter, let field = response?.value(forHTTPHeaderField: "Retry-After"),
            let retryAfter = RetryAfter(field)
        {
            let delay = retryAfter.delay(from: date)
            guard delay <= maximumRetryAfter ?? maximumDelay else { return .stop(.retryAfterTooLong) }
            outcome = .retry(after: delay, source: .retryAfter)
        } else {
            outcome = .retry(after: jittered(backoff(attempt: attempt), using: &generator), source: .backoff)
        }
        if budget != nil, !budget!.withdraw(at: now) { return .stop(.budgetExhausted) }
        return outcome
    }

    /// The backoff before retry number `attempt` (1 for the first retry), before jitter: `baseDelay ×
    /// multiplier^(attempt − 1)`, capped at `maximumDelay`.
    /// - Parameter attempt: Which attempt failed, from 1.
    public func backoff(attempt: Int) -> Duration {
        let factor = wholePower(multiplier, Double(max(attempt, 1) - 1))
        let base = Self.seconds(baseDelay)
        let seconds = base * factor
        guard seconds.isFinite, seconds < Self.seconds(maximumDelay) else { return maximumDelay }
        return .seconds(seconds)
    }

    private func jittered(_ delay: Duration, using generator: inout some RandomNumberGenerator) -> Duration {
        let seconds = Self.seconds(delay)
        switch jitter {
        case .none: return delay
        case .full: return .seconds(Double.random(in: 0...1, using: &generator) * seconds)
        case .equal: return .seconds(seconds / 2 + Double.random(in: 0...1, using: &generator) * seconds / 2)
        }
    }

    private func stopReason(method: String, response: ClientResponse?, error: ClientError) -> StopReason? {
        if let retryableMethods, !retryableMethods.contains(method.uppercased()) { return .methodNotRetryable }
        if retriesAllErrors { return nil }
        if let status = response?.statusCode, retryableStatusCodes.contains(status) { return nil }
        if case .unacceptableStatusCode(let status) = error.code, retryableStatusCodes.contains(status) { return nil }
        return retryableErrorCodes.contains(error.code) ? nil : .notTransient
    }

    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}

/// `base^exponent` for a whole exponent (all backoff needs), by repeated squaring; exponents past 4096 saturate.
private func wholePower(_ base: Double, _ exponent: Double) -> Double {
    var result = 1.0
    var factor = base
    var remaining = Int(min(exponent, 4096))
    while remaining > 0 {
        if remaining & 1 == 1 { result *= factor }
        factor *= factor
        remaining >>= 1
    }
    return result
}
