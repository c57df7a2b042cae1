import FoundationEssentials

/// Every failure WireClient reports: what went wrong (`code`), for which URL, with the response and body that
/// were received, if any, and the lower-level cause (a Wire `HTTPClientError`, a `TLSError`, an I/O error or a parse
/// error).
///
/// Two errors are equal when their codes are equal: the payload is context, the code is the rule.
public struct ClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong; each code has the NSURLError number AFNetworking users know (`urlErrorCode`).
    public var code: Code {
        get { fields.code }
        set { fields.code = newValue }
    }
    /// The URL of the request that failed.
    public var failingURL: URL? {
        get { fields.failingURL }
        set { fields.failingURL = newValue }
    }
    /// The response, when one was received (validation and parse errors always have it).
    public var response: ClientResponse? {
        get { fields.response }
        set { fields.response = newValue }
    }
    /// The raw body received with `response` (possibly empty), so a failed request's body stays readable.
    public var responseData: Data? {
        get { fields.responseData }
        set { fields.responseData = newValue }
    }
    /// The cause: a Wire, TLS, I/O or parse error, or another `ClientError` (a content-type error under a status
    /// error).
    public var underlying: (any Error)? {
        get { fields.underlying }
        set { fields.underlying = newValue }
    }
    /// A sentence saying why, for people (logs, `description`).
    public var failureReason: String? {
        get { fields.failureReason }
        set { fields.failureReason = newValue }
    }

    private struct Fields: Sendable {
        var code: Code
        var failingURL: URL?
        var response: ClientResponse?
        var responseData: Data?
        var underlying: (any Error)?
        var failureReason: String?
    }

    /// The fields behind one reference: an error is copied wherever a task's state is (`ClientError?` in every
    /// outcome and check), and inline it would be some 500 bytes. Setting a field makes a new box.
    private final class Storage: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private var storage: Storage

    private var fields: Fields {
        get { storage.fields }
        set { storage = Storage(newValue) }
    }

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
        storage = Storage(
            Fields(
                code: code, failingURL: failingURL ?? response?.url, response: response,
                responseData: responseData, underlying: underlying, failureReason: failureReason))
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
