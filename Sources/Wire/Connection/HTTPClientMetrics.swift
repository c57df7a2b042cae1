import Synchronization

/// Timings of one request, like curl's `-w` variables or URLSession's task metrics. Each is the
/// time from the start of the request; nil when the phase did not happen (no lookup for a
/// reused connection) or has not happened yet.
public struct HTTPClientTimings: Hashable, Sendable {
    /// Name resolution finished.
    public var nameResolved: Duration?
    /// The TCP (or Unix) connection was established.
    public var connected: Duration?
    /// The TLS handshake finished (https only), like curl's `time_appconnect`.
    public var secureConnected: Duration?
    /// The last byte of the request was handed to the kernel.
    public var requestSent: Duration?
    /// The first byte of the response arrived.
    public var firstByte: Duration?
    /// The last byte of the response arrived.
    public var lastByte: Duration?
}

/// Timings and connection facts of one request; `lastByte` and `bodyBytes` fill in as the body
/// is read, so read `snapshot` after the body ends for the complete picture.
public final class HTTPClientMetrics: Sendable {
    /// What is known so far.
    public struct Snapshot: Hashable, Sendable {
        /// The phase timings.
        public var timings = HTTPClientTimings()
        /// Whether the request went over a connection that had served an earlier request.
        public var isReusedConnection = false
        /// The peer's address.
        public var remoteAddress: SocketAddress?
        /// The local address.
        public var localAddress: SocketAddress?
        /// Bytes of body received so far.
        public var bodyBytes = 0
        /// How many times the request was retried on a fresh connection.
        public var retries = 0
        /// Redirects followed to reach this response.
        public var redirects = 0
        /// What TLS negotiated on the connection; nil for plain HTTP.
        public var transportSecurity: TransportSecurityInfo?
        /// The request head exactly as written to the connection (request line and fields, with
        /// the `Host`, `User-Agent` and framing fields the client added), for the last hop.
        public var requestHead: [UInt8] = []
        /// The exchanges that ended in a redirect on the way to this response, in order.
        public var redirectHops: [RedirectHop] = []
        /// The proxy the last hop went through (its requests forwarded to it, or tunnelled through it); nil when it
        /// went straight to the origin. Its description shows no credentials.
        public var proxy: Proxy?
        /// How long the proxy's handshake took when the connection was made: from sending `CONNECT` to its 2xx
        /// answer, or the SOCKS negotiation. Nil on a reused connection, through a forwarding proxy, or without one.
        public var proxyHandshake: Duration?
        /// The `CONNECT` exchange that opened the tunnel the last hop went through, when the hop opened it (nil on a
        /// reused tunnel, through a forwarding or SOCKS proxy, or without one): for a `-v` that shows it.
        public var proxyConnect: ProxyConnect?
    }

    /// A `CONNECT` sent to an HTTP proxy and its 2xx answer.
    public struct ProxyConnect: Hashable, Sendable {
        /// The `CONNECT` request's head as written (with `Proxy-Authorization` when one was sent).
        public var requestHead: [UInt8]
        /// The proxy's answer.
        public var responseHead: HTTPResponseHead
    }

    /// One exchange answered with a redirect that the client followed.
    public struct RedirectHop: Hashable, Sendable {
        /// The URL requested.
        public var url: HTTPURL
        /// The request head as written.
        public var requestHead: [UInt8]
        /// The redirect response's head.
        public var responseHead: HTTPResponseHead
    }

    private let state: Lock<Snapshot>
    let start: Deadline

    init(start: Deadline) {
        self.start = start
        state = Lock(Snapshot())
    }

    /// The facts recorded so far.
    public var snapshot: Snapshot { state.withLock { $0 } }

    func update(_ body: (inout Snapshot) -> Void) {
        state.withLock { body(&$0) }
    }

    func elapsed() -> Duration { Deadline.now() - start }
}
