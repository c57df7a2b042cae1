import Synchronization

/// An HTTP/1.1 client with a keep-alive connection pool per origin.
///
/// ```swift
/// let client = try HTTPClient()
/// let response = try await client.execute(HTTPClientRequest(url: "http://localhost:8080/"))
/// print(response.status, try await response.body.collect(upTo: 1 << 20).readableBytes)
/// await client.shutdown()
/// ```
///
/// Each request runs on its connection's event loop: one hop onto the loop to send (none for a task that prefers that
/// loop as its executor), one hop back with the response head, then one hand-over per body chunk, never per byte.
///
/// A client released without `shutdown()` shuts itself down (its pooled connections close, the loops it
/// owns stop; a response body still being read then fails) and says so once on standard error.
public final class HTTPClient: Sendable {
    /// The configuration the client was made with.
    public let configuration: HTTPClientConfiguration
    /// The client's loops; nil only for `HTTPClient.shared` when its loop could not start (`startFailure` says why).
    package let group: EventLoopGroup?
    /// Why the loops could not start: every request then fails with it (only `HTTPClient.shared` is made this way,
    /// since a static cannot throw).
    private let startFailure: HTTPClientError?
    private let ownsGroup: Bool
    private let pools = Lock(Pools())
    private let recentHead = Lock<RecentHead?>(nil)
    /// The URL text of the last request made from text, and its parse (`parsedURL(of:)`).
    let recentURL = Lock<(text: String, url: HTTPURL)?>(nil)

    /// The client's pools by key, and the one used last: most clients talk to one origin, and comparing a key with
    /// the last one's is cheaper than hashing it (its host and scheme strings) on every request.
    private struct Pools {
        var byKey: [ConnectionPool.Key: ConnectionPool] = [:]
        var last: ConnectionPool?

        var all: [ConnectionPool] { Array(byKey.values) }

        mutating func pool(for key: ConnectionPool.Key) -> ConnectionPool? {
            if let last, last.key == key { return last }
            guard let pool = byKey[key] else { return nil }
            last = pool
            return pool
        }
    }

    /// The state of each of the client's connection pools now, one per origin (and per proxy route), in no particular
    /// order: connections open, idle, leased and being opened, requests waiting and the oldest one's wait,
    /// connections opened and closed so far. Each pool's counts are taken in one step; pools are read one after the
    /// other.
    public func poolSnapshots() -> [HTTPClientPoolSnapshot] {
        pools.withLock { $0.all }.map { $0.snapshot() }
    }

    /// Connections the pools hold on to, over all origins (for tests that check closed ones are let go).
    package var retainedConnectionCount: Int {
        pools.withLock { $0.all }.reduce(0) { $0 + $1.retainedConnectionCount }
    }
    private let isShutDown = Atomic<Bool>(false)

    /// Creates a client on `group`, or on a group of its own (one loop per core) when nil.
    ///
    /// - Throws: `HTTPClientError` of code `.invalidConfiguration` when a setting cannot work (see
    ///   `HTTPClientConfiguration.validate()`), checked before any loop starts; `.startFailed`
    ///   with the `IOError` if a group of its own cannot be started.
    public init(configuration: HTTPClientConfiguration = HTTPClientConfiguration(), group: EventLoopGroup? = nil)
        throws(HTTPClientError)
    {
        try configuration.validate()
        self.configuration = configuration
        startFailure = nil
        if let group {
            self.group = group
            ownsGroup = false
        } else {
            do {
                self.group = try EventLoopGroup()
            } catch {
                throw HTTPClientError(.startFailed, "cannot start the client's event loops: \(error)", ioError: error as? IOError)
            }
            ownsGroup = true
        }
    }

    /// A client whose loops could not start: every request fails with `failure`. For `HTTPClient.shared`.
    init(failedToStart failure: HTTPClientError) {
        configuration = HTTPClientConfiguration()
        group = nil
        ownsGroup = false
        startFailure = failure
    }

    /// The client's loops, or the error that kept them from starting.
    func runningGroup() throws(HTTPClientError) -> EventLoopGroup {
        guard let group else { throw startFailure ?? HTTPClientError(.startFailed, "the client has no event loop") }
        return group
    }

    /// Closes every pooled connection and, if it owns one, stops its event-loop group. Does nothing on
    /// `HTTPClient.shared`, which lives as long as the process.
    public func shutdown() async {
        guard !isShared, !isShutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let all = pools.withLock { $0.all }
        for pool in all { pool.shutDown() }
        if ownsGroup, let group { await group.shutdownGracefully() }
    }

    deinit {
        // Cannot wait here (the last reference may go on one of the client's own loops): close what the pools
        // hold and let the loops stop on their own.
        guard !isShutDown.load(ordering: .acquiring) else { return }
        ImplicitShutdownWarning.emit(for: "HTTPClient")
        for pool in pools.withLock({ $0.all }) { pool.shutDown() }
        if ownsGroup, let group { group.stopWithoutWaiting() }
    }

