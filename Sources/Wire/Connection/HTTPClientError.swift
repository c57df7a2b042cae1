/// Why an HTTP request failed.
///
/// A struct wrapping a private code, so adding a case later breaks no one's `switch`. Compare
/// with the static members (`error.code == .readTimeout`) and read `description` for a line
/// that names the cause: the limit, the address, the system call and errno.
///
/// One error for the client side of two rooms, so that a caller of `HTTPClient` switches over one type. It is declared
/// here, in `Connection/`, because that is the lower of the two (a lower room never names a higher one):
/// - `Connection/` (one exchange on one connection, and `HTTPURL`): `.malformedResponse`, `.emptyReply`,
///   `.connectionClosed`, `.connectionReset`, `.bodyTruncated`, `.readTimeout`, `.writeFailed`,
///   `.upgradeNotSupported`, `.tlsFailed`, `.cancelled`, and `.invalidURL` from `HTTPURL`'s parsing;
/// - `Client/` (requests, redirects, deadlines, and the pool's `ConnectionPoolError`s, mapped in
///   `HTTPClientError+Pool.swift`): `.invalidURL`, `.invalidRequest`, `.invalidConfiguration`, `.startFailed`,
///   `.shutDown`, `.deadlineExceeded`, `.cancelled`, `.writeFailed`, `.tooManyRedirects`, `.redirectRefused`,
///   `.redirectSchemeNotAllowed`, and from connecting `.connectFailed`, `.connectTimeout`, `.connectionReset`,
///   `.tlsFailed` and `.connectionNotAdmitted`; through a proxy `.proxyRefused`, `.proxyHandshakeFailed` and
///   `.invalidProxy`, and any error of reaching the proxy with `proxy` naming it.
///
/// `Pool/` throws none: its `ConnectionPoolError` stays inside the module. `.bodyTooLarge` is thrown by neither
/// (`HTTPBody.collect(upTo:)` throws `HTTPBodyError.tooLarge`).
public struct HTTPClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Value: String, Hashable, Sendable {
            case invalidURL = "invalid_url"
            case connectFailed = "connect_failed"
            case connectTimeout = "connect_timeout"
            case readTimeout = "read_timeout"
            case deadlineExceeded = "deadline_exceeded"
            case emptyReply = "empty_reply"
            case connectionClosed = "connection_closed"
            case connectionReset = "connection_reset"
            case bodyTruncated = "body_truncated"
            case malformedResponse = "malformed_response"
            case invalidRequest = "invalid_request"
            case writeFailed = "write_failed"
            case tooManyRedirects = "too_many_redirects"
            case redirectRefused = "redirect_refused"
            case redirectSchemeNotAllowed = "redirect_scheme_not_allowed"
            case cancelled = "cancelled"
            case shutDown = "shut_down"
            case bodyTooLarge = "body_too_large"
            case upgradeNotSupported = "upgrade_not_supported"
            case tlsFailed = "tls_failed"
            case invalidConfiguration = "invalid_configuration"
            case startFailed = "start_failed"
            case connectionNotAdmitted = "connection_not_admitted"
            case proxyRefused = "proxy_refused"
            case proxyHandshakeFailed = "proxy_handshake_failed"
            case invalidProxy = "invalid_proxy"
            case poolWaiterLimit = "pool_waiter_limit"
            case connectionAcquireTimeout = "connection_acquire_timeout"
        }
        fileprivate let value: Value

        /// The URL could not be parsed or has an unsupported scheme.
        public static let invalidURL = Code(value: .invalidURL)
        /// The host is unknown, refused, or unreachable (see `connectError`).
        public static let connectFailed = Code(value: .connectFailed)
        /// No connection within the connect timeout.
        public static let connectTimeout = Code(value: .connectTimeout)
        /// The server sent nothing for longer than the read timeout.
        public static let readTimeout = Code(value: .readTimeout)
        /// The whole request took longer than its deadline.
        public static let deadlineExceeded = Code(value: .deadlineExceeded)
        /// The server closed the connection without sending any response byte.
        public static let emptyReply = Code(value: .emptyReply)
        /// The server closed the connection in the middle of a response head.
        public static let connectionClosed = Code(value: .connectionClosed)
        /// The connection was reset while receiving.
        public static let connectionReset = Code(value: .connectionReset)
        /// The body ended before the length its framing announced.
        public static let bodyTruncated = Code(value: .bodyTruncated)
        /// The response violates HTTP/1.1 (see `parseError`).
        public static let malformedResponse = Code(value: .malformedResponse)
        /// The request cannot be sent (a field that would inject a line, a bad method).
        public static let invalidRequest = Code(value: .invalidRequest)
        /// Writing the request failed (see `ioError`).
        public static let writeFailed = Code(value: .writeFailed)
        /// More redirects than the policy allows.
        public static let tooManyRedirects = Code(value: .tooManyRedirects)
        /// The redirect hook refused a hop, or the policy refused a redirect from `https` to `http`.
        public static let redirectRefused = Code(value: .redirectRefused)
        /// A redirect pointed at a scheme other than `http` or `https` (a Unix socket, a file, anything else).
        /// Only the caller's own request may name a Unix socket: a server must never steer the client into a
        /// local service.
        public static let redirectSchemeNotAllowed = Code(value: .redirectSchemeNotAllowed)
        /// The calling task was cancelled.
        public static let cancelled = Code(value: .cancelled)
        /// The client was shut down.
        public static let shutDown = Code(value: .shutDown)
        /// The response body exceeded a collection limit. Wire's own client does not produce it:
        /// `HTTPBody.collect(upTo:)` throws `HTTPBodyError.tooLarge`.
        public static let bodyTooLarge = Code(value: .bodyTooLarge)
        /// The server switched protocols, which this client does not speak.
        public static let upgradeNotSupported = Code(value: .upgradeNotSupported)
        /// The TLS handshake or the peer's certificate was refused, or the TLS settings could not
        /// be loaded; `securityError` holds WireTLS's `TLSError` with the precise reason.
        public static let tlsFailed = Code(value: .tlsFailed)
        /// A configuration setting cannot work (`configurationError` names it); thrown by
        /// `HTTPClient.init` and `HTTPClientConfiguration.validate()`.
        public static let invalidConfiguration = Code(value: .invalidConfiguration)
        /// The client's own event loops could not be started (see `ioError`).
        public static let startFailed = Code(value: .startFailed)
        /// A new connection failed the request's admission check (`ConnectionRequirements.admission`) and was
        /// closed before any request went out on it; `detail` gives the check's reason and the two addresses.
        public static let connectionNotAdmitted = Code(value: .connectionNotAdmitted)
        /// The HTTP proxy answered `CONNECT` with a status other than 2xx: `proxyResponse` holds its head (the status,
        /// and for a 407 the `Proxy-Authenticate` challenge), `proxy` the proxy. Nothing was sent to the origin.
        public static let proxyRefused = Code(value: .proxyRefused)
        /// The proxy's handshake failed: a SOCKS proxy refused or broke its protocol (`socksError`), or a proxy sent
        /// bytes of the tunnel before the client's first. Nothing was sent to the origin.
        public static let proxyHandshakeFailed = Code(value: .proxyHandshakeFailed)
        /// The proxy to use cannot be: its URL (from the environment) cannot be read (`proxyURLError`), or an
        /// `https` proxy has no TLS settings.
        public static let invalidProxy = Code(value: .invalidProxy)
        /// The origin's pool had as many requests waiting as `HTTPClientConfiguration.maxWaitersPerHost` allows: the
        /// request failed at once, without waiting or sending anything. `poolSnapshot` gives the pool's state.
        public static let poolWaiterLimit = Code(value: .poolWaiterLimit)
        /// No connection came free within `HTTPClientConfiguration.connectionAcquireTimeout`: nothing was sent.
        /// `poolSnapshot` gives the pool's state when the wait ended.
        public static let connectionAcquireTimeout = Code(value: .connectionAcquireTimeout)

        /// A stable snake_case name for logs and metrics.
        public var description: String { value.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// What the failure concerns, in words (a URL, an address, a limit).
    public var detail: String { causes.detail }
    /// The connection error, for `.connectFailed` and `.connectTimeout`.
    public var connectError: ConnectError? { causes.connectError }
    /// The protocol violation, for `.malformedResponse`.
    public var parseError: HTTP1ParseError? { causes.parseError }
    /// The system call failure behind the error, if any.
    public var ioError: IOError? { causes.ioError }
    /// The refused setting, for `.invalidConfiguration`.
    public var configurationError: ConfigurationError? { causes.configurationError }
    /// The security layer's error behind a `.tlsFailed` (WireTLS's `TLSError`), if any.
    public var securityError: (any Error)? { causes.securityError }
    /// The proxy the failure happened at (connecting to it, its TLS, its handshake, its answer); nil when the
    /// failure concerns the origin or no proxy was used.
    public var proxy: Proxy? { causes.proxy?.proxy }
    /// The proxy's answer to `CONNECT`, for `.proxyRefused`: the status and header fields (`Proxy-Authenticate`).
    public var proxyResponse: HTTPResponseHead? { causes.proxy?.response }
    /// The `CONNECT` request's head as written (with `Proxy-Authorization` when one was sent), for `.proxyRefused`:
    /// what `wire get -v` shows of a refused tunnel, as curl does. Package-only, since it may carry credentials.
    package var proxyConnectRequest: [UInt8]? { causes.proxy?.connectRequest }
    /// The SOCKS failure, for `.proxyHandshakeFailed` through a SOCKS proxy.
    public var socksError: SOCKSError? { causes.proxy?.socksError }
    /// Why the proxy URL was refused, for `.invalidProxy`.
    public var proxyURLError: ProxyURLError? { causes.proxy?.urlError }
    /// The pool's state when it refused the request, for `.poolWaiterLimit` and `.connectionAcquireTimeout`.
    public var poolSnapshot: HTTPClientPoolSnapshot? { causes.poolSnapshot }
    /// True when the request was sent, in whole or part, so a server may have acted on it: a
    /// non-idempotent request failing this way was not replayed, and the caller must decide.
    public let mayHaveBeenProcessed: Bool
    /// The connection failed before any response byte arrived, the signature of a server that
    /// closed a pooled connection just as it was reused: safe to replay on a fresh connection
    /// when the request is idempotent.
    package let failedBeforeResponse: Bool
    /// The request was pipelined behind a response that closed the connection: it was never
    /// answered, on a fresh connection as much as on a reused one, and is safe to replay when idempotent.
    var queuedBehindClosedResponse = false
    /// The connection was found closed before any byte of the request was written (a pooled connection the peer
    /// closed after the lease): safe to send again whatever the method.
    var wasNotSent = false
    /// The words and the errors behind the failure, behind one reference: the error travels in every frame of the
    /// client's typed-throws `async` functions (and in each `Result` carrying it), where 259 bytes inline cost
    /// copies and made each frame larger than the task allocator's first slab.
    private let causes: Causes

    private final class Causes: Sendable {
        let detail: String
        let connectError: ConnectError?
        let parseError: HTTP1ParseError?
        let ioError: IOError?
        let configurationError: ConfigurationError?
        let securityError: (any Error)?
        let proxy: ProxyCause?
        let poolSnapshot: HTTPClientPoolSnapshot?

        init(
            detail: String, connectError: ConnectError?, parseError: HTTP1ParseError?, ioError: IOError?,
            configurationError: ConfigurationError?, securityError: (any Error)?, proxy: ProxyCause? = nil,
            poolSnapshot: HTTPClientPoolSnapshot? = nil
        ) {
            self.poolSnapshot = poolSnapshot
            self.detail = detail
            self.connectError = connectError
            self.parseError = parseError
            self.ioError = ioError
            self.configurationError = configurationError
            self.securityError = securityError
            self.proxy = proxy
        }
    }

    /// What a failure at a proxy keeps.
    struct ProxyCause: Hashable, Sendable {
        var proxy: Proxy?
        var response: HTTPResponseHead?
        var socksError: SOCKSError?
        var urlError: ProxyURLError?
        var connectRequest: [UInt8]?
    }

    package init(
        _ code: Code, _ detail: String, connectError: ConnectError? = nil, parseError: HTTP1ParseError? = nil,
        ioError: IOError? = nil, configurationError: ConfigurationError? = nil, securityError: (any Error)? = nil,
        mayHaveBeenProcessed: Bool = false, failedBeforeResponse: Bool = false
    ) {
        self.init(
            code: code,
            causes: Causes(
                detail: detail, connectError: connectError, parseError: parseError, ioError: ioError,
                configurationError: configurationError, securityError: securityError),
            mayHaveBeenProcessed: mayHaveBeenProcessed, failedBeforeResponse: failedBeforeResponse,
            queuedBehindClosedResponse: false)
    }

    private init(
        code: Code, causes: Causes, mayHaveBeenProcessed: Bool, failedBeforeResponse: Bool, queuedBehindClosedResponse: Bool
    ) {
        self.code = code
        self.causes = causes
        self.mayHaveBeenProcessed = mayHaveBeenProcessed
        self.failedBeforeResponse = failedBeforeResponse
        self.queuedBehindClosedResponse = queuedBehindClosedResponse
    }

    /// An error of `code` at `proxy` (or about the proxy configuration, when nil).
    static func proxy(
        _ code: Code, _ detail: String, proxy: Proxy?, response: HTTPResponseHead? = nil, socksError: SOCKSError? = nil,
        urlError: ProxyURLError? = nil, ioError: IOError? = nil, securityError: (any Error)? = nil,
        connectRequest: [UInt8]? = nil
    ) -> HTTPClientError {
        HTTPClientError(
            code: code,
            causes: Causes(
                detail: detail, connectError: nil, parseError: nil, ioError: ioError, configurationError: nil,
                securityError: securityError,
                proxy: ProxyCause(
                    proxy: proxy, response: response, socksError: socksError, urlError: urlError,
                    connectRequest: connectRequest)),
            mayHaveBeenProcessed: false, failedBeforeResponse: false, queuedBehindClosedResponse: false)
    }

    /// The same error, said to have happened at `proxy` (connecting to it, securing the connection to it), with the
    /// proxy named in the detail.
    func at(_ proxy: Proxy) -> HTTPClientError {
        var cause = causes.proxy ?? ProxyCause()
        cause.proxy = proxy
        return HTTPClientError(
            code: code,
            causes: Causes(
                detail: "proxy \(proxy): \(detail)", connectError: connectError, parseError: parseError, ioError: ioError,
                configurationError: configurationError, securityError: securityError, proxy: cause,
                poolSnapshot: causes.poolSnapshot),
            mayHaveBeenProcessed: mayHaveBeenProcessed, failedBeforeResponse: failedBeforeResponse,
            queuedBehindClosedResponse: queuedBehindClosedResponse)
    }

    /// An error of `code` (`.poolWaiterLimit`, `.connectionAcquireTimeout`) carrying the pool's state.
    static func pool(_ code: Code, _ detail: String, snapshot: HTTPClientPoolSnapshot) -> HTTPClientError {
        HTTPClientError(
            code: code,
            causes: Causes(
                detail: detail, connectError: nil, parseError: nil, ioError: nil, configurationError: nil,
                securityError: nil, poolSnapshot: snapshot),
            mayHaveBeenProcessed: false, failedBeforeResponse: false, queuedBehindClosedResponse: false)
    }

    static func invalidURL(_ url: String, _ why: String) -> HTTPClientError {
        HTTPClientError(.invalidURL, "\(why): \(url)")
    }

    /// An `.invalidConfiguration` error for `error`.
    static func invalidConfiguration(_ error: ConfigurationError) -> HTTPClientError {
        HTTPClientError(.invalidConfiguration, error.description, configurationError: error)
    }

    func markingMayHaveBeenProcessed() -> HTTPClientError {
        HTTPClientError(
            code: code, causes: causes, mayHaveBeenProcessed: true, failedBeforeResponse: failedBeforeResponse,
            queuedBehindClosedResponse: queuedBehindClosedResponse)
    }

    /// Equal when every field but `securityError` is equal (its detail is part of `detail`).
    public static func == (lhs: HTTPClientError, rhs: HTTPClientError) -> Bool {
        lhs.code == rhs.code && lhs.detail == rhs.detail && lhs.connectError == rhs.connectError
            && lhs.parseError == rhs.parseError && lhs.ioError == rhs.ioError && lhs.configurationError == rhs.configurationError
            && lhs.mayHaveBeenProcessed == rhs.mayHaveBeenProcessed && lhs.failedBeforeResponse == rhs.failedBeforeResponse
            && lhs.causes.proxy == rhs.causes.proxy && lhs.causes.poolSnapshot == rhs.causes.poolSnapshot
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(detail)
        hasher.combine(connectError)
        hasher.combine(parseError)
        hasher.combine(ioError)
        hasher.combine(configurationError)
        hasher.combine(mayHaveBeenProcessed)
        hasher.combine(failedBeforeResponse)
        hasher.combine(causes.proxy)
        hasher.combine(causes.poolSnapshot)
    }

    /// `code: detail`, plus the parser limit a response exceeded and a note when the server may have processed the
    /// request.
    public var description: String {
        let limit = parseError?.kind.limit.map { " (over the limit HTTP1ParserConfiguration.\($0))" } ?? ""
        let note = mayHaveBeenProcessed ? " (the request was sent and may have been processed; it was not retried)" : ""
        return "\(code): \(detail)\(limit)\(note)"
    }
}
