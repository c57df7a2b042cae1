import FoundationEssentials

/// Every failure WireClient reports (§14.1): what went wrong (`code`), for which URL, with the response and body that
/// were received, if any, and the lower-level cause (a Wire `HTTPClientError`, a `TLSError`, an I/O error or a parse
/// error).
///
/// Two errors are equal when their codes are equal: the payload is context, the code is the rule.
public struct ClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong; each code has the NSURLError number AFNetworking users know (`urlErrorCode`).
    public var code: Code
    /// The URL of the request that failed.
    public var failingURL: URL?
    /// The response, when one was received (validation and parse errors always have it).
    public var response: ClientResponse?
    /// The raw body received with `response` (possibly empty), so a failed request's body stays readable.
    public var responseData: Data?
    /// The cause: a Wire, TLS, I/O or parse error, or another `ClientError` (a content-type error under a status
    /// error).
    public var underlying: (any Error)?
    /// A sentence saying why, for people (logs, `description`).
    public var failureReason: String?

    /// Creates an error.
    /// - Parameters:
    ///   - code: What went wrong.
    ///   - failingURL: The URL of the failing request.
    ///   - response: The response, if one was received.
    ///   - responseData: The body received with `response`.
    ///   - underlying: The lower-level cause.
    ///   - failureReason: Why, for people; the code's own sentence when nil.
    public init(
        _ code: Code,
        failingURL: URL? = nil,
        response: ClientResponse? = nil,
        responseData: Data? = nil,
        underlying: (any Error)? = nil,
        failureReason: String? = nil
    ) {
        self.code = code
        self.failingURL = failingURL ?? response?.url
        self.response = response
        self.responseData = responseData
        self.underlying = underlying
        self.failureReason = failureReason
    }

    /// The NSURLError number of `code` (NSURLErrorDomain), or −1 for WireClient's own codes.
    public var urlErrorCode: Int { code.urlErrorCode }

    /// Equality compares `code` only.
    public static func == (lhs: ClientError, rhs: ClientError) -> Bool {
        lhs.code == rhs.code
    }

    /// The rule, the URL and the chain of causes.
    public var description: String {
        var text = "ClientError.\(code) (\(urlErrorCode)): \(failureReason ?? code.reason)"
        if let failingURL { text += " [\(failingURL.absoluteString)]" }
        if let underlying { text += "; underlying: \(underlying)" }
        return text
    }
}