    /// Sends a request and returns the response once its head has arrived.
    ///
    /// Runs on the caller's executor (an actor's, or Swift's global executor): a caller is not moved off it and
    /// back. A request whose body is sent in parts runs those parts with its connection's loop as task executor.
    /// Cancelling the calling task aborts the request with `.cancelled`.
    ///
    /// - Parameters:
    ///   - request: What to send.
    ///   - timeout: A total deadline for the request, body included; nil for none.
    /// - Throws: `HTTPClientError`.
    nonisolated(nonsending) public func execute(_ request: HTTPClientRequest, timeout: Duration? = nil)
        async throws(HTTPClientError) -> HTTPClientResponse
    {
        // The usual call (no deadline, no listener): nothing to do after the response or the failure, so the frame
        // holds no timer, no event and no caught error, only what `followRedirects` keeps across its wait.
        if timeout == nil, configuration.eventListener == nil, request.method != .connect, group != nil {
            let metrics = HTTPClientMetrics(start: .now(), abortHandle: request.abortHandle)
            return try await withCancellationHandler(notifying: metrics) {
                () async throws(HTTPClientError) -> HTTPClientResponse in
                try await followRedirects(request, metrics: metrics)
            }
        }
        return try await executeInGeneral(request, timeout: timeout)
    }

    /// `execute` with a deadline, a listener to tell, or a request to refuse.
    @inline(never)
    nonisolated(nonsending) private func executeInGeneral(_ request: HTTPClientRequest, timeout: Duration?)
        async throws(HTTPClientError) -> HTTPClientResponse
    {
        guard request.method != .connect else {
            // A 2xx to CONNECT turns the connection into a tunnel, which an HTTPClientResponse cannot carry.
            throw HTTPClientError(.invalidRequest, "CONNECT opens a tunnel: use HTTPClient.connect(to:via:)")
        }
        let group: EventLoopGroup
        // The metrics object carries the request's abort state too (in the caller's handle, when it gave one): one
        // object per request, not two.
        let metrics: HTTPClientMetrics
        if let listener = configuration.eventListener {
            metrics = Self.startCall(request, listener: listener)
            do { group = try runningGroup() } catch {
                metrics.emit(.callFailed(error))
                throw error
            }
        } else {
            group = try runningGroup()
            metrics = HTTPClientMetrics(start: .now(), abortHandle: request.abortHandle)
        }
        let deadlineTimer = timeout.map { timeout in
            group.next().schedule(in: timeout) {
                metrics.abort(
                    HTTPClientError(
                        .deadlineExceeded, "the request took longer than its \(timeout) deadline",
                        mayHaveBeenProcessed: true))
            }
        }
        // Wire's cancellation handler, not the standard library's: the operation stays in the caller's isolation (no
        // executor switch into it and out of it) and keeps its typed error (no Result to carry it out).
        do throws(HTTPClientError) {
            // Cancellation aborts the request with `.cancelled` (`HTTPClientMetrics.taskWasCancelled`).
            let response = try await withCancellationHandler(notifying: metrics) {
                () async throws(HTTPClientError) -> HTTPClientResponse in
                try await followRedirects(request, metrics: metrics)
            }
            // The deadline covers the body too; once the body ends the timer has no job left.
            if let deadlineTimer { response.body.channel.onFinish { deadlineTimer.cancel() } }
            if metrics.listener != nil { Self.reportCallEnd(of: response.body.channel, to: metrics) }
            return response
        } catch {
            deadlineTimer?.cancel()
            metrics.emit(.callFailed(error))
            throw error
        }
    }

    /// The metrics of a call that `listener` hears about, told of the call's start.
    // Never inlined, as `reportCallEnd`: the event's values would otherwise be slots of `execute`'s async frame.
    @inline(never)
    private static func startCall(_ request: HTTPClientRequest, listener: @escaping HTTPClientEventListener)
        -> HTTPClientMetrics
    {
        let metrics = HTTPClientMetrics(
            start: .now(), listener: listener, call: HTTPClientEvent.nextCall(), abortHandle: request.abortHandle)
        metrics.emit(.callStart(method: request.method, url: request.url))
        return metrics
    }

    /// Tells the call's listener of its end (or its failure) once the body of its response has ended.
    @inline(never)
    private static func reportCallEnd(of channel: BodyChannel, to metrics: HTTPClientMetrics) {
        channel.onFinish {
            if let error = channel.failure {
                metrics.emit(.callFailed(error as? HTTPClientError ?? HTTPClientError(.connectionClosed, "\(error)")))
            } else {
                metrics.emit(.callEnd, connection: metrics.snapshot.connection)
            }
        }
    }

    // MARK: Retry

    /// What `retryOrThrow` asks of the lease an attempt ran on: two flags, kept across the wait for the response
    /// instead of the lease's references.
    struct LeaseKind {
        /// The connection was opened for the attempt.
        let isNew: Bool
        /// The attempt was pipelined behind another request.
        let isPipelined: Bool

        init(_ lease: borrowing ConnectionPool.Lease) {
            isNew = lease.isNew
            isPipelined = lease.isPipelined
        }
    }

    /// How many times a hop was tried again, and whether its request may be sent twice.
    struct RetryCount {
        /// Idempotent (or carrying an `Idempotency-Key`), with a body that can be sent again.
        let replayable: Bool
        /// Attempts after a reused connection failed before its response.
        var attempt = 0
        /// Attempts after a pooled connection was found closed before any byte went out.
        var unsent = 0
    }

