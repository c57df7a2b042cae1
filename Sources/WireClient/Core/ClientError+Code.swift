import Wire

extension ClientError {
    /// The failures WireClient reports, each with its NSURLError equivalent.
    public enum Code: Sendable, Hashable, CustomStringConvertible {
        /// The task was cancelled (by `cancel()`, a downloader receipt, or invalidation). −999.
        case cancelled
        /// The URL cannot be used: unparsable, no host, or a scheme other than http, https and http+unix. −1000.
        case badURL
        /// The request's idle timeout or the resource timeout expired. −1001.
        case timedOut
        /// Name resolution failed. −1003.
        case cannotFindHost
        /// The connection was refused or the host is unreachable. −1004.
        case cannotConnectToHost
        /// The connection was reset or closed mid-exchange and cannot be retried. −1005.
        case networkConnectionLost
        /// More redirects than `maximumRedirects`. −1007.
        case tooManyRedirects
        /// `.returnCacheDataDontLoad` found nothing stored. −1008.
        case resourceUnavailable
        /// No route to the host, or cellular access was denied. −1009.
        case notConnectedToInternet
        /// The status code is not acceptable to the response serializer. −1011 (NSURLErrorBadServerResponse).
        case unacceptableStatusCode(Int)
        /// Resume data is corrupt. −1015.
        case cannotDecodeRawData
        /// The response's media type (nil when it has none) is not acceptable. −1016.
        case unacceptableContentType(String?)
        /// Parameters could not be encoded, a custom query block threw, or a multipart method is invalid. −1016.
        case requestSerializationFailed
        /// The body's `Content-Encoding` could not be decoded: corrupt, truncated, a decompression bomb, or an unknown
        /// coding; `underlying` is the `ContentDecodingError`. −1016 (NSURLErrorCannotDecodeContentData).
        case cannotDecodeContentData
        /// The body could not be parsed. −1017 (NSURLErrorCannotParseResponse).
        case responseSerializationFailed
        /// The body is needed again (redirect, retry) and cannot be replayed. −1021.
        case requestBodyStreamExhausted
        /// The transport-security policy refused a plain-HTTP URL. −1022.
        case appTransportSecurityRequiresSecureConnection
        /// An upload or multipart file is missing or unreadable. −1100.
        case fileNotReachable
        /// The body exceeds `maximumBufferedResponseSize`. −1103.
        case responseTooLarge
        /// The TLS handshake failed. −1200.
        case secureConnectionFailed
        /// Trust evaluation refused the server's certificate. −1202.
        case serverCertificateUntrusted
        /// A temporary or spill file could not be written. −3003.
        case cannotWriteToFile
        /// A finished download could not be moved to its destination. −3005.
        case cannotMoveFile
        /// A file or stream part yielded a length other than declared. −1 (WireClient's own).
        case bodyLengthMismatch
        /// The task was created on an invalidated session. −1 (WireClient's own).
        case sessionInvalidated
        /// A pinning security policy was set on a manager whose base URL is not https. −1 (WireClient's own).
        case invalidSecurityPolicy

        /// The NSURLError number (NSURLErrorDomain), or −1 for WireClient's own codes.
        public var urlErrorCode: Int {
            switch self {
            case .cancelled: -999
            case .badURL: -1000
            case .timedOut: -1001
            case .cannotFindHost: -1003
            case .cannotConnectToHost: -1004
            case .networkConnectionLost: -1005
            case .tooManyRedirects: -1007
            case .resourceUnavailable: -1008
            case .notConnectedToInternet: -1009
            case .unacceptableStatusCode: -1011
            case .cannotDecodeRawData: -1015
            case .unacceptableContentType, .requestSerializationFailed, .cannotDecodeContentData: -1016
            case .responseSerializationFailed: -1017
            case .requestBodyStreamExhausted: -1021
            case .appTransportSecurityRequiresSecureConnection: -1022
            case .fileNotReachable: -1100
            case .responseTooLarge: -1103
            case .secureConnectionFailed: -1200
            case .serverCertificateUntrusted: -1202
            case .cannotWriteToFile: -3003
            case .cannotMoveFile: -3005
            case .bodyLengthMismatch, .sessionInvalidated, .invalidSecurityPolicy: -1
            }
        }

