import Synchronization

/// The keep-alive pool for one origin (scheme, host, port): hands connections to requests,
/// opens new ones within the limit, parks released ones, and closes idle ones on time.
///
/// Decisions are `ConnectionPoolStateMachine`'s, made under one lock; this shell performs the
/// resulting actions after releasing it (connecting, closing, timers, resuming waiters), so no
/// I/O or user code ever runs while the lock is held.
final class ConnectionPool: Sendable {
    typealias Machine = ConnectionPoolStateMachine

    /// What identifies an origin's pool.
    struct Key: Hashable, Sendable, CustomStringConvertible {
        var scheme: String
        var host: String
        var port: Int?
        /// The security settings' identity (`ClientTransportSecurity.poolKey`), for https.
        var security: String?

        init(_ url: HTTPURL, security: String? = nil) {
            scheme = url.scheme
            host = url.host
            port = url.port
            self.security = security
        }

        /// Every request to this pool goes to the Unix socket at `path`.
        init(unixSocketPath path: String) {
            scheme = "http+unix"
            host = path
            port = nil
            security = nil
        }

        var description: String { port.map { "\(scheme)://\(host):\($0)" } ?? "\(scheme)://\(host)" }
    }

    /// A connection handed to a request.
    struct Lease: Sendable {
        let connection: LoopBound<HTTP1ClientConnection>
        /// Whether the connection was opened for this request (false: reused from the pool).
        let isNew: Bool
        /// Whether the request joins others in flight on the connection (pipelining).
        let isPipelined: Bool
        /// Time spent resolving the name and connecting, when new.
        let nameResolution: Duration?
        let connect: Duration?
        /// Time until the TLS handshake finished, when new and secured.
        let secureConnect: Duration?
    }

    /// The settings a pool needs.
    struct Configuration: Sendable {
        var maxConnections: Int
        var idleTimeout: Duration
        /// Requests allowed in flight on one connection: 1 turns pipelining off.
        var maxPipelined: Int = 1
        var connectTimeout: Duration
        var resolver: any Resolver
        var parserConfiguration: HTTP1ParserConfiguration
        /// The TLS layer, for https origins.
        var security: (any ClientTransportSecurity)? = nil
    }

    private struct Opened: Sendable {
        var connection: LoopBound<HTTP1ClientConnection>
        var nameResolution: Duration?
        var connect: Duration
        var secureConnect: Duration?
        var isFresh: Bool
    }

    private struct State {
        var machine: Machine
        var waiters: [Machine.RequestID: CheckedContinuation<Result<Lease, HTTPClientError>, Never>] = [:]
        var connections: [Machine.ConnectionID: Opened] = [:]
        var idleTimers: [Machine.ConnectionID: Scheduled] = [:]
        var nextRequestID = 0
    }

    let key: Key
    private let configuration: Configuration
    private let group: EventLoopGroup
    private let state: Mutex<State>

    init(key: Key, configuration: Configuration, group: EventLoopGroup) {
        self.key = key
        self.configuration = configuration
        self.group = group
        state = Mutex(State(machine: Machine(maxConnections: configuration.maxConnections, idleTimeout: configuration.idleTimeout,
                                                 maxPipelined: configuration.maxPipelined)))
    }

    /// Counts for diagnostics and tests.
    var counts: (connections: Int, idle: Int, waiters: Int) {
        state.withLock { ($0.machine.connectionCount, $0.machine.idleCount, $0.machine.waiterCount) }
    }

    // MARK: Requests

