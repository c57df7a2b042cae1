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

    /// 100 Continue (RFC 9110 §15.2.1).
    public static let `continue` = HTTPStatus(code: 100)
    /// 101 Switching Protocols (RFC 9110 §15.2.2).
    public static let switchingProtocols = HTTPStatus(code: 101)
    /// 102 Processing (RFC 2518).
    public static let processing = HTTPStatus(code: 102)
    /// 103 Early Hints (RFC 8297).
    public static let earlyHints = HTTPStatus(code: 103)
    /// 200 OK (RFC 9110 §15.3.1).
    public static let ok = HTTPStatus(code: 200)
    /// 201 Created (RFC 9110 §15.3.2).
    public static let created = HTTPStatus(code: 201)
    /// 202 Accepted (RFC 9110 §15.3.3).
    public static let accepted = HTTPStatus(code: 202)
    /// 203 Non-Authoritative Information (RFC 9110 §15.3.4).
    public static let nonAuthoritativeInformation = HTTPStatus(code: 203)
    /// 204 No Content (RFC 9110 §15.3.5).
    public static let noContent = HTTPStatus(code: 204)
    /// 205 Reset Content (RFC 9110 §15.3.6).
    public static let resetContent = HTTPStatus(code: 205)
    /// 206 Partial Content (RFC 9110 §15.3.7).
    public static let partialContent = HTTPStatus(code: 206)
    /// 207 Multi-Status (RFC 4918).
    public static let multiStatus = HTTPStatus(code: 207)
    /// 208 Already Reported (RFC 5842).
    public static let alreadyReported = HTTPStatus(code: 208)
    /// 226 IM Used (RFC 3229).
    public static let imUsed = HTTPStatus(code: 226)
    /// 300 Multiple Choices (RFC 9110 §15.4.1).
    public static let multipleChoices = HTTPStatus(code: 300)
    /// 301 Moved Permanently (RFC 9110 §15.4.2).
    public static let movedPermanently = HTTPStatus(code: 301)
    /// 302 Found (RFC 9110 §15.4.3).
    public static let found = HTTPStatus(code: 302)
    /// 303 See Other (RFC 9110 §15.4.4).
    public static let seeOther = HTTPStatus(code: 303)
    /// 304 Not Modified (RFC 9110 §15.4.5).
    public static let notModified = HTTPStatus(code: 304)
    /// 305 Use Proxy (RFC 9110 §15.4.6, deprecated).
    public static let useProxy = HTTPStatus(code: 305)
    /// 307 Temporary Redirect (RFC 9110 §15.4.8).
    public static let temporaryRedirect = HTTPStatus(code: 307)
    /// 308 Permanent Redirect (RFC 9110 §15.4.9).
    public static let permanentRedirect = HTTPStatus(code: 308)
    /// 400 Bad Request (RFC 9110 §15.5.1).
    public static let badRequest = HTTPStatus(code: 400)
    /// 401 Unauthorized (RFC 9110 §15.5.2).
    public static let unauthorized = HTTPStatus(code: 401)
    /// 402 Payment Required (RFC 9110 §15.5.3).
    public static let paymentRequired = HTTPStatus(code: 402)
    /// 403 Forbidden (RFC 9110 §15.5.4).
    public static let forbidden = HTTPStatus(code: 403)
    /// 404 Not Found (RFC 9110 §15.5.5).
    public static let notFound = HTTPStatus(code: 404)
    /// 405 Method Not Allowed (RFC 9110 §15.5.6).
    public static let methodNotAllowed = HTTPStatus(code: 405)
    /// 406 Not Acceptable (RFC 9110 §15.5.7).
    public static let notAcceptable = HTTPStatus(code: 406)
    /// 407 Proxy Authentication Required (RFC 9110 §15.5.8).
    public static let proxyAuthenticationRequired = HTTPStatus(code: 407)
    /// 408 Request Timeout (RFC 9110 §15.5.9).
    public static let requestTimeout = HTTPStatus(code: 408)
    /// 409 Conflict (RFC 9110 §15.5.10).
    public static let conflict = HTTPStatus(code: 409)
    /// 410 Gone (RFC 9110 §15.5.11).
    public static let gone = HTTPStatus(code: 410)
    /// 411 Length Required (RFC 9110 §15.5.12).
    public static let lengthRequired = HTTPStatus(code: 411)
    /// 412 Precondition Failed (RFC 9110 §15.5.13).
    public static let preconditionFailed = HTTPStatus(code: 412)
    /// 413 Content Too Large (RFC 9110 §15.5.14).
    public static let contentTooLarge = HTTPStatus(code: 413)
    /// 414 URI Too Long (RFC 9110 §15.5.15).
    public static let uriTooLong = HTTPStatus(code: 414)
    /// 415 Unsupported Media Type (RFC 9110 §15.5.16).
    public static let unsupportedMediaType = HTTPStatus(code: 415)
    /// 416 Range Not Satisfiable (RFC 9110 §15.5.17).
    public static let rangeNotSatisfiable = HTTPStatus(code: 416)
    /// 417 Expectation Failed (RFC 9110 §15.5.18).
    public static let expectationFailed = HTTPStatus(code: 417)
    /// 421 Misdirected Request (RFC 9110 §15.5.20).
    public static let misdirectedRequest = HTTPStatus(code: 421)
    /// 422 Unprocessable Content (RFC 9110 §15.5.21).
    public static let unprocessableContent = HTTPStatus(code: 422)
    /// 423 Locked (RFC 4918).
    public static let locked = HTTPStatus(code: 423)
    /// 424 Failed Dependency (RFC 4918).
    public static let failedDependency = HTTPStatus(code: 424)
    /// 425 Too Early (RFC 8470).
    public static let tooEarly = HTTPStatus(code: 425)
    /// 426 Upgrade Required (RFC 9110 §15.5.22).
    public static let upgradeRequired = HTTPStatus(code: 426)
    /// 428 Precondition Required (RFC 6585).
    public static let preconditionRequired = HTTPStatus(code: 428)
    /// 429 Too Many Requests (RFC 6585).
    public static let tooManyRequests = HTTPStatus(code: 429)
    /// 431 Request Header Fields Too Large (RFC 6585).
    public static let requestHeaderFieldsTooLarge = HTTPStatus(code: 431)
    /// 451 Unavailable For Legal Reasons (RFC 7725).
    public static let unavailableForLegalReasons = HTTPStatus(code: 451)
    /// 500 Internal Server Error (RFC 9110 §15.6.1).
    public static let internalServerError = HTTPStatus(code: 500)
    /// 501 Not Implemented (RFC 9110 §15.6.2).
    public static let notImplemented = HTTPStatus(code: 501)
    /// 502 Bad Gateway (RFC 9110 §15.6.3).
    public static let badGateway = HTTPStatus(code: 502)
    /// 503 Service Unavailable (RFC 9110 §15.6.4).
    public static let serviceUnavailable = HTTPStatus(code: 503)
    /// 504 Gateway Timeout (RFC 9110 §15.6.5).
    public static let gatewayTimeout = HTTPStatus(code: 504)
    /// 505 HTTP Version Not Supported (RFC 9110 §15.6.6).
    public static let httpVersionNotSupported = HTTPStatus(code: 505)
    /// 506 Variant Also Negotiates (RFC 2295).
    public static let variantAlsoNegotiates = HTTPStatus(code: 506)
    /// 507 Insufficient Storage (RFC 4918).
    public static let insufficientStorage = HTTPStatus(code: 507)
    /// 508 Loop Detected (RFC 5842).
    public static let loopDetected = HTTPStatus(code: 508)
    /// 510 Not Extended (RFC 2774, obsoleted).
    public static let notExtended = HTTPStatus(code: 510)
    /// 511 Network Authentication Required (RFC 6585).
    public static let networkAuthenticationRequired = HTTPStatus(code: 511)

    /// Every code in IANA's HTTP Status Code Registry (as of RFC 9110), in order; 306 and 418 are registered as
    /// unused and left out.
    public static let registered: [HTTPStatus] = [
        .`continue`,
        .switchingProtocols,
        .processing,
        .earlyHints,
        .ok,
        .created,
        .accepted,
        .nonAuthoritativeInformation,
        .noContent,
        .resetContent,
        .partialContent,
        .multiStatus,
        .alreadyReported,
        .imUsed,
        .multipleChoices,
        .movedPermanently,
        .found,
        .seeOther,
        .notModified,
        .useProxy,
        .temporaryRedirect,
        .permanentRedirect,
        .badRequest,
        .unauthorized,
        .paymentRequired,
        .forbidden,
        .notFound,
        .methodNotAllowed,
        .notAcceptable,
        .proxyAuthenticationRequired,
        .requestTimeout,
        .conflict,
        .gone,
        .lengthRequired,
        .preconditionFailed,
        .contentTooLarge,
        .uriTooLong,
        .unsupportedMediaType,
        .rangeNotSatisfiable,
        .expectationFailed,
        .misdirectedRequest,
        .unprocessableContent,
        .locked,
        .failedDependency,
        .tooEarly,
        .upgradeRequired,
        .preconditionRequired,
        .tooManyRequests,
        .requestHeaderFieldsTooLarge,
        .unavailableForLegalReasons,
        .internalServerError,
        .notImplemented,
        .badGateway,
        .serviceUnavailable,
        .gatewayTimeout,
        .httpVersionNotSupported,
        .variantAlsoNegotiates,
        .insufficientStorage,
        .loopDetected,
        .notExtended,
        .networkAuthenticationRequired,
    ]

    /// The registered reason phrase for registered codes, or an empty string.
    public var defaultReasonPhrase: String {
        switch code {
        case 100: return "Continue"
        case 101: return "Switching Protocols"
        case 102: return "Processing"
        case 103: return "Early Hints"
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 203: return "Non-Authoritative Information"
        case 204: return "No Content"
        case 205: return "Reset Content"
        case 206: return "Partial Content"
        case 207: return "Multi-Status"
        case 208: return "Already Reported"
        case 226: return "IM Used"
        case 300: return "Multiple Choices"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 305: return "Use Proxy"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 402: return "Payment Required"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 406: return "Not Acceptable"
        case 407: return "Proxy Authentication Required"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 411: return "Length Required"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 415: return "Unsupported Media Type"
        case 416: return "Range Not Satisfiable"
        case 417: return "Expectation Failed"
        case 421: return "Misdirected Request"
        case 422: return "Unprocessable Content"
        case 423: return "Locked"
        case 424: return "Failed Dependency"
        case 425: return "Too Early"
        case 426: return "Upgrade Required"
        case 428: return "Precondition Required"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 451: return "Unavailable For Legal Reasons"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        case 505: return "HTTP Version Not Supported"
        case 506: return "Variant Also Negotiates"
        case 507: return "Insufficient Storage"
        case 508: return "Loop Detected"
        case 510: return "Not Extended"
        case 511: return "Network Authentication Required"
        default: return ""
        }
    }
}
