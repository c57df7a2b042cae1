/// Why a server operation failed: starting, or a handler's write.
///
/// A struct over a private code, so kinds can be added without breaking callers. `underlying` carries the system
/// error when there is one (for example the `IOError` of `bind(2)`).
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// The class of failure. Compare with the static members.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: String, Sendable, Hashable {
            case bindFailed = "bind_failed"
            case alreadyStarted = "already_started"
            case connectionClosed = "connection_closed"
            case responseAlreadyStarted = "response_already_started"
            case responseNotStarted = "response_not_started"
            case responseAlreadyEnded = "response_already_ended"
            case bodyLengthMismatch = "body_length_mismatch"
            case invalidResponse = "invalid_response"
            case securityUnavailable = "security_unavailable"
            case invalidConfiguration = "invalid_configuration"
            case bodyReadTimeout = "body_read_timeout"
            case sendTimeout = "send_timeout"
        }
        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// The stable snake_case name.
        public var description: String { code.rawValue }

        /// The server could not listen on its address.
        public static let bindFailed = Kind(.bindFailed)
        /// `start()` was called twice, or after `shutdown`.
        public static let alreadyStarted = Kind(.alreadyStarted)
        /// The connection closed (peer gone, timeout, shutdown) before the write.
        public static let connectionClosed = Kind(.connectionClosed)
        /// A response head was written twice.
        public static let responseAlreadyStarted = Kind(.responseAlreadyStarted)
        /// Body bytes were written before the head.
        public static let responseNotStarted = Kind(.responseNotStarted)
        /// A write came after the response ended.
        public static let responseAlreadyEnded = Kind(.responseAlreadyEnded)
        /// The body written differs from the head's `Content-Length`.
        public static let bodyLengthMismatch = Kind(.bodyLengthMismatch)
        /// The response head cannot be sent (an unsafe field, a bad status or `Content-Length`).
        public static let invalidResponse = Kind(.invalidResponse)
        /// The TLS layer could not be set up (its certificate or key cannot be loaded); `underlying` says why.
        public static let securityUnavailable = Kind(.securityUnavailable)
        /// A configuration setting cannot work; `underlying` is the `ConfigurationError` naming it.
        public static let invalidConfiguration = Kind(.invalidConfiguration)
        /// The client sent no request body bytes for `HTTPServerConfiguration.bodyReadTimeout` while the server was
        /// reading the body; the body's reader fails with it and the connection closes (after a 408 when no
        /// response head was sent).
        public static let bodyReadTimeout = Kind(.bodyReadTimeout)
        /// The client read none of the queued response bytes for `HTTPServerConfiguration.sendTimeout`; the waiting
        /// write fails with it and the connection closes.
        public static let sendTimeout = Kind(.sendTimeout)
    }

    /// The class of failure.
    public var kind: Kind
    /// Specifics: the address, the field, the counts involved.
    public var detail: String
    /// The error underneath, if any.
    public var underlying: (any Error)?

    /// Creates an error.
    /// - Parameters:
    ///   - kind: The class of failure.
    ///   - detail: Specifics for the message.
    ///   - underlying: The error underneath.
    public init(_ kind: Kind, detail: String = "", underlying: (any Error)? = nil) {
        self.kind = kind
        self.detail = detail
        self.underlying = underlying
    }

    /// `kind: detail (underlying)`.
    public var description: String {
        var text = kind.description
        if !detail.isEmpty { text += ": \(detail)" }
        if let underlying { text += " (\(underlying))" }
        return text
    }
}