    /// Decides, after `error` ended an attempt on `lease`, whether the hop is tried again (returns, having counted the
    /// retry) or fails (throws the error to report).
    @inline(never)  // Out of `followRedirects`: its temporaries would be slots of every request's async frame.
    func retryOrThrow(
        _ error: HTTPClientError, on lease: LeaseKind, count: inout RetryCount,
        observation: RequestObservation?, metrics: HTTPClientMetrics
    ) throws(HTTPClientError) {
        // A pooled connection the server closed just as it was reused: the normal race with the server's idle timeout,
        // not the user's problem — once. A pipelined request behind a response that closed the connection is in the
        // same case.
        let stale =
            (!lease.isNew || lease.isPipelined || error.queuedBehindClosedResponse) && error.failedBeforeResponse
            && !metrics.wasAborted
        // Again while the retries take reused connections that turn out closed too: each leaves the pool as it fails,
        // so a peer that closes every connection after its response without saying so (tinyproxy does) empties it,
        // and a fresh connection comes within as many tries as the pool holds connections.
        let mayRetry =
            count.attempt == 0
            || (!lease.isNew && !lease.isPipelined && count.attempt <= configuration.maxConnectionsPerHost)
        // A pooled connection found closed before any byte went out: nothing was sent, so it is tried again whatever
        // the method, without counting as an attempt (each such connection leaves the pool; bounded all the same,
        // against a pool that only ever hands out closed ones).
        if error.wasNotSent && !lease.isNew && !metrics.wasAborted && configuration.retriesStaleConnections
            && count.unsent < 4 * configuration.maxConnectionsPerHost
        {
            count.unsent += 1
            metrics.update { $0.retries += 1 }
            observation?.tell(.retry(attempt: count.attempt + count.unsent, after: error))
            return
        }
        if stale && count.replayable && mayRetry && configuration.retriesStaleConnections {
            count.attempt += 1
            metrics.update { $0.retries += 1 }
            observation?.tell(.retry(attempt: count.attempt, after: error))
            return
        }
        if stale && !count.replayable { throw error.markingMayHaveBeenProcessed() }
        throw error
    }

    /// Whether a request may be pipelined: idempotent (so it can be replayed if the connection
    /// closes before its response), keep-alive, without `Expect`, and with its whole body in memory
    /// (so it is written at once and never interleaves with the next).
    func isPipelinable(method: HTTPMethod, headers: HTTPHeaders, body: HTTPClientRequest.BodyBox?) -> Bool {
        guard method.isIdempotent, !headers.containsToken("close", inFieldsNamed: "connection"), !headers.contains(name: "expect")
        else { return false }
        guard let body else { return true }
        guard let count = body.inlineByteCount else { return false }
        return configuration.expectContinueThreshold.map { count < $0 } ?? true
    }

    /// The pool for `url`'s origin, or for the Unix socket every request of this exchange goes to; through a proxy,
    /// the proxy's pool (forwarding) or the pool of tunnels to the origin.
    @inline(never)  // Synchronous, out of `followRedirects`: its keys and layers stay off the request's async frame.
    package func pool(
        for url: HTTPURL, via socketPath: String?,
        requirements: ConnectionRequirements = ConnectionRequirements(), route: ProxyRoute = .direct
    ) throws(HTTPClientError) -> ConnectionPool {
        guard !isShutDown.load(ordering: .acquiring) else { throw HTTPClientError(.shutDown, "the client is shut down") }
        // The usual request: straight to the origin the last one went to. Its pool is found by comparing the URL's
        // scheme, host and port with that pool's key, without building a key (and copying the TLS layer's
        // existential for it) first; the configuration is fixed, so the pool's security is this URL's.
        if case .direct = route, socketPath == nil, requirements.isEmpty,
            let last = pools.withLock({ $0.last }), last.key.isDirect(scheme: url.scheme, host: url.host, port: url.port)
        {
            return last
        }
        let security = url.isTLS ? configuration.transportSecurity : nil
        if url.isTLS && security == nil {
            throw HTTPClientError(
                .invalidURL, "https needs WireTLS: import WireTLS and set the configuration's tls property: \(url)")
        }
        if url.isTLS && socketPath != nil {
            throw HTTPClientError(.invalidURL, "https over a Unix socket is not supported: \(url)")
        }
        if case .proxy(let proxy) = route, socketPath == nil, url.unixSocketPath == nil {
            return try pool(for: url, through: proxy, security: security, requirements: requirements)
        }
        let key: ConnectionPool.Key =
            if let path = socketPath ?? url.unixSocketPath {
                ConnectionPool.Key(scheme: "http+unix", endpoint: .unixSocket(path: path), requirements: requirements)
            } else {
                ConnectionPool.Key(
                    scheme: url.scheme, endpoint: .host(url.host, port: url.port ?? (url.isTLS ? 443 : 80)),
                    security: security?.poolKey,
                    requirements: requirements)
            }
        return try pool(key, security: security)
    }

    /// The pool of `key`, made with `security` and `tunnel` when there is none yet.
    private func pool(
        _ key: ConnectionPool.Key, security: (any ClientTransportSecurity)?,
        tunnel: ConnectionPool.TunnelSetup? = nil
    ) throws(HTTPClientError) -> ConnectionPool {
        let group = try runningGroup()
        return pools.withLock { pools in
            if let pool = pools.pool(for: key) { return pool }
            let pool = ConnectionPool(
                key: key,
                configuration: .init(
                    maxConnections: configuration.maxConnectionsPerHost, idleTimeout: configuration.idleTimeout,
                    maxPipelined: configuration.pipelining.maxInFlight,
                    connectTimeout: configuration.connectTimeout, resolver: configuration.resolver,
                    parserConfiguration: configuration.parserConfiguration, security: security, tunnel: tunnel,
                    maxWaiters: configuration.maxWaitersPerHost, acquireTimeout: configuration.connectionAcquireTimeout,
                    samplesTCPInfo: configuration.samplesTCPInfo, listener: configuration.eventListener,
                    socketOptions: configuration.socketOptions),
                group: group)
            pools.byKey[key] = pool
            pools.last = pool
            return pool
        }
    }

