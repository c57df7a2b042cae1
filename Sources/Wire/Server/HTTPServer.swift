import Synchronization

/// An HTTP/1.1 server: one listener per event loop on a shared port (`SO_REUSEPORT`), each connection served on the
/// loop that accepted it.
///
/// ```swift
/// let group = try EventLoopGroup()
/// let server = HTTPServer(
///     configuration: HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 8080)),
///     group: group
/// ) { request, response in
///     try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "hello\n"))
/// }
/// let address = try await server.start()
/// // ...
/// await server.shutdown(gracePeriod: .seconds(5))
/// group.shutdown()
/// ```
///
/// Keep-alive and pipelining follow RFC 9112 §9.3: requests on a connection are answered in order. `Expect:
/// 100-continue` is answered when the handler starts reading the body (RFC 9110 §10.1.1). Malformed requests get
/// 400 (414, 431, 413, 501, 505 for the specific faults) with `Connection: close`, and the connection closes.
///
/// A running server released without `shutdown(gracePeriod:)` closes its listeners at once and shuts down as
/// `shutdown()` would (in-flight requests get the default grace period), and says so once on standard error.
public final class HTTPServer: Sendable {
    /// The listening address, limits and timeouts.
    public let configuration: HTTPServerConfiguration
    /// The loops connections are served on; the server does not own them.
    public let group: EventLoopGroup
    private let handler: any HTTPHandler
    private let counter = ConnectionCounter()
    private let lifeCycle = Lock(LifeCycle.idle)

    private enum LifeCycle {
        case idle
        case starting
        case running(contexts: [LoopBound<ServerLoopContext>], address: SocketAddress)
        case stopped
    }

    /// Creates a server; nothing listens before `start()`.
    /// - Parameters:
    ///   - configuration: Address, limits and timeouts.
    ///   - group: The loops to serve on; one listener per loop.
    ///   - handler: Answers requests.
    public init(configuration: HTTPServerConfiguration, group: EventLoopGroup, handler: some HTTPHandler) {
        self.configuration = configuration
        self.group = group
        self.handler = handler
    }

    /// Creates a server whose handler is a closure.
    /// - Parameters:
    ///   - configuration: Address, limits and timeouts.
    ///   - group: The loops to serve on.
    ///   - handler: Called once per request, in a task on the connection's loop.
    public convenience init(
        configuration: HTTPServerConfiguration,
        group: EventLoopGroup,
        handler: @escaping @Sendable (HTTPServerRequest, HTTPResponseWriter) async throws -> Void
    ) {
        self.init(configuration: configuration, group: group, handler: HTTPClosureHandler(handler))
    }

    /// Starts listening on every loop of the group.
    /// - Returns: The bound address (with the actual port when the configuration asked for port 0).
    /// - Throws: `HTTPServerError` of kind `.invalidConfiguration` (before anything listens), `.bindFailed`
    ///   carrying the `IOError`, or `.alreadyStarted`.
    public func start() async throws -> SocketAddress {
        try beginStarting()
        var contexts: [LoopBound<ServerLoopContext>] = []
        var address = configuration.address
        do {
            for loop in group.loops {
                let requested = address
                let (context, bound) = try await loop.submit(makeListener(on: loop, requested: requested))
                contexts.append(context)
                // The first listener picks the port when 0 was asked; the others join it.
                address = bound
            }
        } catch {
            for context in contexts {
                try? await context.loop.submit { context.value.beginShutdown(deadline: .now()) }
            }
            throw abortStarting(error)
        }
        return finishStarting(contexts, address: address)
    }

