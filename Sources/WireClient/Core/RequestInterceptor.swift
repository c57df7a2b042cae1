/// What a retrier decided about a failed request (Alamofire's `RetryResult`).
public enum RetryDecision: Sendable, Equatable {
    /// Do not retry; the failure stands. In a chain, the next retrier is asked.
    case doNotRetry
    /// Retry at once.
    case retry
    /// Retry after this delay.
    case retryAfter(Duration)
    /// Do not retry, and fail with this error instead of the original one.
    case doNotRetryWithError(ClientError)

    /// Whether the request is sent again.
    public var retries: Bool {
        switch self {
        case .retry, .retryAfter: true
        case .doNotRetry, .doNotRetryWithError: false
        }
    }
}

/// Changes a request before each attempt is sent: adds a credential, a header, a signature.
///
/// A manager calls `adapt` before every attempt, retries included, so an adapter sees the request as the caller
/// built it each time and may apply a credential refreshed since the last attempt.
public protocol RequestAdapter: Sendable {
    /// The request to send instead of `request`.
    /// - Parameter request: The request as built (or as adapted by the adapters before this one in a chain).
    /// - Throws: Any error; the attempt is not sent and the task fails with it.
    func adapt(_ request: ClientRequest) async throws -> ClientRequest
}

/// Decides whether a failed attempt is sent again, and when.
public protocol RequestRetrier: Sendable {
    /// The decision for one failed attempt.
    /// - Parameters:
    ///   - request: The request as it was sent (adapted).
    ///   - attempt: Which attempt failed: 1 for the first, 2 for the first retry, and so on.
    ///   - response: The response, when one was received (a status failure always has one).
    ///   - error: Why the attempt failed.
    func retry(_ request: ClientRequest, attempt: Int, response: ClientResponse?, error: ClientError) async
        -> RetryDecision
}

/// An adapter and a retrier in one (Alamofire's `RequestInterceptor`); each side defaults to doing nothing.
public protocol Interceptor: RequestAdapter, RequestRetrier {}

extension Interceptor {
    /// Sends the request unchanged.
    public func adapt(_ request: ClientRequest) async throws -> ClientRequest { request }

    /// Never retries.
    public func retry(_ request: ClientRequest, attempt: Int, response: ClientResponse?, error: ClientError) async
        -> RetryDecision
    {
        .doNotRetry
    }
}

/// An adapter made of a closure.
public struct Adapter: Interceptor {
    private let body: @Sendable (ClientRequest) async throws -> ClientRequest

    /// An adapter running `body` on each request.
    /// - Parameter body: Returns the request to send, or throws to fail the attempt.
    public init(_ body: @escaping @Sendable (ClientRequest) async throws -> ClientRequest) { self.body = body }

    /// The request `body` returns.
    public func adapt(_ request: ClientRequest) async throws -> ClientRequest { try await body(request) }
}

/// A retrier made of a closure.
public struct Retrier: Interceptor {
    private let body: @Sendable (ClientRequest, Int, ClientResponse?, ClientError) async -> RetryDecision

    /// A retrier asking `body` about each failed attempt (request, attempt, response, error).
    /// - Parameter body: Returns the decision.
    public init(_ body: @escaping @Sendable (ClientRequest, Int, ClientResponse?, ClientError) async -> RetryDecision) {
        self.body = body
    }

    /// The decision `body` returns.
    public func retry(_ request: ClientRequest, attempt: Int, response: ClientResponse?, error: ClientError) async
        -> RetryDecision
    {
        await body(request, attempt, response, error)
    }
}