    /// The route of a request to `url`: a Unix socket goes direct; otherwise the proxy configuration decides.
    @inline(never)  // Out of `followRedirects`: the proxy configurations it copies would be slots of its frame.
    func proxyRoute(for url: HTTPURL, via socketPath: String?, configuration proxy: ProxyConfiguration)
        throws(HTTPClientError) -> ProxyRoute
    {
        if case .none = proxy { return .direct }
        guard socketPath == nil, url.unixSocketPath == nil else { return .direct }
        do {
            return try proxy.route(scheme: url.scheme, host: url.host)
        } catch {
            throw .proxy(.invalidProxy, "the proxy URL cannot be used: \(error)", proxy: nil, urlError: error)
        }
    }

    /// The pool a request to `url` uses through `proxy`: the proxy's own pool for an `http` URL through an HTTP
    /// proxy (forwarding, unless `tunnelsThroughHTTPProxy`), else a pool of tunnels to the origin, which TLS
    /// verifies with the origin's settings and name.
    private func pool(
        for url: HTTPURL, through proxy: Proxy, security: (any ClientTransportSecurity)?,
        requirements: ConnectionRequirements
    ) throws(HTTPClientError) -> ConnectionPool {
        let port = url.port ?? (url.isTLS ? 443 : 80)
        let key = ConnectionPool.Key(
            scheme: url.scheme, endpoint: .host(proxy.host, port: proxy.port), security: security?.poolKey,
            requirements: requirements, route: .tunnel(proxy, host: url.host, port: port))
        if proxy.kind.isSOCKS {
            return try pool(key, security: security, tunnel: ConnectionPool.TunnelSetup(proxyPool: nil))
        }
        let proxyPool = try pool(forProxy: proxy, requirements: requirements)
        guard url.isTLS || configuration.tunnelsThroughHTTPProxy else { return proxyPool }
        if let pool = pools.withLock({ $0.pool(for: key) }) { return pool }
        let authority = url.host.utf8.contains(UInt8(ascii: ":")) ? "[\(url.host)]:\(port)" : "\(url.host):\(port)"
        let setup = ConnectionPool.TunnelSetup(
            proxyPool: proxyPool, connectHead: try connectHead(authority, headers: proxy.fieldsForProxy(HTTPHeaders())),
            readTimeout: configuration.readTimeout, retriesStaleConnections: configuration.retriesStaleConnections)
        return try pool(key, security: security, tunnel: setup)
    }

    /// The pool of connections to an HTTP proxy: requests forwarded to it, and `CONNECT`s, for every origin.
    func pool(forProxy proxy: Proxy, requirements: ConnectionRequirements = ConnectionRequirements())
        throws(HTTPClientError) -> ConnectionPool
    {
        var security: (any ClientTransportSecurity)?
        if proxy.kind == .https {
            security = proxy.transportSecurity ?? configuration.proxyTransportSecurity
            guard security != nil else {
                throw .proxy(
                    .invalidProxy,
                    "proxy \(proxy) is an https proxy: import WireTLS and set the proxy's tls or the configuration's "
                        + "proxyTLS", proxy: proxy)
            }
        }
        let key = ConnectionPool.Key(
            scheme: proxy.kind.rawValue, endpoint: .host(proxy.host, port: proxy.port), security: security?.poolKey,
            requirements: requirements, route: .proxy(proxy))
        return try pool(key, security: security)
    }

    /// The head of `CONNECT authority` (RFC 9110 §9.3.6): `Host` names the tunnel's far end, not the proxy. `Host`
    /// comes first, as curl writes it, then the proxy's fields (`Proxy-Authorization`) and `User-Agent`.
    func connectHead(_ authority: String, headers: HTTPHeaders) throws(HTTPClientError) -> [UInt8] {
        var fields = HTTPHeaders()
        if !headers.contains(name: "host") { fields.add(name: "Host", value: authority) }
        fields.add(contentsOf: headers)
        let head = HTTPRequestHead(method: .connect, target: authority, headers: fields)
        var bytes: [UInt8] = []
        do {
            try HTTP1Serializer.writeRequestHead(
                head, adding: addedFields(to: fields, host: authority), framing: .asInHeaders, into: &bytes)
        } catch {
            throw HTTPClientError(.invalidRequest, "\(error)")
        }
        return bytes
    }

    /// Waits for a connection from `pool`; an abort of the request (`metrics`: a deadline, cancellation) ends the wait
    /// with its own error.
    @inline(never)  // The wait for a connection is the uncommon case: its frame is allocated only when it happens.
    func lease(
        from pool: ConnectionPool, pipelinable: Bool = false, call: Int? = nil, metrics: HTTPClientMetrics
    ) async throws(HTTPClientError) -> ConnectionPool.Lease {
        do {
            return try await pool.lease(pipelinable: pipelinable, call: call) { cancel in
                metrics.setAbortTarget { _ in cancel() }
            }
        } catch {
            throw HTTPClientError(error, abortError: metrics.abortError)
        }
    }

    // MARK: One exchange