    /// Waits for a connection. `pipelinable` lets the request share a connection with others in
    /// flight when the pool pipelines. `registerCancel` receives a closure that abandons the wait
    /// (deadline or cancellation) with a given error.
    func lease(pipelinable: Bool = false, registerCancel: (@escaping @Sendable (HTTPClientError) -> Void) -> Void) async throws(HTTPClientError) -> Lease {
        let id = state.withLock { state -> Machine.RequestID in
            defer { state.nextRequestID += 1 }
            return Machine.RequestID(value: state.nextRequestID)
        }
        registerCancel { [weak self] error in self?.abandonWait(id, error: error) }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Lease, HTTPClientError>, Never>) in
            let actions = state.withLock { state -> [Machine.Action] in
                state.waiters[id] = continuation
                return state.machine.requestArrived(id, pipelinable: pipelinable, now: .now())
            }
            perform(actions)
        }
        return try result.get()
    }

    private func abandonWait(_ id: Machine.RequestID, error: HTTPClientError) {
        let continuation = state.withLock { state -> CheckedContinuation<Result<Lease, HTTPClientError>, Never>? in
            guard let continuation = state.waiters.removeValue(forKey: id) else { return nil }
            _ = state.machine.requestCancelled(id)
            return continuation
        }
        continuation?.resume(returning: .failure(error))
    }

    /// A request is done with a connection.
    func release(_ id: Machine.ConnectionID, reusable: Bool) {
        perform(state.withLock { state -> [Machine.Action] in
            let actions = state.machine.connectionReleased(id, reusable: reusable, now: .now())
            // A connection that closed while leased is forgotten when a holder lets go of it (a close
            // action forgets it itself, after closing it).
            if !state.machine.tracks(id) && !actions.contains(.closeConnection(id)) {
                state.connections[id] = nil
            }
            return actions
        })
    }

    /// An idle connection closed on its own.
    func connectionClosed(_ id: Machine.ConnectionID) {
        perform(state.withLock { state -> [Machine.Action] in
            // An idle connection is forgotten at once, so a long-lived client does not keep every connection a
            // server ever closed. A leased one may have a lease on its way to a request (decided, not yet
            // delivered): its entry stays until that request releases it.
            let leased = state.machine.isLeased(id)
            let actions = state.machine.connectionClosed(id)
            if !leased { state.connections[id] = nil }
            return actions
        })
    }

    /// How many connections the shell holds on to (open, or leased and closed but not yet released): for tests
    /// that check closed connections are let go.
    var retainedConnectionCount: Int { state.withLock { $0.connections.count } }

    /// Closes idle connections and fails waiters; leased connections close when released.
    func shutDown() {
        perform(state.withLock { $0.machine.shutDown() })
    }

    // MARK: Actions

    private func perform(_ actions: [Machine.Action], connectError: HTTPClientError? = nil) {
        for action in actions {
            switch action {
            case .lease(let connectionID, let requestID, let pipelined):
                let (waiter, lease) = state.withLock { state -> (CheckedContinuation<Result<Lease, HTTPClientError>, Never>?, Lease?) in
                    guard var opened = state.connections[connectionID] else { return (nil, nil) }
                    let lease = Lease(connection: opened.connection, isNew: opened.isFresh, isPipelined: pipelined,
                                      nameResolution: opened.isFresh ? opened.nameResolution : nil, connect: opened.isFresh ? opened.connect : nil,
                                      secureConnect: opened.isFresh ? opened.secureConnect : nil)
                    opened.isFresh = false
                    state.connections[connectionID] = opened
                    return (state.waiters.removeValue(forKey: requestID), lease)
                }
                if let waiter, let lease {
                    waiter.resume(returning: .success(lease))
                } else if let waiter {
                    // The connection closed and was forgotten between the decision and now (another request
                    // pipelined on it released it): fail this one rather than leave it waiting.
                    waiter.resume(returning: .failure(HTTPClientError(
                        .connectionReset, "the connection closed before the request could use it",
                        failedBeforeResponse: true)))
                } else if lease != nil {
                    // The waiter gave up between the decision and now: give the connection back.
                    release(connectionID, reusable: true)
                }
            case .createConnection(let connectionID):
                let loop = group.next()
                Task { await self.open(connectionID, on: loop) }
            case .closeConnection(let connectionID):
                let opened = state.withLock { $0.connections.removeValue(forKey: connectionID) }
                if let connection = opened?.connection {
                    connection.loop.execute { connection.value.close() }
                }
            case .scheduleIdleTimeout(let connectionID, let deadline):
                guard let loop = state.withLock({ $0.connections[connectionID]?.connection.loop }) else { continue }
                let timer = loop.schedule(at: deadline) { [weak self] in self?.idleTimeoutFired(connectionID) }
                state.withLock { $0.idleTimers[connectionID] = timer }
            case .cancelIdleTimeout(let connectionID):
                state.withLock { $0.idleTimers.removeValue(forKey: connectionID) }?.cancel()
            case .failRequest(let requestID, let failure):
                let waiter = state.withLock { $0.waiters.removeValue(forKey: requestID) }
                let error: HTTPClientError = switch failure {
                case .connectFailed: connectError ?? HTTPClientError(.connectFailed, "could not connect to \(key)")
                case .shutDown: HTTPClientError(.shutDown, "the client is shut down")
                }
                waiter?.resume(returning: .failure(error))
            }
        }
    }

    private func idleTimeoutFired(_ id: Machine.ConnectionID) {
        perform(state.withLock { state -> [Machine.Action] in
            state.idleTimers[id] = nil
            return state.machine.idleTimeoutFired(id, now: .now())
        })
    }

    /// Wraps the connected (and secured) stream in the HTTP connection and reports it established,
    /// in one job on the stream's loop: no event of the stream can reach the pool in between (a
    /// TLS stream delivers an alert or end of stream it already holds as soon as the connection
    /// attaches). A stream that closed before this, while nobody listened, is a failed connect
    /// with the error it closed with; one that closes after is an established connection closing.
    private func attach(_ id: Machine.ConnectionID, to stream: any ByteStream, parserConfiguration: HTTP1ParserConfiguration,
                        timings: (nameResolution: Duration?, connect: Duration, secureConnect: Duration?)) throws(HTTPClientError) {
        stream.eventLoop.preconditionInEventLoop()
        guard stream.isOpen else { throw Self.closedBeforeUse(stream.closeError) }
        let connection = HTTP1ClientConnection(id: id, stream: stream, parserConfiguration: parserConfiguration)
        connection.onRelease = { connection, reusable in self.release(connection.id, reusable: reusable) }
        connection.onIdleClose = { connection in self.connectionClosed(connection.id) }
        let opened = Opened(connection: LoopBound(connection, loop: stream.eventLoop), nameResolution: timings.nameResolution,
                            connect: timings.connect, secureConnect: timings.secureConnect, isFresh: true)
        perform(state.withLock { state -> [Machine.Action] in
            state.connections[id] = opened
            return state.machine.connectionEstablished(id, now: .now())
        })
    }

    /// The error of a new connection whose stream closed before the pool could use it.
    private static func closedBeforeUse(_ error: (any Error)?) -> HTTPClientError {
        let prefix = "the connection closed before its first request"
        switch error {
        case let ioError as IOError:
            let code: HTTPClientError.Code = ioError.errno == .connectionReset || ioError.errno == .brokenPipe ? .connectionReset : .connectFailed
            return HTTPClientError(code, "\(prefix): \(ioError)", ioError: ioError, failedBeforeResponse: true)
        case let error as EventLoopClosedError:
            return HTTPClientError(.connectFailed, "\(prefix): \(error)", failedBeforeResponse: true)
        case let error?:
            // A security layer's error (a TLS alert, a truncated stream) keeps its precise reason.
            return HTTPClientError(.tlsFailed, "\(prefix): \(error)", securityError: error, failedBeforeResponse: true)
        case nil:
            return HTTPClientError(.connectFailed, prefix, failedBeforeResponse: true)
        }
    }

    /// Resolves, connects and wraps a new connection, then reports it to the state machine.
    private func open(_ id: Machine.ConnectionID, on loop: EventLoop) async {
        let started = Deadline.now()
        var resolved: Deadline?
        do {
            let socket: LoopBound<Socket>
            if let path = key.scheme == "http+unix" ? key.host : nil {
                let address: SocketAddress
                do { address = try SocketAddress(unixPath: path) } catch {
                    throw ConnectError(reason: .failed, host: path, port: nil, attempts: [])
                }
                socket = try await Connector.connect(to: [address], host: path, port: nil, on: loop,
                                                     deadline: .after(configuration.connectTimeout), timeout: configuration.connectTimeout)
            } else {
                let deadline = Deadline.after(configuration.connectTimeout)
                // Bounded by the connect deadline and the loop's life, whatever the resolver does.
                let addresses = try await Connector.resolve(host: key.host, port: key.port ?? 80, resolver: configuration.resolver,
                                                            for: loop, deadline: deadline, timeout: configuration.connectTimeout)
                resolved = .now()
                socket = try await Connector.connect(to: addresses, host: key.host, port: key.port, on: loop,
                                                     deadline: deadline, timeout: configuration.connectTimeout)
            }
            let connected = Deadline.now()
            let parserConfiguration = configuration.parserConfiguration
            let pool = self
            var stream = try await loop.submit { () throws -> LoopBound<any ByteStream> in
                LoopBound(try SocketStream(socket: socket.value, on: loop), loop: loop)
            }
            var secured: Deadline?
            if let security = configuration.security {
                // The handshake counts toward the connect timeout, as curl's does.
                do {
                    stream = try await security.secure(stream, host: key.host, port: key.port ?? 443,
                                                       deadline: started + configuration.connectTimeout)
                } catch {
                    throw HTTPClientError(.tlsFailed, "\(error)", securityError: error)
                }
                secured = .now()
            }
            let secureStream = stream
            let timings = (nameResolution: resolved.map { $0 - started }, connect: connected - started, secureConnect: secured.map { $0 - started })
            try await loop.submit { () throws -> Void in
                try pool.attach(id, to: secureStream.value, parserConfiguration: parserConfiguration, timings: timings)
            }
        } catch {
            let clientError: HTTPClientError
            if let error = error as? HTTPClientError {
                clientError = error
            } else if let connectError = error as? ConnectError {
                let code: HTTPClientError.Code = connectError.reason == .timedOut ? .connectTimeout : .connectFailed
                clientError = HTTPClientError(code, connectError.description, connectError: connectError)
            } else {
                clientError = HTTPClientError(.connectFailed, "\(error)", ioError: error as? IOError)
            }
            perform(state.withLock { $0.machine.connectionFailed(id) }, connectError: clientError)
        }
    }
}
