import Synchronization

/// Timings of one request, like curl's `-w` variables or URLSession's task metrics. Each is the
/// time from the start of the request; nil when the phase did not happen (no lookup for a
/// reused connection) or has not happened yet.
public struct HTTPClientTimings: Hashable, Sendable {
    /// Name resolution finished.
    public var nameResolved: Duration? {
        get { Self.duration(nameResolvedNanoseconds) }
        set { nameResolvedNanoseconds = Self.nanoseconds(newValue) }
    }
    /// The TCP (or Unix) connection was established.
    public var connected: Duration? {
        get { Self.duration(connectedNanoseconds) }
        set { connectedNanoseconds = Self.nanoseconds(newValue) }
    }
    /// The TLS handshake finished (https only), like curl's `time_appconnect`.
    public var secureConnected: Duration? {
        get { Self.duration(secureConnectedNanoseconds) }
        set { secureConnectedNanoseconds = Self.nanoseconds(newValue) }
    }
    /// The last byte of the request was handed to the kernel.
    public var requestSent: Duration? {
        get { Self.duration(requestSentNanoseconds) }
        set { requestSentNanoseconds = Self.nanoseconds(newValue) }
    }
    /// The first byte of the response arrived.
    public var firstByte: Duration? {
        get { Self.duration(firstByteNanoseconds) }
        set { firstByteNanoseconds = Self.nanoseconds(newValue) }
    }
    /// The last byte of the response arrived.
    public var lastByte: Duration? {
        get { Self.duration(lastByteNanoseconds) }
        set { lastByteNanoseconds = Self.nanoseconds(newValue) }
    }

    // Whole nanoseconds (the clock's resolution), `Int64.min` for nil: an optional `Duration` is 17 bytes in a 24-byte
    // slot, and these six were 144 of the bytes every request's metrics object writes and reads; as integers, 48. The
    // connection sets the per-request ones as integers too (`HTTPClientMetrics.elapsedNanoseconds`): through
    // `Duration` each took a 128-bit division.
    private var nameResolvedNanoseconds = Int64.min
    private var connectedNanoseconds = Int64.min
    private var secureConnectedNanoseconds = Int64.min
    package var requestSentNanoseconds = Int64.min
    package var firstByteNanoseconds = Int64.min
    package var lastByteNanoseconds = Int64.min

    @inline(__always)
    private static func duration(_ nanoseconds: Int64) -> Duration? {
        nanoseconds == .min ? nil : .nanoseconds(nanoseconds)
    }

    /// `duration` in whole nanoseconds (toward zero, saturating), or the nil marker.
    @inline(__always)
    private static func nanoseconds(_ duration: Duration?) -> Int64 {
        guard let duration else { return .min }
        return max(duration.nanoseconds, .min + 1)
    }
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
        public var remoteAddress: SocketAddress? {
            get { connectionFacts?.fields.remoteAddress }
            set { changeConnectionFacts { $0.remoteAddress = newValue } }
        }
        /// The local address.
        public var localAddress: SocketAddress? {
            get { connectionFacts?.fields.localAddress }
            set { changeConnectionFacts { $0.localAddress = newValue } }
        }
        /// Bytes of body received so far.
        public var bodyBytes = 0
        /// How many times the request was retried on a fresh connection.
        public var retries = 0
        /// Redirects followed to reach this response.
        public var redirects = 0
        /// What TLS negotiated on the connection; nil for plain HTTP.
        public var transportSecurity: TransportSecurityInfo? {
            get { connectionFacts?.fields.transportSecurity }
            set { changeConnectionFacts { $0.transportSecurity = newValue } }
        }
        /// The request head exactly as written to the connection (request line and fields, with
        /// the `Host`, `User-Agent` and framing fields the client added), for the last hop.
        public var requestHead: [UInt8] = []
        /// The exchanges that ended in a redirect on the way to this response, in order.
        public var redirectHops: [RedirectHop] {
            get { rare?.fields.redirectHops ?? [] }
            set { if newValue.isEmpty && rare == nil { return }; changeRare { $0.redirectHops = newValue } }
        }
        /// The proxy the last hop went through (its requests forwarded to it, or tunnelled through it); nil when it
        /// went straight to the origin. Its description shows no credentials.
        public var proxy: Proxy? {
            get { rare?.fields.proxy }
            set { if case .none = newValue, rare == nil { return }; changeRare { $0.proxy = newValue } }
        }
        /// How long the proxy's handshake took when the connection was made: from sending `CONNECT` to its 2xx
        /// answer, or the SOCKS negotiation. Nil on a reused connection, through a forwarding proxy, or without one.
        public var proxyHandshake: Duration? {
            get { rare?.fields.proxyHandshake }
            set { if case .none = newValue, rare == nil { return }; changeRare { $0.proxyHandshake = newValue } }
        }
        /// How long the request waited for the pool (curl's `time_queue`): until a busy connection came free when the
        /// pool was full, or until the connection it got began opening (its resolution, connect, TLS and proxy
        /// handshake are in `timings`, not here); zero when an idle connection was at hand.
        public var queued: Duration = .zero
        /// Every address the connection's Happy Eyeballs race tried, in the order they started, when the connection
        /// was opened for this request (empty on a reused connection and for a Unix socket).
        public var connectAttempts: [ConnectAttempt] {
            get { rare?.fields.connectAttempts ?? [] }
            set { if newValue.isEmpty && rare == nil { return }; changeRare { $0.connectAttempts = newValue } }
        }
        /// The kernel's `TCP_INFO` for the connection, sampled as the response ended; nil unless
        /// `HTTPClientConfiguration.samplesTCPInfo` is set, and for a connection without a TCP socket of its own
        /// (a Unix socket).
        public var tcpInfo: TCPInfo? {
            get { rare?.fields.tcpInfo }
            set { if case .none = newValue, rare == nil { return }; changeRare { $0.tcpInfo = newValue } }
        }
        /// The number of the connection the request went over, as `HTTPClientEvent.connection` names it.
        public var connection: Int? {
            get { connectionFacts?.fields.number }
            set { changeConnectionFacts { $0.number = newValue } }
        }
        /// The `CONNECT` exchange that opened the tunnel the last hop went through, when the hop opened it (nil on a
        /// reused tunnel, through a forwarding or SOCKS proxy, or without one): for a `-v` that shows it.
        public var proxyConnect: ProxyConnect? {
            get { rare?.fields.proxyConnect }
            set { if case .none = newValue, rare == nil { return }; changeRare { $0.proxyConnect = newValue } }
        }