    /// A request ready to be written: its serialized head, how its body is framed and where the body comes from.
    struct PreparedRequest {
        let headBytes: [UInt8]
        let framing: HTTP1Serializer.BodyFraming
        let inline: ByteBuffer?
        let file: FileReader?
        let expectsContinue: Bool
        let keepAlive: Bool
        /// Whether the head (and any inline body) is the whole request, written at once.
        let requestComplete: Bool
    }

    /// The head last serialized for a request without a body, with what it was made from: a client that sends the
    /// same request again (polling one URL, a load generator, wrk's own trick) writes the same bytes without
    /// checking and serializing them again. The head depends on nothing else: the pool fixes the proxy and the
    /// `Host` value, and the configuration (version, `User-Agent`) never changes.
    private struct RecentHead {
        let pool: ConnectionPool
        let url: HTTPURL
        let method: HTTPMethod
        let headers: HTTPHeaders
        let headBytes: [UInt8]
        let framing: HTTP1Serializer.BodyFraming
        let keepAlive: Bool

        /// Whether a request of these values on `pool` is the one this head was made for; read in place.
        func isMade(for pool: ConnectionPool, url: HTTPURL, method: HTTPMethod, headers: HTTPHeaders) -> Bool {
            self.pool === pool && self.method.hasSameToken(as: method) && self.url.hasSameBytes(as: url)
                && self.headers == headers
        }
    }

    /// `prepare(url:method:headers:body:forwardingTo:hostHeader:)` for a request on `pool`, reusing the last head
    /// when a request without a body matches it exactly (its URL, method and fields, byte for byte).
    @inline(never)  // Synchronous, out of `followRedirects`: its temporaries live on the thread's stack, not in the frame.
    func prepare(
        url: HTTPURL, method: HTTPMethod, headers: HTTPHeaders, body: HTTPClientRequest.BodyBox?, on pool: ConnectionPool
    ) throws(HTTPClientError) -> PreparedRequest {
        guard body == nil else {
            return try prepare(
                url: url, method: method, headers: headers, body: body, forwardingTo: pool.forwardingProxy,
                hostHeader: pool.originHostHeader)
        }
        let reused = recentHead.withLock {
            recent -> (headBytes: [UInt8], framing: HTTP1Serializer.BodyFraming, keepAlive: Bool)? in
            // Compared and read through the optional, in place: bound to a constant, the entry was copied whole.
            guard recent?.isMade(for: pool, url: url, method: method, headers: headers) == true,
                let headBytes = recent?.headBytes, let framing = recent?.framing, let keepAlive = recent?.keepAlive
            else { return nil }
            return (headBytes, framing, keepAlive)
        }
        if let reused {
            return PreparedRequest(
                headBytes: reused.headBytes, framing: reused.framing, inline: nil, file: nil, expectsContinue: false,
                keepAlive: reused.keepAlive, requestComplete: true)
        }
        let prepared = try prepare(
            url: url, method: method, headers: headers, body: nil, forwardingTo: pool.forwardingProxy,
            hostHeader: pool.originHostHeader)
        let recent = RecentHead(
            pool: pool, url: url, method: method, headers: headers, headBytes: prepared.headBytes,
            framing: prepared.framing, keepAlive: prepared.keepAlive)
        recentHead.withLock { $0 = recent }
        return prepared
    }

    /// The `Host` and `User-Agent` fields the client writes after a request's own, each unless the request has one.
    func addedFields(to headers: HTTPHeaders, host: @autoclosure () -> String) -> HTTP1Serializer.AddedRequestFields {
        HTTP1Serializer.AddedRequestFields(
            host: headers.contains(literalName: "host") ? nil : host(),
            userAgent: configuration.userAgent.flatMap { headers.contains(literalName: "user-agent") ? nil : $0 })
    }

