extension ConnectionPool {
    /// Why `sendConnect` got no answer: no connection to the proxy, or the exchange on it failed.
    enum ConnectExchangeFailure: Error, Sendable {
        case lease(ConnectionPoolError)
        case exchange(HTTPClientError)
    }

    /// Sends `CONNECT` (its serialized `head`) on a connection of this pool, whose connections go to an HTTP proxy, and
    /// returns the proxy's answer with the lease it came on. The one `CONNECT` implementation: behind
    /// `HTTPClient.connect(to:via:)` and behind the pools whose connections are tunnels.
    ///
    /// A 2xx answer turns the connection into the answer's `tunnel` (it leaves this pool); any other answer is an
    /// ordinary response, and the connection comes back to the pool once its body is read. A pooled connection the
    /// proxy closed just as it was reused never saw the request: it is sent again on a fresh one, once.
    ///
    /// - Parameters:
    ///   - head: The request head, as written.
    ///   - readTimeout: How long the proxy may stay silent.
    ///   - retriesStaleConnections: Whether to send again on a fresh connection (see above).
    ///   - metrics: Where the exchange's timings and addresses go; its abort (a deadline, a cancelled task) ends the
    ///     wait for a connection or the exchange.
    func sendConnect(
        head: [UInt8], readTimeout: Duration, retriesStaleConnections: Bool, metrics: HTTPClientMetrics
    ) async throws(ConnectExchangeFailure) -> (HTTP1ClientConnection.ResponseStart, Lease) {
        metrics.update { $0.requestHead = head }
        var attempt = 0
        while true {
            let lease: Lease
            do {
                lease = try await self.lease { cancel in metrics.setAbortTarget { _ in cancel() } }
            } catch {
                if case .abandoned = error, let abortError = metrics.abortError { throw .exchange(abortError) }
                throw .lease(error)
            }
            metrics.update {
                $0.timings.nameResolved = lease.nameResolution
                $0.timings.connected = lease.connect
                $0.timings.secureConnected = lease.secureConnect
                $0.isReusedConnection = !lease.isNew
            }
            let connection = lease.connection
            do {
                let (promise, exchangeID) = try await connection.loop.submit {
                    let value = connection.value
                    metrics.update {
                        $0.remoteAddress = value.remoteAddress
                        $0.localAddress = value.localAddress
                        $0.transportSecurity = value.securityInfo
                    }
                    return value.start(
                        head: head, inlineBody: nil, method: .connect, keepAlive: true,
                        requestComplete: true, readTimeout: readTimeout, metrics: metrics)
                }
                metrics.setAbortTarget(connection, exchangeID)
                return (try await promise.get(), lease)
            } catch let error as HTTPClientError {
                if !lease.isNew && error.failedBeforeResponse && !metrics.wasAborted && attempt == 0
                    && retriesStaleConnections
                {
                    attempt += 1
                    metrics.update { $0.retries += 1 }
                    continue
                }
                throw .exchange(error)
            } catch {
                throw .exchange(HTTPClientError(.shutDown, "the event loop shut down"))
            }
        }
    }

    /// Opens a connection of a `.tunnel` route up to the point where TLS to the origin (or HTTP) starts: a `CONNECT`
    /// on a connection of the proxy's pool, or a SOCKS handshake on a connection of its own. Nothing of the tunnelled
    /// protocol is written before the proxy reports the tunnel open (RFC 9110 §9.3.6).
    ///
    /// - Returns: The tunnel's stream, with the times (since `started`) of name resolution and connection to the
    ///   proxy, and how long its handshake took.
    func openTunnel(
        to host: String, port: Int, through proxy: Proxy, on loop: EventLoop, started: Deadline, deadline: Deadline
    ) async throws(ConnectionPoolError) -> (LoopBound<any ByteStream>, SetupTimings) {
        if proxy.kind.isSOCKS {
            return try await openSOCKSTunnel(
                to: host, port: port, through: proxy, on: loop, started: started, deadline: deadline)
        }
        guard let setup = configuration.tunnel, let proxyPool = setup.proxyPool else {
            throw .atProxy(proxy, .proxyNeedsTLS)
        }
        let metrics = HTTPClientMetrics(start: started)
        let timeout = configuration.connectTimeout
        let timer = loop.schedule(at: deadline) {
            metrics.abort(HTTPClientError(.connectTimeout, "the proxy did not open the tunnel within \(timeout)"))
        }
        defer { timer.cancel() }
        let start: HTTP1ClientConnection.ResponseStart
        let lease: Lease
        let sent = Deadline.now()
        do {
            (start, lease) = try await proxyPool.sendConnect(
                head: setup.connectHead, readTimeout: setup.readTimeout,
                retriesStaleConnections: setup.retriesStaleConnections, metrics: metrics)
        } catch {
            switch error {
            case .lease(let error):
                // Already said to be at the proxy by the proxy's pool.
                throw error
            case .exchange(let error):
                throw .atProxy(proxy, .proxyExchangeFailed(error))
            }
        }
        let answered = Deadline.now()
        guard let opened = start.tunnel else {
            // Read (a bounded part of) the refusal's body, so that the connection can serve the proxy's next request
            // (the same CONNECT with credentials); a body too large or too slow closes it instead.
            do { _ = try await start.body.collect(upTo: 64 * 1024) } catch {}
            throw .atProxy(proxy, .proxyRefused(start.head, request: setup.connectHead))
        }
        guard let stream = opened.take() else {
            throw .atProxy(proxy, .proxyExchangeFailed(HTTPClientError(.connectionClosed, "the tunnel was taken already")))
        }
        guard opened.leftover.readableBytes == 0 else {
            try? await stream.loop.submit { stream.value.close(error: nil) }
            throw .atProxy(proxy, .proxyHandshakeFailed(.earlyBytes(opened.leftover.readableBytes)))
        }
        // A reused connection to the proxy reports no setup of its own: it was connected when the CONNECT went out.
        return (
            stream,
            SetupTimings(
                nameResolution: lease.nameResolution, connect: lease.connect ?? (sent - started),
                proxyHandshake: answered - sent,
                proxyConnect: HTTPClientMetrics.ProxyConnect(requestHead: setup.connectHead, responseHead: start.head))
        )
    }