        /// What most requests leave empty (redirects, proxies, a new connection's attempts, `TCP_INFO`), in one box
        /// shared by copies: the snapshot every request makes, writes and copies is 336 bytes instead of 640. Nil
        /// while all of it is empty, so that a snapshot compares equal however it got there.
        private var rare: Rare?

        /// Whether any of the seldom-set fields holds something (a hop that sets none of them skips them all then).
        package var hasSeldomSetFields: Bool { rare != nil }

        /// What the request's connection is (its addresses, TLS, number), shared with every request over it: the same
        /// for each, so a request takes a reference instead of copying two socket addresses and a TLS summary (a few
        /// hundred bytes, written into every request's metrics). Nil while all of it is unknown.
        package var connectionFacts: ConnectionFacts?

        private mutating func changeConnectionFacts(_ change: (inout ConnectionFactFields) -> Void) {
            var fields = connectionFacts?.fields ?? ConnectionFactFields()
            change(&fields)
            connectionFacts = fields == ConnectionFactFields() ? nil : ConnectionFacts(fields)
        }

        private mutating func changeRare(_ change: (inout RareFields) -> Void) {
            var fields = rare?.fields ?? RareFields()
            change(&fields)
            rare = fields == RareFields() ? nil : Rare(fields)
        }
    }

    /// What a connection is, as a snapshot reports it.
    package struct ConnectionFactFields: Hashable, Sendable {
        var remoteAddress: SocketAddress?
        var localAddress: SocketAddress?
        var transportSecurity: TransportSecurityInfo?
        var number: Int?

        package init(
            remoteAddress: SocketAddress? = nil, localAddress: SocketAddress? = nil,
            transportSecurity: TransportSecurityInfo? = nil, number: Int? = nil
        ) {
            self.remoteAddress = remoteAddress
            self.localAddress = localAddress
            self.transportSecurity = transportSecurity
            self.number = number
        }
    }

    /// `ConnectionFactFields` behind a reference, compared and hashed by value; never changed once made. A connection
    /// makes one and hands it to each request it carries.
    package final class ConnectionFacts: Hashable, Sendable {
        let fields: ConnectionFactFields

        package init(_ fields: ConnectionFactFields) { self.fields = fields }

        package static func == (lhs: ConnectionFacts, rhs: ConnectionFacts) -> Bool {
            lhs === rhs || lhs.fields == rhs.fields
        }

        package func hash(into hasher: inout Hasher) { hasher.combine(fields) }
    }

    /// The seldom-set part of a snapshot.
    struct RareFields: Hashable, Sendable {
        var redirectHops: [RedirectHop] = []
        var proxy: Proxy?
        var proxyHandshake: Duration?
        var connectAttempts: [ConnectAttempt] = []
        var tcpInfo: TCPInfo?
        var proxyConnect: ProxyConnect?
    }

    /// `RareFields` behind a reference, compared and hashed by value; never changed once made.
    final class Rare: Hashable, Sendable {
        let fields: RareFields

        init(_ fields: RareFields) { self.fields = fields }

        static func == (lhs: Rare, rhs: Rare) -> Bool { lhs === rhs || lhs.fields == rhs.fields }

        func hash(into hasher: inout Hasher) { hasher.combine(fields) }
    }

    /// One address a new connection's Happy Eyeballs race tried (RFC 8305). Times count from the moment the
    /// connection began opening, the origin of `timings.nameResolved` and `timings.connected` on a new connection.
    public struct ConnectAttempt: Hashable, Sendable {
        /// The address.
        public var address: SocketAddress
        /// When its socket started connecting.
        public var start: Duration
        /// When it connected or failed; nil when it was abandoned (another address connected first, or the connect
        /// timed out).
        public var end: Duration?
        /// Why it failed; nil when it connected or was abandoned.
        public var error: IOError?

        /// An attempt with these values.
        public init(address: SocketAddress, start: Duration, end: Duration?, error: IOError?) {
            self.address = address
            self.start = start
            self.end = end
            self.error = error
        }
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

    // Declared in the order they are laid out: what every request reads on its way back (the listener check, the
    // start) shares the first cache line with the object's header, which each retain and release touches anyway.
    let start: Deadline
    /// The client's event listener, and the number of the call its events name; nil without one.
    let listener: HTTPClientEventListener?
    let call: Int
    /// The caller's abort handle (`HTTPClientRequest.abortHandle`), which then holds the request's abort state.
    private let abortHandle: HTTPClientAbortHandle?
    private let state: Lock<Snapshot>
    /// The request's abort state, when it has no abort handle of its caller's (`abortHandle`): kept here so that a
    /// request allocates one object for both.
    private let ownAbort = AbortControl()
    /// What the request's task off the loop and its connection's loop hand each other (`LoopCrossing`).
    let crossing = Lock(LoopCrossing.empty)

    // Never inlined: the snapshot it starts (a few hundred bytes) is built in place in the object, not in a slot of each
    // caller's async frame (`HTTPClient.execute` had four such slots, written for every request).
    @inline(never)
    package init(
        start: Deadline, listener: HTTPClientEventListener? = nil, call: Int = 0,
        abortHandle: HTTPClientAbortHandle? = nil
    ) {
        self.start = start
        self.listener = listener
        self.call = call
        self.abortHandle = abortHandle
        state = Lock(Snapshot())
    }

    /// Runs `body` with the request's abort state: the caller's handle's, when it gave one, else the request's own.
    @inline(__always)
    private func withAbortControl<Result>(_ body: (borrowing AbortControl) -> Result) -> Result {
        if let abortHandle { body(abortHandle.control) } else { body(ownAbort) }
    }

    /// Fails the request with `error` (a deadline, the calling task's cancellation) unless it was aborted already.
    func abort(_ error: HTTPClientError) {
        withAbortControl { $0.abort(error) }
    }

    /// The error the request was aborted with, if it was.
    var abortError: HTTPClientError? { withAbortControl { $0.error } }

    /// Whether the request was aborted.
    var wasAborted: Bool { withAbortControl { $0.isAborted } }

    /// An abort from now on calls `cancel` (a wait for a connection).
    func setAbortTarget(_ cancel: @escaping @Sendable (HTTPClientError) -> Void) {
        withAbortControl { $0.setCurrent(cancel) }
    }

    /// An abort from now on fails request `id` on `connection`.
    func setAbortTarget(_ connection: LoopBound<HTTP1ClientConnection>, _ id: HTTP1ClientConnection.ExchangeID) {
        withAbortControl { $0.setCurrent(connection, id) }
    }

    /// Tells the listener, if there is one, of `kind` for this request's call (on `connection`, when known).
    @inline(__always)
    func emit(_ kind: @autoclosure () -> HTTPClientEvent.Kind, connection: Int? = nil) {
        guard listener != nil else { return }
        emitToListener(kind, connection: connection)
    }

    // Out of line, the event made inside it: inlined into an async caller, each event's value (about 200 bytes) was a
    // slot of that caller's frame, for every request, listener or not.
    @inline(never)
    private func emitToListener(_ kind: () -> HTTPClientEvent.Kind, connection: Int?) {
        guard let listener else { return }
        listener(HTTPClientEvent(call: call, connection: connection, time: .now(), kind: kind()))
    }

    /// The facts recorded so far.
    public var snapshot: Snapshot { state.withLock { $0 } }

    func update(_ body: (inout Snapshot) -> Void) {
        state.withLock { body(&$0) }
    }

    /// The time from the start to `now` in nanoseconds, as `HTTPClientTimings` keeps it (never its nil marker).
    func elapsedNanoseconds(at now: Deadline = .now()) -> Int64 {
        if now.uptimeNanoseconds >= start.uptimeNanoseconds {
            return Int64(clamping: now.uptimeNanoseconds - start.uptimeNanoseconds)
        }
        return -Int64(clamping: min(start.uptimeNanoseconds - now.uptimeNanoseconds, UInt64(Int64.max)))
    }
}

extension HTTPClientMetrics: TaskCancellationTarget {
    /// The calling task of `HTTPClient.execute` was cancelled: the request fails with `.cancelled`.
    package func taskWasCancelled() {
        abort(HTTPClientError(.cancelled, "the calling task was cancelled"))
    }
}