    /// `start()` for code that runs without Swift concurrency (profiling harnesses under valgrind, which cannot
    /// follow the global executor's threads): blocks the calling thread, which must not be one of the group's.
    /// - Returns: The bound address.
    /// - Throws: As `start()`.
    package func startBlocking() throws(HTTPServerError) -> SocketAddress {
        try beginStarting()
        var contexts: [LoopBound<ServerLoopContext>] = []
        var address = configuration.address
        for loop in group.loops {
            let listen = makeListener(on: loop, requested: address)
            switch loop.runBlocking({ Result { try listen() } }) {
            case .success(let (context, bound)):
                contexts.append(context)
                address = bound
            case .failure(let error):
                for context in contexts { context.loop.runBlocking { context.value.beginShutdown(deadline: .now()) } }
                throw abortStarting(error)
            }
        }
        return finishStarting(contexts, address: address)
    }

    /// Moves from idle to starting, and prepares the transport security once.
    private func beginStarting() throws(HTTPServerError) {
        try configuration.validate()
        try lifeCycle.withLock { (state) throws(HTTPServerError) in
            guard case .idle = state else { throw HTTPServerError(.alreadyStarted) }
            state = .starting
        }
        if let security = configuration.transportSecurity {
            do { try security.prepare() } catch {
                lifeCycle.withLock { $0 = .idle }
                throw HTTPServerError(.securityUnavailable, detail: "\(error)", underlying: error)
            }
        }
    }

    /// The work, run on `loop`, that makes its context and listener.
    private func makeListener(
        on loop: EventLoop, requested: SocketAddress
    ) -> @Sendable () throws -> (LoopBound<ServerLoopContext>, SocketAddress) {
        let (handler, configuration, counter) = (self.handler, self.configuration, self.counter)
        // Several loops share the port only when there are several.
        let reusePort = group.loops.count > 1
        return {
            let context = ServerLoopContext(loop: loop, handler: handler, configuration: configuration, counter: counter)
            let bound = try context.listen(on: requested, reusePort: reusePort)
            return (LoopBound(context, loop: loop), bound)
        }
    }

    /// Back to idle after a listener failed (those already made were shut down by the caller).
    private func abortStarting(_ error: any Error) -> HTTPServerError {
        lifeCycle.withLock { $0 = .idle }
        return HTTPServerError(.bindFailed, detail: configuration.address.description, underlying: error)
    }

    /// Records the running contexts.
    private func finishStarting(_ contexts: [LoopBound<ServerLoopContext>], address: SocketAddress) -> SocketAddress {
        lifeCycle.withLock { $0 = .running(contexts: contexts, address: address) }
        return address
    }

    /// The bound address while running.
    public var localAddress: SocketAddress? {
        lifeCycle.withLock { state in
            if case .running(_, let address) = state { return address }
            return nil
        }
    }

    /// The number of connections open now, over all loops.
    public var connectionCount: Int { counter.current }

    deinit {
        guard case .running(let contexts, _) = lifeCycle.withLock({ $0 }) else { return }
        ImplicitShutdownWarning.emit(for: "HTTPServer")
        // The grace period `shutdown()` gives by default.
        let deadline = Deadline.after(.seconds(10))
        for context in contexts {
            context.loop.execute { context.value.beginShutdown(deadline: deadline) }
        }
    }

    /// Shuts down gracefully: stops accepting, closes idle connections at once, lets in-flight requests finish
    /// (their responses say `Connection: close`), and closes whatever is still open after `gracePeriod`. Returns
    /// when every connection is closed and every handler has returned. Call before shutting the loops down.
    /// - Parameter gracePeriod: How long in-flight requests may take.
    public func shutdown(gracePeriod: Duration = .seconds(10)) async {
        let contexts = lifeCycle.withLock { state -> [LoopBound<ServerLoopContext>] in
            defer { state = .stopped }
            if case .running(let contexts, _) = state { return contexts }
            return []
        }
        let deadline = Deadline.after(gracePeriod)
        await withTaskGroup(of: Void.self) { group in
            for context in contexts {
                group.addTask {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        context.loop.execute {
                            context.value.beginShutdown(deadline: deadline)
                            context.value.whenDrained { continuation.resume() }
                        }
                    }
                }
            }
        }
    }
}