        /// The code's name, with its payload.
        public var description: String {
            switch self {
            case .unacceptableStatusCode(let status): "unacceptableStatusCode(\(status))"
            case .unacceptableContentType(let type): "unacceptableContentType(\(type.map { "\"\($0)\"" } ?? "nil"))"
            default: name
            }
        }

        private var name: String {
            switch self {
            case .cancelled: "cancelled"
            case .badURL: "badURL"
            case .timedOut: "timedOut"
            case .cannotFindHost: "cannotFindHost"
            case .cannotConnectToHost: "cannotConnectToHost"
            case .networkConnectionLost: "networkConnectionLost"
            case .tooManyRedirects: "tooManyRedirects"
            case .resourceUnavailable: "resourceUnavailable"
            case .notConnectedToInternet: "notConnectedToInternet"
            case .unacceptableStatusCode: "unacceptableStatusCode"
            case .cannotDecodeRawData: "cannotDecodeRawData"
            case .unacceptableContentType: "unacceptableContentType"
            case .requestSerializationFailed: "requestSerializationFailed"
            case .cannotDecodeContentData: "cannotDecodeContentData"
            case .responseSerializationFailed: "responseSerializationFailed"
            case .requestBodyStreamExhausted: "requestBodyStreamExhausted"
            case .appTransportSecurityRequiresSecureConnection: "appTransportSecurityRequiresSecureConnection"
            case .fileNotReachable: "fileNotReachable"
            case .responseTooLarge: "responseTooLarge"
            case .secureConnectionFailed: "secureConnectionFailed"
            case .serverCertificateUntrusted: "serverCertificateUntrusted"
            case .cannotWriteToFile: "cannotWriteToFile"
            case .cannotMoveFile: "cannotMoveFile"
            case .bodyLengthMismatch: "bodyLengthMismatch"
            case .sessionInvalidated: "sessionInvalidated"
            case .invalidSecurityPolicy: "invalidSecurityPolicy"
            }
        }

        /// The reason phrase as NSHTTPURLResponse's `localizedString(forStatusCode:)` writes it: lower case.
        private static func phrase(_ status: Int) -> String {
            let phrase = HTTPStatus(code: status).defaultReasonPhrase.lowercased()
            return phrase.isEmpty ? "unknown status" : phrase
        }

        /// A default sentence for `failureReason`, in AFNetworking's words where it has them.
        var reason: String {
            switch self {
            case .cancelled: "The task was cancelled."
            case .badURL: "The URL cannot be used."
            case .timedOut: "The request timed out."
            case .cannotFindHost: "The host name could not be resolved."
            case .cannotConnectToHost: "Could not connect to the server."
            case .networkConnectionLost: "The network connection was lost."
            case .tooManyRedirects: "Too many HTTP redirects."
            case .resourceUnavailable: "The resource is not in the cache and loading is not allowed."
            case .notConnectedToInternet: "The host cannot be reached."
            case .unacceptableStatusCode(let status): "Request failed: \(Self.phrase(status)) (\(status))"
            case .cannotDecodeRawData: "The resume data cannot be decoded."
            case .unacceptableContentType(let type): "Request failed: unacceptable content-type: \(type ?? "(none)")"
            case .requestSerializationFailed: "The parameters could not be serialized."
            case .cannotDecodeContentData: "The response body's content encoding could not be decoded."
            case .responseSerializationFailed: "The response body could not be parsed."
            case .requestBodyStreamExhausted: "The request body is needed again and cannot be replayed."
            case .appTransportSecurityRequiresSecureConnection: "The transport-security policy requires a secure connection."
            case .fileNotReachable: "The file is missing or cannot be read."
            case .responseTooLarge: "The response body exceeds the buffer limit."
            case .secureConnectionFailed: "A TLS connection could not be established."
            case .serverCertificateUntrusted: "The server's certificate is not trusted."
            case .cannotWriteToFile: "A file could not be written."
            case .cannotMoveFile: "The downloaded file could not be moved to its destination."
            case .bodyLengthMismatch: "A body part's length differs from the declared length."
            case .sessionInvalidated: "The session was invalidated."
            case .invalidSecurityPolicy: "A pinning security policy needs an https base URL."
            }
        }
    }
}
