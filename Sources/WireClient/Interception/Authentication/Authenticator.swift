/// A credential an `AuthenticationInterceptor` applies and refreshes: an OAuth token pair, a signed session.
public protocol AuthenticationCredential: Sendable {
    /// Whether the credential must be refreshed before it is used again (it expires within a margin, say); checked
    /// before each request is adapted.
    var requiresRefresh: Bool { get }
}

/// How one kind of credential is applied, refreshed and recognised (Alamofire's `Authenticator`).
///
/// The interceptor calls these outside its lock, from any task.
public protocol Authenticator: Sendable {
    /// The credential this authenticator handles.
    associatedtype Credential: AuthenticationCredential

    /// Puts the credential on the request (an `Authorization` header, usually).
    /// - Parameters:
    ///   - credential: The credential.
    ///   - request: The request to authenticate.
    func apply(_ credential: Credential, to request: inout ClientRequest)

    /// A fresh credential in place of `credential`. Called once however many requests need it at the same time.
    /// - Parameter credential: The credential that expired or was refused.
    /// - Throws: Any error; every request waiting on this refresh then fails with an `AuthenticationError` of
    ///   reason `.refreshFailed` holding it.
    func refresh(_ credential: Credential) async throws -> Credential

    /// Whether the failure means the credential was refused (by default: the response is 401).
    /// - Parameters:
    ///   - request: The request as sent.
    ///   - response: The response, if any.
    ///   - error: The failure.
    func didRequest(
        _ request: ClientRequest, with response: ClientResponse?,
        failDueToAuthenticationError error: ClientError
    ) -> Bool

    /// Whether `request` was sent with `credential` (and not with one it has since replaced): when not, a refused
    /// request is retried with the current credential without another refresh.
    /// - Parameters:
    ///   - request: The request as sent.
    ///   - credential: The current credential.
    func isRequest(_ request: ClientRequest, authenticatedWith credential: Credential) -> Bool
}

extension Authenticator {
    /// A 401 response means the credential was refused.
    public func didRequest(
        _ request: ClientRequest, with response: ClientResponse?,
        failDueToAuthenticationError error: ClientError
    ) -> Bool {
        response?.statusCode == 401
    }
}

/// Why an `AuthenticationInterceptor` could not authenticate a request.
public struct AuthenticationError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Hashable {
        /// The interceptor has no credential to apply or refresh.
        case missingCredential
        /// More refreshes than the refresh window allows: the server refuses even fresh credentials.
        case excessiveRefresh
        /// `Authenticator.refresh` threw (the error is `underlying`).
        case refreshFailed
    }

    /// What went wrong.
    public var reason: Reason
    /// The refresh's error, for `.refreshFailed`.
    public var underlying: (any Error)?

    /// An error.
    /// - Parameters:
    ///   - reason: What went wrong.
    ///   - underlying: The refresh's error.
    public init(_ reason: Reason, underlying: (any Error)? = nil) {
        self.reason = reason
        self.underlying = underlying
    }

    /// The reason, and the refresh's error when there is one.
    public var description: String {
        "AuthenticationError.\(reason)" + (underlying.map { ": \($0)" } ?? "")
    }
}
