/// Adapters and retriers run as one interceptor, for a manager, a request, or both combined.
///
/// Precedence:
/// - Adapters run in order, each on the previous one's output; the first that throws ends the chain and its error
///   fails the attempt.
/// - Retriers are asked in order until one decides: the first `.retry`, `.retryAfter` or `.doNotRetryWithError`
///   wins and the retriers after it are not asked; `.doNotRetry` passes the question on. When every retrier says
///   `.doNotRetry`, so does the chain.
/// - Combined with `combining(manager:request:)`, the manager's interceptor comes first on both sides: the
///   request's adapter sees the manager's adaptation, and the request's retrier is asked only when the manager's
///   passes.
public struct InterceptorChain: Interceptor {
    /// The adapters, in the order they run.
    public var adapters: [any RequestAdapter]
    /// The retriers, in the order they are asked.
    public var retriers: [any RequestRetrier]

    /// A chain of these adapters and retriers.
    /// - Parameters:
    ///   - adapters: Run in order.
    ///   - retriers: Asked in order.
    public init(adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = []) {
        self.adapters = adapters
        self.retriers = retriers
    }

    /// A chain in which each interceptor adapts and is asked to retry in the given order.
    /// - Parameter interceptors: The interceptors, first to last.
    public init(interceptors: [any Interceptor]) {
        self.init(adapters: interceptors.map { $0 }, retriers: interceptors.map { $0 })
    }

    /// The chain for one request: the manager's interceptor, then the request's own (either may be absent).
    /// - Parameters:
    ///   - manager: The manager's interceptor.
    ///   - request: The request's interceptor.
    public static func combining(manager: (any Interceptor)?, request: (any Interceptor)?) -> InterceptorChain {
        InterceptorChain(interceptors: [manager, request].compactMap { $0 })
    }

    /// Runs every adapter in order.
    /// - Parameter request: The request as built.
    /// - Throws: The first adapter's error.
    public func adapt(_ request: ClientRequest) async throws -> ClientRequest {
        var adapted = request
        for adapter in adapters { adapted = try await adapter.adapt(adapted) }
        return adapted
    }

    /// The first decision other than `.doNotRetry`, or `.doNotRetry`.
    /// - Parameters:
    ///   - request: The request as sent.
    ///   - attempt: Which attempt failed, from 1.
    ///   - response: The response, if any.
    ///   - error: Why it failed.
    public func retry(_ request: ClientRequest, attempt: Int, response: ClientResponse?, error: ClientError) async
        -> RetryDecision
    {
        for retrier in retriers {
            let decision = await retrier.retry(request, attempt: attempt, response: response, error: error)
            if decision != .doNotRetry { return decision }
        }
        return .doNotRetry
    }
}