    /// Serializes a request's head and opens its body file: everything that can refuse the request before it
    /// takes a connection.
    ///
    /// Through a forwarding proxy the target is in absolute form (RFC 9112 §3.2.2), the proxy's own fields are added
    /// and its credentials go in `Proxy-Authorization`, preemptively, unless the request has that field already
    /// (`Proxy.fieldsForProxy(_:)`). `hostHeader` is the pool's `Host` value when the pool knows it (one origin, no
    /// proxy), the URL's otherwise.
    // Never inlined: it reads the body's enum, which inlined into the async caller would cost that caller two
    // allocations on the task per request, body or not (see `BodyBox`).
    @inline(never)
    private func prepare(
        url: HTTPURL, method: HTTPMethod, headers: HTTPHeaders,
        body bodyBox: HTTPClientRequest.BodyBox?, forwardingTo proxy: Proxy? = nil, hostHeader: String? = nil
    ) throws(HTTPClientError) -> PreparedRequest {
        var headers = headers
        var target = url.target
        if let proxy {
            target = "\(url.scheme)://\(url.hostHeader)\(url.target)"
            headers = proxy.fieldsForProxy(headers)
        }
        let version = configuration.requestVersion
        let head = HTTPRequestHead(method: method, target: target, version: version, headers: headers)
        // Host and User-Agent are written after the request's own fields, not added to a copy of them.
        var added = addedFields(to: headers, host: hostHeader ?? url.hostHeader)
        let framing: HTTP1Serializer.BodyFraming
        var inline: ByteBuffer?
        var file: FileReader?
        if let bodyBox {
            switch bodyBox.body {
            case .bytes(let bytes):
                framing = .contentLength(bytes.readableBytes)
                inline = bytes
            case .file(let path):
                do { file = try FileReader(path: path) } catch {
                    throw HTTPClientError(.invalidRequest, "cannot read the body file \(path): \(error)", ioError: error)
                }
                framing = .contentLength(file!.size)
            case .stream(let length, _), .replayable(let length, _):
                framing = length.map { .contentLength($0) } ?? .chunked
            case .segments(let segments, _):
                framing = .contentLength(segments.reduce(0) { $0 + $1.count })
            }
        } else {
            // RFC 9110 §8.6: a request without content sends no Content-Length, except for methods
            // whose semantics anticipate content, where 0 tells the server there is none.
            framing = method == .post || method == .put || method == .patch ? .contentLength(0) : .asInHeaders
        }
        if framing == .chunked && version < .http1_1 {
            throw HTTPClientError(.invalidRequest, "a body of unknown length needs chunked coding, which \(version) lacks")
        }
        if let threshold = configuration.expectContinueThreshold, version >= .http1_1, bodyBox != nil,
            !headers.contains(literalName: "expect")
        {
            let length: Int? =
                switch framing {
                case .contentLength(let length): length
                case .chunked: nil
                case .asInHeaders: 0
                }
            added.expectContinue = (length ?? Int.max) >= threshold
        }
        var headBytes: [UInt8] = []
        headBytes.reserveCapacity(256)
        do { try HTTP1Serializer.writeRequestHead(head, adding: added, framing: framing, into: &headBytes) } catch {
            throw HTTPClientError(.invalidRequest, "\(error)")
        }
        // The literal forms lend their bytes without bridging a string; a request without a body looks for no `Expect`.
        let expectsContinue =
            bodyBox != nil
            && (added.expectContinue || headers.containsToken(literal: "100-continue", inFieldsNamed: "expect"))
        let keepAlive = !headers.containsToken(literal: "close", inFieldsNamed: "connection")
        var streamed = false
        if let bodyBox {
            switch bodyBox.body {
            case .stream, .replayable, .segments: streamed = true
            case .bytes, .file: break
            }
        }
        let requestComplete = file == nil && !streamed && !expectsContinue
        return PreparedRequest(
            headBytes: headBytes, framing: framing, inline: inline, file: file, expectsContinue: expectsContinue,
            keepAlive: keepAlive, requestComplete: requestComplete)
    }

    @inline(__always) nonisolated(nonsending) func send(
        _ prepared: sending PreparedRequest, on lease: ConnectionPool.Lease, url: HTTPURL, method: HTTPMethod,
        body bodyBox: HTTPClientRequest.BodyBox?, metrics: HTTPClientMetrics,
        observation: RequestObservation?, pool: ConnectionPool
    ) async throws(HTTPClientError) -> HTTPClientResponse {
        let (headBytes, framing, inline, file) = (prepared.headBytes, prepared.framing, prepared.inline, prepared.file)
        let (expectsContinue, keepAlive, requestComplete) = (
            prepared.expectsContinue, prepared.keepAlive, prepared.requestComplete
        )
        let sendInline = requestComplete ? inline : nil
        let connection = lease.connection
        let readTimeout = configuration.readTimeout
        Self.record(lease, head: headBytes, pool: pool, in: metrics)
        if requestComplete {
            // The whole request is written at once: the loop starts it, and the read that parses
            // the response head resumes this task. At most one hand-over to the loop and one back, with
            // no task executor switch and no promise.
            typealias Outcome = HTTP1ClientConnection.ResponseOutcome
            // A task not on the connection's loop (Swift's global executor) is resumed in the loop's batch.
            let offLoop = !connection.loop.inEventLoop
            // Unchecked (a checked one allocates a canary per request): the connection resumes it exactly once with
            // the response head or the failure (a closed loop fails it at once: `HTTPClientMetrics.post`).
            // The continuation that inherits the caller's executor (see `execute`): the resumer enqueues this task on the
            // executor it suspended on, so the hops to the `isolated` parameter and back would be two switches that
            // never move it.
            var resumed: UnsafeContinuation<Outcome, Never>?
            let outcome = await _unsafeInheritExecutor_withUnsafeContinuation {
                (continuation: UnsafeContinuation<Outcome, Never>) in
                resumed = continuation
                let tap = observation?.tap
                guard offLoop else {
                    // Already on the loop (a task preferring it): start at once, without queueing anything; the read
                    // that parses the head resumes the task on this loop.
                    HTTP1ClientConnection.startWhole(
                        on: connection, head: headBytes, inlineBody: sendInline, method: method, keepAlive: keepAlive,
                        readTimeout: readTimeout, metrics: metrics, tap: tap,
                        responder: .waiter(continuation, handOverVia: nil))
                    return
                }
                Self.post(
                    on: connection, head: headBytes, inlineBody: sendInline, method: method, keepAlive: keepAlive,
                    readTimeout: readTimeout, metrics: metrics, tap: tap, continuation: continuation)
            }
            // The loop may resume the continuation before this task has suspended: the runtime then tells the
            // sanitizer nothing, so the connection's writes (the head, the body's channel) are published by hand.
            if let resumed { ThreadSanitizer.acquire(resumed: resumed) }
            if outcome.started {
                observation?.attemptStarted()
                if let sendInline {
                    let expected: Int? = if case .contentLength(let length) = framing { length } else { nil }
                    observation?.bodySent(sendInline.readableBytes, expected: expected)
                }
            }
            // The head and body moved out of the outcome, not copied (a head's copy retains each of its parts). The
            // outcome is consumed explicitly: it lives in the task's frame, and `outcome.takeResult()` copied the
            // response start out of it and destroyed the frame's copy later.
            switch (consume outcome).takeResult() {
            case .success(let start):
                if let observation { observation.tell(.responseHead(start.head)) }
                return HTTPClientResponse(start, url: url, metrics: metrics)
            case .failure(let error):
                throw error
            }
        }
        // A body sent after the head: the exchange runs with the connection's loop as its executor,
        // so its awaits on the loop (the drain between parts, 100 Continue) resume on the loop's
        // own thread instead of hopping to a pool thread and back.
        return try await sendInPartsOnLoop(
            connection: connection, url: url, method: method, body: bodyBox, inline: inline,
            file: file, framing: framing, headBytes: headBytes, keepAlive: keepAlive,
            expectsContinue: expectsContinue, metrics: metrics, observation: observation)
    }

