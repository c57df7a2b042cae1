import FoundationEssentials
import Synchronization
@_spi(Locking) import Wire

/// A `RetryPolicy` as an interceptor: it counts each attempt into the retry budget as it is adapted and asks the
/// policy about each failure, with the time from an injected clock and the jitter from an injected generator.
///
/// The interceptor never sleeps: it returns `.retryAfter(delay)` and the manager waits. Its state (the budget and
/// the generator) sits under a `Lock`; no user code runs under it.
public final class RetryInterceptor: Interceptor {
    private struct State {
        var budget: RetryBudget?
        var generator: any RandomNumberGenerator & Sendable
    }

    /// The policy deciding each retry.
    public let policy: RetryPolicy
    private let state: Lock<State>
    private let uptime: @Sendable () -> Duration
    private let wallClock: @Sendable () -> Date

    /// A retry interceptor.
    /// - Parameters:
    ///   - policy: The policy; the default one unless given.
    ///   - budget: The retry budget shared by every request through this interceptor; nil for none. A default
    ///     budget (20 % of requests plus 10 per 10 s) is used unless given.
    ///   - clock: The monotonic clock the budget reads; `ContinuousClock` by default.
    ///   - wallClock: The wall-clock time, for `Retry-After` dates; the system's by default.
    ///   - generator: The randomness for jitter; the system's by default.
    public init<C: Clock>(
        policy: RetryPolicy = RetryPolicy(),
        budget: RetryBudget? = RetryBudget(),
        clock: C = ContinuousClock(),
        wallClock: @escaping @Sendable () -> Date = { Date() },
        generator: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()
    ) where C.Duration == Duration {
        self.policy = policy
        self.state = Lock(State(budget: budget, generator: generator))
        let origin = clock.now
        self.uptime = { origin.duration(to: clock.now) }
        self.wallClock = wallClock
    }

    /// Counts the attempt into the budget and sends the request unchanged.
    /// - Parameter request: The request.
    public func adapt(_ request: ClientRequest) async throws -> ClientRequest {
        let now = uptime()
        state.withLock { $0.budget?.recordRequest(at: now) }
        return request
    }

    /// The policy's decision for this failure.
    /// - Parameters:
    ///   - request: The request as sent.
    ///   - attempt: Which attempt failed, from 1.
    ///   - response: The response, if any.
    ///   - error: Why it failed.
    public func retry(_ request: ClientRequest, attempt: Int, response: ClientResponse?, error: ClientError) async
        -> RetryDecision
    {
        outcome(request, attempt: attempt, response: response, error: error).decision
    }

    /// The policy's verdict for this failure, with its reason (what `retry` returns, before it is reduced to a
    /// decision).
    /// - Parameters:
    ///   - request: The request as sent.
    ///   - attempt: Which attempt failed, from 1.
    ///   - response: The response, if any.
    ///   - error: Why it failed.
    public func outcome(_ request: ClientRequest, attempt: Int, response: ClientResponse?, error: ClientError)
        -> RetryPolicy.Outcome
    {
        let now = uptime()
        let date = wallClock()
        return state.withLock { state in
            var generator = state.generator
            defer { state.generator = generator }
            return policy.evaluate(
                request, attempt: attempt, response: response, error: error, now: now, date: date,
                budget: &state.budget, using: &generator)
        }
    }

    /// How many retries the budget allows now; nil without a budget.
    public var availableRetries: Int? {
        let now = uptime()
        return state.withLock { $0.budget?.available(at: now) }
    }
}