    /// A tunnel through a SOCKS proxy: connect to it, resolve the origin first for SOCKS 4 and 5 (with the pool's
    /// resolver), then the handshake.
    private func openSOCKSTunnel(
        to host: String, port: Int, through proxy: Proxy, on loop: EventLoop, started: Deadline, deadline: Deadline
    ) async throws(ConnectionPoolError) -> (LoopBound<any ByteStream>, SetupTimings) {
        var target = SOCKSTarget.forHost(host, port: port, through: proxy.kind)
        if target == nil {
            // SOCKS 4 and 5 send an address: the client resolves the origin's name, as curl does, with Wire's resolver.
            let addresses: [SocketAddress]
            do throws(ConnectError) {
                addresses = try await Connector.resolve(
                    host: host, port: port, resolver: configuration.resolver, for: loop, deadline: deadline,
                    timeout: configuration.connectTimeout)
            } catch {
                throw .connectFailed(error)
            }
            let usable = proxy.kind == .socks4 ? addresses.filter { $0.family == .ipv4 } : addresses
            guard let address = usable.first else {
                throw .atProxy(proxy, .proxyHandshakeFailed(.socks(.addressFamilyNotSupported)))
            }
            target = .address(address)
        }
        guard let target else { throw .atProxy(proxy, .proxyHandshakeFailed(.socks(.invalidHostName))) }
        let machine: SOCKSStreamHandshake.Machine
        do throws(SOCKSError) {
            machine =
                proxy.kind == .socks4 || proxy.kind == .socks4a
                ? .v4(try SOCKS4Handshake(target: target, userID: proxy.credentials?.user ?? ""))
                : .v5(try SOCKS5Handshake(target: target, credentials: proxy.credentials))
        } catch {
            throw .atProxy(proxy, .proxyHandshakeFailed(.socks(error)))
        }
        let resolvedProxy: Deadline?
        let socket: LoopBound<Socket>
        do throws(ConnectError) {
            let addresses = try await Connector.resolve(
                host: proxy.host, port: proxy.port, resolver: configuration.resolver, for: loop, deadline: deadline,
                timeout: configuration.connectTimeout)
            resolvedProxy = .now()
            socket = try await Connector.connect(
                to: addresses, host: proxy.host, port: proxy.port, on: loop, deadline: deadline,
                timeout: configuration.connectTimeout, trafficClass: key.requirements.trafficClass,
                socketOptions: configuration.socketOptions)
        } catch {
            throw .atProxy(proxy, .connectFailed(error))
        }
        if let admission = key.requirements.admission {
            do { try await Self.admit(socket, by: admission, on: loop) } catch { throw .atProxy(proxy, error) }
        }
        let connected = Deadline.now()
        let stream = try await Self.onLoop(loop) { () throws -> LoopBound<any ByteStream> in
            LoopBound(try SocketStream(socket: socket.value, on: loop), loop: loop)
        }
        do {
            let tunnel = try await SOCKSStreamHandshake.run(stream, machine: machine, deadline: deadline)
            return (
                tunnel,
                SetupTimings(
                    nameResolution: resolvedProxy.map { $0 - started }, connect: connected - started,
                    proxyHandshake: .now() - connected)
            )
        } catch {
            throw .atProxy(proxy, .proxyHandshakeFailed(error))
        }
    }
}