    /// Records in `metrics` what an attempt on `lease` (from `pool`) carries: its connection's setup, the request head,
    /// the proxy.
    // Synchronous and never inlined into `send`: the snapshot's proxy and setup values it copies would otherwise be
    // slots of every request's async frame. The pool's proxy is read only when there is one: an optional proxy copied
    // for every request went through its value witness, twice.
    @inline(never)
    static func record(
        _ lease: borrowing ConnectionPool.Lease, head headBytes: [UInt8], pool: ConnectionPool, in metrics: HTTPClientMetrics
    ) {
        metrics.update {
            $0.timings.nameResolved = lease.nameResolution
            $0.timings.connected = lease.connect
            $0.timings.secureConnected = lease.secureConnect
            $0.requestHead = headBytes
            // The hop's proxy, its connection's setup: written (over an earlier hop's) only when there is something to
            // write or to clear; most requests go straight over a reused connection.
            if pool.isProxied || lease.isNew || $0.hasSeldomSetFields {
                $0.proxy = pool.proxy
                $0.proxyHandshake = lease.proxyHandshake
                $0.connectAttempts = lease.connectAttempts
                $0.tcpInfo = nil
                $0.proxyConnect = lease.proxyConnect
            }
        }
    }

    /// Starts a whole request from a task off its connection's loop: the request waits in its metrics object for the
    /// loop, and its response head waits there for the loop's batch of hand-overs (`LoopCrossing`), with no closure
    /// either way.
    @inline(never)  // Out of `send`'s closure: inlined, the request's parts made it too large for `send` to be inlined.
    private static func post(
        on connection: LoopBound<HTTP1ClientConnection>, head: [UInt8], inlineBody: ByteBuffer?, method: HTTPMethod,
        keepAlive: Bool, readTimeout: Duration, metrics: HTTPClientMetrics, tap: HTTP1ClientConnection.ByteTap?,
        continuation: UnsafeContinuation<HTTP1ClientConnection.ResponseOutcome, Never>
    ) {
        metrics.post(
            PendingStart(
                connection: connection, head: head, inlineBody: inlineBody, method: method, keepAlive: keepAlive,
                readTimeout: readTimeout, tap: tap, continuation: continuation))
    }

    /// `sendInParts` with the connection's loop as the task executor (off the caller's executor, which `send`
    /// runs on).
    private func sendInPartsOnLoop(
        connection: LoopBound<HTTP1ClientConnection>, url: HTTPURL, method: HTTPMethod,
        body: HTTPClientRequest.BodyBox?, inline: ByteBuffer?, file: FileReader?,
        framing: HTTP1Serializer.BodyFraming, headBytes: [UInt8], keepAlive: Bool,
        expectsContinue: Bool, metrics: HTTPClientMetrics, observation: RequestObservation?
    ) async throws(HTTPClientError) -> HTTPClientResponse {
        try await withLoopPreference(connection.loop) { () async throws(HTTPClientError) -> HTTPClientResponse in
            try await sendInParts(
                on: connection, url: url, method: method, body: body?.body, inline: inline, file: file, framing: framing,
                headBytes: headBytes, keepAlive: keepAlive, expectsContinue: expectsContinue, metrics: metrics,
                observation: observation)
        }
    }

