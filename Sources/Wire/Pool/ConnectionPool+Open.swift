extension ConnectionPool {
    /// Resolves, connects, secures and wraps a new connection, then reports the outcome to the
    /// machine (`opened`).
    func open(_ id: Machine.ConnectionID, on loop: EventLoop) async {
        let started = Deadline.now()
        do throws(ConnectionPoolError) {
            let deadline = Deadline.after(configuration.connectTimeout)
            var (stream, setup) = try await connect(on: loop, started: started, deadline: deadline)
            if let security = configuration.security, let port = key.port {
                // The handshake counts toward the connect timeout, as curl's does. It speaks to `key.host`: the
                // origin, also through a tunnel; the proxy itself only on its own pool (`.proxy` route).
                do {
                    stream = try await security.secure(stream, host: key.host, port: port, deadline: deadline)
                } catch {
                    if case .proxy(let proxy) = key.route { throw .atProxy(proxy, .securityFailed(error)) }
                    throw .securityFailed(error)
                }
                setup.secureConnect = .now() - started
            }
            let secureStream = stream
            let parserConfiguration = configuration.parserConfiguration
            let timings = setup
            // On the stream's loop: a tunnel's is the loop of the proxy connection it came from.
            try await Self.onLoop(secureStream.loop) { () throws -> Void in
                try self.attach(id, to: secureStream.value, parserConfiguration: parserConfiguration, setup: timings)
            }
        } catch {
            opened(id, .failure(error))
        }
    }

    /// The connected stream a new connection starts from, before TLS to `key.host`: a socket to the endpoint, or a
    /// tunnel through the proxy. Connecting to a proxy, and its failures, are the proxy's.
    private func connect(on loop: EventLoop, started: Deadline, deadline: Deadline) async throws(ConnectionPoolError)
        -> (LoopBound<any ByteStream>, SetupTimings)
    {
        switch key.route {
        case .tunnel(let proxy, let host, let port):
            return try await openTunnel(
                to: host, port: port, through: proxy, on: loop, started: started, deadline: deadline)
        case .proxy(let proxy):
            if proxy.kind == .https && configuration.security == nil { throw .atProxy(proxy, .proxyNeedsTLS) }
            do {
                return try await connectToEndpoint(on: loop, started: started, deadline: deadline)
            } catch {
                throw .atProxy(proxy, error)
            }
        case .direct:
            return try await connectToEndpoint(on: loop, started: started, deadline: deadline)
        }
    }

    /// Resolves and connects to `key.endpoint`, runs the admission check, and wraps the socket in a stream.
    private func connectToEndpoint(on loop: EventLoop, started: Deadline, deadline: Deadline)
        async throws(ConnectionPoolError) -> (LoopBound<any ByteStream>, SetupTimings)
    {
        var resolved: Deadline?
        let socket: LoopBound<Socket>
        do throws(ConnectError) {
            switch key.endpoint {
            case .unixSocket(let path):
                let address: SocketAddress
                do { address = try SocketAddress(unixPath: path) } catch {
                    throw ConnectError(reason: .failed, host: path, port: nil, attempts: [])
                }
                socket = try await Connector.connect(
                    to: [address], host: path, port: nil, on: loop,
                    deadline: deadline, timeout: configuration.connectTimeout)
            case .host(let host, let port):
                // Bounded by the connect deadline and the loop's life, whatever the resolver does.
                let addresses = try await Connector.resolve(
                    host: host, port: port, resolver: configuration.resolver,
                    for: loop, deadline: deadline, timeout: configuration.connectTimeout)
                resolved = .now()
                socket = try await Connector.connect(
                    to: addresses, host: host, port: port, on: loop,
                    deadline: deadline, timeout: configuration.connectTimeout,
                    trafficClass: key.requirements.trafficClass)
            }
        } catch {
            throw .connectFailed(error)
        }
        if let admission = key.requirements.admission {
            try await Self.admit(socket, by: admission, on: loop)
        }
        let connected = Deadline.now()
        let stream = try await Self.onLoop(loop) { () throws -> LoopBound<any ByteStream> in
            LoopBound(try SocketStream(socket: socket.value, on: loop), loop: loop)
        }
        return (stream, SetupTimings(nameResolution: resolved.map { $0 - started }, connect: connected - started))
    }

    /// Asks `admission` about a connected socket on Wire's blocking pool, neither on the loop nor on Swift's
    /// cooperative threads, since a check may block (a netlink dump, file reads); a refused socket is closed on its
    /// loop before the error is thrown.
    static func admit(_ socket: LoopBound<Socket>, by admission: any ConnectionAdmission, on loop: EventLoop)
        async throws(ConnectionPoolError)
    {
        let (local, remote) = try await onLoop(loop) { () throws -> (SocketAddress, SocketAddress) in
            (try socket.value.localAddress(), try socket.value.remoteAddress())
        }
        let refusal = await BlockingPool.shared.run { () -> String? in admission.refusal(local: local, remote: remote) }
        guard let reason = refusal else { return }
        try? await loop.submit { try? socket.value.close() }
        throw .notAdmitted(reason: reason, local: local, remote: remote)
    }

    /// Wraps the connected (and secured) stream in the HTTP connection and reports it established,
    /// in one job on the stream's loop: no event of the stream can reach the pool in between (a
    /// TLS stream delivers an alert or end of stream it already holds as soon as the connection
    /// attaches). A stream that closed before this, while nobody listened, is a failed connect
    /// with the error it closed with; one that closes after is an established connection closing.
    private func attach(
        _ id: Machine.ConnectionID, to stream: any ByteStream, parserConfiguration: HTTP1ParserConfiguration,
        setup: SetupTimings
    ) throws(ConnectionPoolError) {
        stream.eventLoop.preconditionInEventLoop()
        guard stream.isOpen else { throw .closedBeforeFirstRequest(stream.closeError) }
        let connection = HTTP1ClientConnection(stream: stream, parserConfiguration: parserConfiguration)
        connection.onRelease = { _, reusable in self.release(id, reusable: reusable) }
        connection.onIdleClose = { _ in self.connectionClosed(id) }
        opened(id, .success((LoopBound(connection, loop: stream.eventLoop), setup)))
    }

    /// Runs `body` on `loop`, keeping the pool's error type: a loop that closed is `.loopClosed`,
    /// a stream that could not be made `.setupFailed`.
    static func onLoop<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () throws -> T)
        async throws(ConnectionPoolError) -> T
    {
        do {
            return try await loop.submit(body)
        } catch let error as ConnectionPoolError {
            throw error
        } catch let error as IOError {
            throw .setupFailed(error)
        } catch let error as EventLoopClosedError {
            throw .loopClosed(error)
        } catch {
            // submit's body throws only the errors above.
            throw .closedBeforeFirstRequest(error)
        }
    }
}
