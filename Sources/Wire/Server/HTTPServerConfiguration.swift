/// How an `HTTPServer` listens, and the limits that protect it.
///
/// The defaults suit a public server: a client gets 10 seconds to send a whole request head (so a slowloris client
/// cannot hold a connection by trickling bytes, nor one that sends nothing at all after the accept), an idle
/// keep-alive connection is closed after 60 seconds, a client that stops sending a request body or stops reading a
/// response for 60 seconds is disconnected, and the head limits are the parser's (8 KiB request line, 64 KiB head,
/// 256 fields).
public struct HTTPServerConfiguration: Sendable {
    /// The address to listen on; port 0 picks an ephemeral port (read it from `HTTPServer.start()`).
    public var address: SocketAddress
    /// The listen backlog per loop.
    public var backlog: Int
    /// Limits on request lines, heads and bodies. A body over `maxBodySize` is answered 413.
    public var parser: HTTP1ParserConfiguration
    /// How long a client may take to send a whole request head: the first request's from the accept (over TLS the
    /// handshake counts in it, as in nginx's `client_header_timeout`; a connection that sends nothing is closed when
    /// it passes, without a response), a kept-alive connection's next one from its first byte (`idleTimeout` bounds
    /// the wait for that byte).
    public var headerReadTimeout: Duration
    /// How long a keep-alive connection may wait for its next request.
    public var idleTimeout: Duration
    /// The longest gap between two reads of request body bytes while the server reads a body that is still due
    /// (nginx's `client_body_timeout`). Not counted while reading is paused because the handler has not consumed
    /// what was read, nor before a `100 Continue` the server has not sent. On expiry the body's reader fails with
    /// `.bodyReadTimeout`, and the connection answers 408 (if no response head went out) and closes.
    public var bodyReadTimeout: Duration
    /// The longest a writer may wait for queued response bytes to drain while the client reads none of them
    /// (nginx's `send_timeout`): when it passes, the wait goes on if the queue shrank meanwhile; otherwise the
    /// write fails with `.sendTimeout` and the connection closes.
    public var sendTimeout: Duration
    /// How long a closing connection waits for the peer's end of stream after its last response, so the response
    /// is not lost to a reset (the lingering close of RFC 9112 §9.6).
    public var lingerTimeout: Duration
    /// The most connections open at once, over all loops; connections beyond it are accepted and closed at once.
    public var maxConnections: Int
    /// The value of the `Server` field added to every response, or nil for none.
    public var serverName: String?
    /// Whether to add a `Date` field to responses that lack one (RFC 9110 §6.6.1: an origin server with a clock
    /// MUST send it).
    public var addsDateHeader: Bool
    /// The TLS layer every accepted connection is wrapped in; nil serves plain HTTP. WireTLS sets
    /// it through its public `tls` property.
    package var transportSecurity: (any ServerTransportSecurity)?
    /// How long a client may take to complete the TLS handshake, from the accept. Default 10 s.
    public var handshakeTimeout: Duration = .seconds(10)
    /// Watches each exchange (for logs, metrics and traces) and, when it asks (`connectionOpened(_:)`), each
    /// connection's bytes; nil, the default, watches nothing.
    public var observer: (any HTTPServerObserver)?

    /// Checks that every setting can work; `HTTPServer.start()` calls it before it listens.
    ///
    /// Refused: a negative `backlog`, `maxConnections` below 1, a header-read, body-read, send or handshake
    /// timeout of zero or less, a negative idle or linger timeout, and parser limits no request could meet.
    ///
    /// - Throws: `HTTPServerError` of kind `.invalidConfiguration`, whose `underlying` is the
    ///   `ConfigurationError` naming the setting.
    public func validate() throws(HTTPServerError) {
        do throws(ConfigurationError) {
            try ConfigurationError.require("backlog", backlog, atLeast: 0)
            try ConfigurationError.require("maxConnections", maxConnections, atLeast: 1)
            try ConfigurationError.requirePositive("headerReadTimeout", headerReadTimeout)
            try ConfigurationError.requireNotNegative("idleTimeout", idleTimeout)
            try ConfigurationError.requirePositive("bodyReadTimeout", bodyReadTimeout)
            try ConfigurationError.requirePositive("sendTimeout", sendTimeout)
            try ConfigurationError.requireNotNegative("lingerTimeout", lingerTimeout)
            try ConfigurationError.requirePositive("handshakeTimeout", handshakeTimeout)
            try parser.validate(prefix: "parser.")
        } catch {
            throw HTTPServerError(.invalidConfiguration, detail: error.description, underlying: error)
        }
    }

    /// Creates a configuration.
    /// - Parameters:
    ///   - address: Where to listen.
    ///   - backlog: The listen backlog per loop.
    ///   - parser: Head and body limits.
    ///   - headerReadTimeout: Time allowed for a whole request head.
    ///   - idleTimeout: Time an idle keep-alive connection is kept.
    ///   - bodyReadTimeout: The longest gap between two reads of a request body.
    ///   - sendTimeout: The longest a writer waits while the client reads nothing of the response.
    ///   - lingerTimeout: Time a closing connection waits for the peer to close.
    ///   - maxConnections: Most open connections.
    ///   - serverName: The `Server` field's value, or nil.
    ///   - addsDateHeader: Whether to add `Date`.
    public init(
        address: SocketAddress,
        backlog: Int = 1024,
        parser: HTTP1ParserConfiguration = .strict,
        headerReadTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(60),
        bodyReadTimeout: Duration = .seconds(60),
        sendTimeout: Duration = .seconds(60),
        lingerTimeout: Duration = .seconds(2),
        maxConnections: Int = 10_000,
        serverName: String? = nil,
        addsDateHeader: Bool = true
    ) {
        self.address = address
        self.backlog = backlog
        self.parser = parser
        self.headerReadTimeout = headerReadTimeout
        self.idleTimeout = idleTimeout
        self.bodyReadTimeout = bodyReadTimeout
        self.sendTimeout = sendTimeout
        self.lingerTimeout = lingerTimeout
        self.maxConnections = maxConnections
        self.serverName = serverName
        self.addsDateHeader = addsDateHeader
    }
}
