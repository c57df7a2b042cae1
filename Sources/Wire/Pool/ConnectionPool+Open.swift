extension ConnectionPool {
    /// Resolves, connects, secures and wraps a new connection, then reports the outcome to the
    /// machine (`opened`).
    func open(_ id: Machine.ConnectionID, on loop: EventLoop, call: Int? = nil, started: Deadline = .now()) async {
        let events = SetupEvents(listener: configuration.listener, call: call, connection: HTTPClientEvent.nextConnection())
        do throws(ConnectionPoolError) {
            let (stream, setup) = try await establish(on: loop, started: started, events: events)
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

    /// A new connection's stream, ready for HTTP: connected to the endpoint or tunnelled through the proxy, then
    /// secured when the pool speaks TLS, within the connect timeout. Not attached to the pool: `open` attaches it, and
    /// `HTTPClient.openStream(to:)` hands it to a caller that speaks HTTP itself.
    func establish(on loop: EventLoop, started: Deadline, events: SetupEvents)
        async throws(ConnectionPoolError) -> (LoopBound<any ByteStream>, SetupTimings)
    {
        let deadline = Deadline.after(configuration.connectTimeout)
        var (stream, setup) = try await connect(on: loop, started: started, deadline: deadline, events: events)
        setup.number = events.connection
        setup.started = started
        if let security = configuration.security, let port = key.port {
            // The handshake counts toward the connect timeout, as curl's does. It speaks to `key.host`: the
            // origin, also through a tunnel; the proxy itself only on its own pool (`.proxy` route).
            events.emit(.tlsStart(host: key.host))
            do {
                stream = try await security.secure(stream, host: key.host, port: port, deadline: deadline)
            } catch {
                events.emit(.tlsEnd(.failure(HTTPClientError(.tlsFailed, "\(error)", securityError: error))))
                if case .proxy(let proxy) = key.route { throw .atProxy(proxy, .securityFailed(error)) }
                throw .securityFailed(error)
            }
            setup.secureConnect = .now() - started
            if events.isOn {
                let secured = stream
                let info = try? await Self.onLoop(secured.loop) { secured.value.securityInfo }
                events.emit(.tlsEnd(.success(info ?? nil)))
            }
        }
        setup.total = .now() - started
        return (stream, setup)
    }

    /// The connected stream a new connection starts from, before TLS to `key.host`: a socket to the endpoint, or a
    /// tunnel through the proxy. Connecting to a proxy, and its failures, are the proxy's.
    private func connect(on loop: EventLoop, started: Deadline, deadline: Deadline, events: SetupEvents)
        async throws(ConnectionPoolError) -> (LoopBound<any ByteStream>, SetupTimings)
    {
        switch key.route {
        case .tunnel(let proxy, let host, let port):
            return try await openTunnel(
                to: host, port: port, through: proxy, on: loop, started: started, deadline: deadline)
        case .proxy(let proxy):
            if proxy.kind == .https && configuration.security == nil { throw .atProxy(proxy, .proxyNeedsTLS) }
            do {
                return try await connectToEndpoint(on: loop, started: started, deadline: deadline, events: events)
            } catch {
                throw .atProxy(proxy, error)
            }
        case .direct:
            return try await connectToEndpoint(on: loop, started: started, deadline: deadline, events: events)
        }
    }

    /// Resolves and connects to `key.endpoint`, runs the admission check, and wraps the socket in a stream.
    private func connectToEndpoint(on loop: EventLoop, started: Deadline, deadline: Deadline, events: SetupEvents)
        async throws(ConnectionPoolError) -> (LoopBound<any ByteStream>, SetupTimings)
    {
        var resolved: Deadline?
        let socket: LoopBound<Socket>
        // The race's attempts, as it reports them on the loop: for the metrics, and the listener as they happen.
        let attempts = Lock<[ConnectAttemptRecord]>([])
        let observer: @Sendable (ConnectAttemptRecord) -> Void = { record in
            attempts.withLock { list in
                if let index = list.firstIndex(where: { $0.started == record.started && $0.address == record.address }) {
                    list[index] = record
                } else {
                    list.append(record)
                }
            }
            if record.isOver {
                events.emit(
                    .connectEnd(address: record.address, error: record.error, abandoned: record.ended == nil))
            } else {
                events.emit(.connectStart(address: record.address))
            }
        }
        do throws(ConnectError) {
            switch key.endpoint {
            case .unixSocket(let path):
                let address: SocketAddress
                do { address = try SocketAddress(unixPath: path) } catch {
                    throw ConnectError(reason: .failed, host: path, port: nil, attempts: [])
                }
                socket = try await Connector.connect(
                    to: [address], host: path, port: nil, on: loop,
                    deadline: deadline, timeout: configuration.connectTimeout, observer: events.isOn ? observer : nil)
            case .host(let host, let port):
                // Bounded by the connect deadline and the loop's life, whatever the resolver does.
                events.emit(.dnsStart(host: host))
                let addresses: [SocketAddress]
                do {
                    addresses = try await Connector.resolve(
                        host: host, port: port, resolver: configuration.resolver,
                        for: loop, deadline: deadline, timeout: configuration.connectTimeout)
                } catch {
                    events.emit(.dnsEnd(host: host, result: .failure(error)))
                    throw error
                }
                events.emit(.dnsEnd(host: host, result: .success(addresses)))
                resolved = .now()
                socket = try await Connector.connect(
                    to: addresses, host: host, port: port, on: loop,
                    deadline: deadline, timeout: configuration.connectTimeout,
                    trafficClass: key.requirements.trafficClass, socketOptions: configuration.socketOptions,
                    observer: observer)
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
        let tried = attempts.withLock { $0 }.map { record in
            HTTPClientMetrics.ConnectAttempt(
                address: record.address, start: record.started - started, end: record.ended.map { $0 - started },
                error: record.error)
        }
        return (
            stream,
            SetupTimings(
                nameResolution: resolved.map { $0 - started }, connect: connected - started, connectAttempts: tried)
        )
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
        connection.number = setup.number
        connection.samplesTCPInfo = configuration.samplesTCPInfo
        connection.onRelease = { _, reusable, now in self.release(id, reusable: reusable, now: now) }
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

/// Tells the client's listener of one new connection's setup (DNS, connect attempts, TLS): a branch when there is none.
struct SetupEvents: Sendable {
    let listener: HTTPClientEventListener?
    /// The call the connection is opened for, if any.
    let call: Int?
    /// The connection's number.
    let connection: Int

    var isOn: Bool { listener != nil }

    func emit(_ kind: @autoclosure () -> HTTPClientEvent.Kind) {
        guard let listener else { return }
        listener(HTTPClientEvent(call: call, connection: connection, time: .now(), kind: kind()))
    }
}