    /// Sends a request whose body follows its head in parts (a file, a stream, or after `100 Continue`).
    private func sendInParts(
        on connection: LoopBound<HTTP1ClientConnection>, url: HTTPURL, method: HTTPMethod, body: HTTPClientRequest.Body?,
        inline: ByteBuffer?, file: FileReader?, framing: HTTP1Serializer.BodyFraming, headBytes: [UInt8],
        keepAlive: Bool, expectsContinue: Bool, metrics: HTTPClientMetrics, observation: RequestObservation?
    ) async throws(HTTPClientError) -> HTTPClientResponse {
        let readTimeout = configuration.readTimeout
        let promise: Promise<HTTP1ClientConnection.ResponseStart, HTTPClientError>
        let exchangeID: HTTP1ClientConnection.ExchangeID
        do {
            (promise, exchangeID) = try await connection.loop.submit {
                let value = connection.value
                return value.start(
                    head: headBytes, inlineBody: nil, method: method, keepAlive: keepAlive,
                    requestComplete: false, readTimeout: readTimeout, metrics: metrics, tap: observation?.tap)
            }
        } catch {
            throw HTTPClientError(.shutDown, "the event loop shut down")
        }
        metrics.setAbortTarget(connection, exchangeID)
        let expectedBodyBytes: Int? = if case .contentLength(let length) = framing { length } else { nil }
        observation?.attemptStarted()
        var bodyProgress: (@Sendable (Int) -> Void)?
        if let observation {
            bodyProgress = { @Sendable count in observation.bodySent(count, expected: expectedBodyBytes) }
        }

        var sendBody = true
        if expectsContinue {
            let continueTimeout = configuration.expectContinueTimeout
            sendBody = await withUnsafeContinuation { continuation in
                connection.loop.execute {
                    connection.value.awaitContinue(timeout: continueTimeout, for: exchangeID, continuation: continuation)
                }
            }
        }
        if sendBody {
            do {
                try await pumpBody(
                    body, inline: inline, file: file, chunked: framing == .chunked, to: connection, exchange: exchangeID,
                    progress: bodyProgress)
            } catch {
                // The server may have answered early (413, 401) and closed: prefer its answer.
                if promise.isCompleted, let start = try? await promise.get() {
                    observation?.tell(.responseHead(start.head))
                    return HTTPClientResponse(head: start.head, body: start.body, url: url, metrics: metrics)
                }
                // An abort (deadline, cancellation) closes the connection under the pump:
                // report the abort, not the write that it made fail.
                if let abortError = metrics.abortError { throw abortError }
                throw error
            }
        }
        let start = try await promise.get()
        observation?.tell(.responseHead(start.head))
        return HTTPClientResponse(head: start.head, body: start.body, url: url, metrics: metrics)
    }

    /// Sends a body that was not sent with the head, waiting for the socket to drain between parts.
    private func pumpBody(
        _ body: HTTPClientRequest.Body?, inline: ByteBuffer?, file: FileReader?, chunked: Bool,
        to connection: LoopBound<HTTP1ClientConnection>, exchange: HTTP1ClientConnection.ExchangeID,
        progress: (@Sendable (Int) -> Void)? = nil
    ) async throws(HTTPClientError) {
        func write(_ buffer: ByteBuffer, last: Bool) async throws(HTTPClientError) {
            var parts: [ByteBuffer] = []
            if chunked {
                if buffer.readableBytes > 0 {
                    var head = ByteBuffer()
                    HTTP1Serializer.appendChunkHead(size: buffer.readableBytes, to: &head)
                    parts.append(head)
                    parts.append(buffer)
                    parts.append(ByteBuffer(bytes: [13, 10]))
                }
                if last { parts.append(ByteBuffer(string: "0\r\n\r\n")) }
            } else if buffer.readableBytes > 0 || last {
                parts.append(buffer)
            }
            let outgoing = parts
            let result = await withUnsafeContinuation { continuation in
                connection.loop.execute {
                    connection.value.writeBodyPart(outgoing, isLast: last, for: exchange, continuation: continuation)
                }
            }
            try result.get()
            progress?(buffer.readableBytes)
        }
        switch body {
        case .none:
            try await write(ByteBuffer(), last: true)
        case .bytes:
            try await write(inline ?? ByteBuffer(), last: true)
        case .file:
            guard let reader = file else { return }
            while true {
                let chunk: ByteBuffer
                do { chunk = try reader.read(upTo: 64 * 1024) } catch {
                    throw HTTPClientError(
                        .writeFailed, "reading the body file failed: \(error)", ioError: error, mayHaveBeenProcessed: true)
                }
                let last = chunk.readableBytes == 0
                try await write(chunk, last: last)
                if last { break }
            }
        case .segments(let segments, let pause):
            try await pumpSegments(segments, pause: pause, to: connection, exchange: exchange, write: write, progress: progress)
        case .replayable(_, let makeChunks):
            try await pumpBody(
                .stream(length: nil, makeChunks()), inline: nil, file: nil, chunked: chunked, to: connection, exchange: exchange,
                progress: progress)
        case .stream(_, let stream):
            do {
                for try await chunk in stream where chunk.readableBytes > 0 {
                    try await write(chunk, last: false)
                }
            } catch let error as HTTPClientError {
                throw error
            } catch {
                throw HTTPClientError(.writeFailed, "the request body stream failed: \(error)", mayHaveBeenProcessed: true)
            }
            try await write(ByteBuffer(), last: true)
        }
    }
}

/// Runs `body` preferring `loop` as its task executor, keeping `body`'s typed error.
private func withLoopPreference<T: Sendable>(
    _ loop: EventLoop,
    _ body: () async throws(HTTPClientError) -> T
) async throws(HTTPClientError) -> T {
    let result: Result<T, HTTPClientError> = await withTaskExecutorPreference(loop) {
        do throws(HTTPClientError) { return .success(try await body()) } catch { return .failure(error) }
    }
    return try result.get()
}

extension HTTPClientResponse {
    /// The response of an exchange that started: its head and body moved in from `start`, not copied.
    init(_ start: consuming HTTP1ClientConnection.ResponseStart, url: HTTPURL, metrics: HTTPClientMetrics) {
        // Swapped out for a head that holds nothing: read from the consumed start, the head was copied (a retain per
        // part) and the start's own destroyed after.
        var head = HTTPResponseHead(status: .ok, reasonPhrase: "")
        swap(&head, &start.head)
        self.head = head
        body = start.body
        self.url = url
        self.metrics = metrics
    }
}
