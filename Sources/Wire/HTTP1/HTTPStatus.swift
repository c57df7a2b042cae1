/// An HTTP status code (RFC 9110 §15) with its class.
///
/// Only the number matters on the wire; the reason phrase travels separately in `HTTPResponseHead` because
/// clients SHOULD ignore it (RFC 9112 §4).
public struct HTTPStatus: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The three-digit code.
    public var code: Int

    /// Creates a status from its code.
    /// - Parameter code: A three-digit code; the serializer refuses anything outside 100...999.
    public init(code: Int) {
        self.code = code
    }

    /// The response class, from the first digit (RFC 9110 §15).
    public enum Class: Sendable, Hashable {
        /// 1xx: interim response.
        case informational
        /// 2xx: the request was accepted.
        case successful
        /// 3xx: further action is needed.
        case redirection
        /// 4xx: the client erred.
        case clientError
        /// 5xx, and 600...999 which RFC 9110 §15 says to treat as 5xx.
        case serverError
        /// Anything below 100: not a valid status code.
        case invalid
    }

    /// The class of this status.
    public var responseClass: Class {
        switch code {
        case 100..<200: return .informational
        case 200..<300: return .successful
        case 300..<400: return .redirection
        case 400..<500: return .clientError
        case 500...: return .serverError
        default: return .invalid
        }
    }

    /// Whether this is an interim (1xx) response other than 101, which ends the HTTP/1.1 exchange.
    public var isInterim: Bool { code >= 100 && code < 200 && code != 101 }

    /// Whether a response with this status never has content (RFC 9110 §6.4.1): 1xx, 204 and 304.
    public var forbidsContent: Bool { (code >= 100 && code < 200) || code == 204 || code == 304 }

    /// The code as text.
    public var description: String { String(code) }

    /// Orders statuses by code.
    public static func < (lhs: HTTPStatus, rhs: HTTPStatus) -> Bool { lhs.code < rhs.code }

    /// 100 Continue.
    public static let `continue` = HTTPStatus(code: 100)
    /// 101 Switching Protocols.
    public static let switchingProtocols = HTTPStatus(code: 101)
    /// 103 Early Hints.
    public static let earlyHints = HTTPStatus(code: 103)
    /// 200 OK.
    public static let ok = HTTPStatus(code: 200)
    /// 201 Created.
    public static let created = HTTPStatus(code: 201)
    /// 204 No Content.
    public static let noContent = HTTPStatus(code: 204)
    /// 206 Partial Content.
    public static let partialContent = HTTPStatus(code: 206)
    /// 301 Moved Permanently.
    public static let movedPermanently = HTTPStatus(code: 301)
    /// 302 Found.
    public static let found = HTTPStatus(code: 302)
    /// 304 Not Modified.
    public static let notModified = HTTPStatus(code: 304)
    /// 400 Bad Request.
    public static let badRequest = HTTPStatus(code: 400)
    /// 404 Not Found.
    public static let notFound = HTTPStatus(code: 404)
    /// 413 Content Too Large.
    public static let contentTooLarge = HTTPStatus(code: 413)
    /// 414 URI Too Long.
    public static let uriTooLong = HTTPStatus(code: 414)
    /// 431 Request Header Fields Too Large.
    public static let requestHeaderFieldsTooLarge = HTTPStatus(code: 431)
    /// 500 Internal Server Error.
    public static let internalServerError = HTTPStatus(code: 500)
    /// 501 Not Implemented.
    public static let notImplemented = HTTPStatus(code: 501)
    /// 505 HTTP Version Not Supported.
    public static let httpVersionNotSupported = HTTPStatus(code: 505)

    /// The usual reason phrase for well-known codes, or an empty string.
    public var defaultReasonPhrase: String {
        switch code {
        case 100: return "Continue"
        case 101: return "Switching Protocols"
        case 103: return "Early Hints"
        case 200: return "OK"
        case 201: return "Created"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 404: return "Not Found"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 505: return "HTTP Version Not Supported"
        default: return ""
        }
    }
}
