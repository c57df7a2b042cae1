/// One loop's share of an `HTTPServer`: its listener, its connections, and what they share (handler, limits, the
/// cached `Date` line). Lives on its loop.
final class ServerLoopContext {
    let loop: EventLoop
    let handler: any HTTPHandler
    let configuration: HTTPServerConfiguration
    private let counter: ConnectionCounter
    // The loop's alone, as everything here: each access below is a read, an assignment or one value's mutating call,
    // never held across a call out (the connections' callbacks and the waiters run on copies), so none pays for a
    // dynamic exclusivity check (about 20 instructions each, a dozen per connection).
    @exclusivity(unchecked) private var listener: SocketListener?
    /// The open connections, each at its `tableIndex`; freed places are reused (an array of references and a free
    /// list cost less per connection than a dictionary's entries).
    @exclusivity(unchecked) private var connectionSlots: [HTTPServerConnection?] = []
    @exclusivity(unchecked) private var freeConnectionSlots: [Int32] = []
    /// The number of connections open on this loop.
    @exclusivity(unchecked) private(set) var connectionCount = 0
    @exclusivity(unchecked) private var runningHandlers = 0
    @exclusivity(unchecked) private var isShuttingDown = false
    @exclusivity(unchecked) private var drainWaiters: [() -> Void] = []
    @exclusivity(unchecked) private var forceCloseTimer: TimerQueue<() -> Void>.ID?
    /// When each connection's timer wants it woken; the loop's one timer below is due at the earliest of them.
    @exclusivity(unchecked) private var deadlines = ConnectionDeadlines<HTTPServerConnection>()
    @exclusivity(unchecked) private var loopWake: (id: TimerQueue<() -> Void>.ID, at: Deadline)?
    /// Set while due connections are woken: a connection re-armed then waits for the loop timer set afterwards.
    @exclusivity(unchecked) private var isWaking = false
    private lazy var wakeCallback: () -> Void = { [weak self] in self?.deadlinesDue() }
    @exclusivity(unchecked) var dateCache = HTTPDateCache()
    /// The idle timeout, converted once: connections re-arm it after every response.
    let idleTimeoutNanoseconds: Int64
    /// The body-read timeout, converted once: a body arriving over many reads re-arms it after each.
    let bodyReadTimeoutNanoseconds: Int64
    /// The send timeout, converted once.
    let sendTimeoutNanoseconds: Int64
    /// Where response heads and small bodies are assembled, shared by the loop's connections: a
    /// head is serialized and handed to its stream in one go, so one buffer serves them all, and an
    /// idle connection holds none (10,000 idle keep-alive connections cost no head buffers).
    /// (No dynamic exclusivity check: it is only borrowed for one serialization or one write at a time, on the loop.)
    @exclusivity(unchecked) var scratch = ByteBuffer()
    /// Request parsers not lent to a connection: a connection borrows one when a request's bytes
    /// arrive and gives it back when it idles, so an idle connection holds no parser (about 300
    /// bytes), and a busy loop reuses the same few without allocating.
    @exclusivity(unchecked) private var spareParsers: [ParserSlot] = []
    /// Spares kept at most, so a burst of concurrent requests does not pin its parsers forever.
    static let maxSpareParsers = 256

    init(loop: EventLoop, handler: any HTTPHandler, configuration: HTTPServerConfiguration, counter: ConnectionCounter) {
        self.loop = loop
        self.handler = handler
        self.configuration = configuration
        self.counter = counter
        idleTimeoutNanoseconds = configuration.idleTimeout.nanoseconds
        bodyReadTimeoutNanoseconds = configuration.bodyReadTimeout.nanoseconds
        sendTimeoutNanoseconds = configuration.sendTimeout.nanoseconds
    }

    /// The handler's immediate response to `head`, if it has one. Called through a generic function, the handler is
    /// borrowed in place; calling the existential property's method directly copied the handler (and, for a struct
    /// holding a response, retained all of it) per request.
    func immediateResponse(to head: HTTPRequestHead) -> HTTPServerResponse? {
        Self.immediateResponse(of: handler, to: head)
    }

    private static func immediateResponse(of handler: some HTTPHandler, to head: HTTPRequestHead) -> HTTPServerResponse? {
        handler.immediateResponse(to: head)
    }

    @exclusivity(unchecked) private var lastExchangeID: UInt64 = 0

    /// An identifier for a new exchange, unique on this loop: a writer or body hook of an exchange that has ended
    /// finds its connection under another one and does nothing.
    func nextExchangeID() -> UInt64 {
        lastExchangeID &+= 1
        return lastExchangeID
    }

    /// A fresh request parser, reused when one is spare.
    func borrowParser() -> ParserSlot {
        spareParsers.popLast() ?? ParserSlot(HTTP1Parser(kind: .request, configuration: configuration.parser))
    }

    /// Takes back a parser from a connection that went idle.
    func returnParser(_ slot: ParserSlot) {
        guard spareParsers.count < Self.maxSpareParsers else { return }
        slot.parser.resetForNewStream()
        slot.exchange = nil
        spareParsers.append(slot)
    }

    /// Starts listening on `address`; returns the bound address.
    func listen(on address: SocketAddress, reusePort: Bool) throws(IOError) -> SocketAddress {
        let listener = try SocketListener(
            bindingTo: address, backlog: configuration.backlog, reusePort: reusePort, on: loop,
            onAccept: { [weak self] connection in self?.accept(connection) })
        self.listener = listener
        return listener.localAddress
    }

    private func accept(_ connection: AcceptedConnection) {
        let socket = connection.socket
        // Over the limit the connection is accepted and closed at once: the client sees a clean close instead of
        // waiting in the backlog, and the listener is not left readable forever.
        guard !isShuttingDown, counter.tryAcquire(limit: configuration.maxConnections) else {
            try? socket.close()
            return
        }
        do {
            var stream: any ByteStream = try SocketStream(accepted: connection, on: loop)
            if let security = configuration.transportSecurity {
                do {
                    stream = try security.wrap(stream, handshakeTimeout: configuration.handshakeTimeout)
                } catch {
                    // The certificate cannot be loaded: nothing can be served on this connection.
                    stream.close(error: error)
                    counter.release()
                    return
                }
            }
            if let observer = configuration.observer,
                let watcher = observer.connectionOpened(
                    HTTPServerConnectionStart(
                        remoteAddress: stream.remoteAddress, localAddress: stream.localAddress,
                        isSecure: configuration.transportSecurity != nil))
            {
                // Above TLS: the observer sees plaintext.
                stream = ObservedByteStream(wrapping: stream, observer: watcher)
            }
            let connection = HTTPServerConnection(stream: stream, context: self)
            insert(connection)
        } catch {
            // Registration failed (out of memory for epoll): this connection only.
            counter.release()
            try? socket.close()
        }
    }

    // MARK: Connection deadlines

    /// Wakes `connection` (`HTTPServerConnection.woke(at:)`) at `deadline`, or earlier than it asked before.
    func wake(_ connection: HTTPServerConnection, at deadline: Deadline) {
        deadlines.schedule(connection, at: deadline)
        if !isWaking { ensureLoopWake() }
    }

    /// `connection` needs no wake-up any more (it closed).
    func cancelWake(_ connection: HTTPServerConnection) {
        // The loop's timer is left: when it fires it finds nothing due and is set for what is.
        deadlines.remove(connection)
    }

    /// The number of connections waiting for a wake-up (for tests).
    package var scheduledWakeCount: Int { deadlines.count }

    private func ensureLoopWake() {
        guard let next = deadlines.earliest else { return }
        if let loopWake {
            if loopWake.at <= next { return }
            loop.cancelOnLoop(loopWake.id)
        }
        loopWake = (loop.scheduleOnLoop(at: next, wakeCallback), next)
    }

    private func deadlinesDue() {
        loopWake = nil
        let now = Deadline.now()
        isWaking = true
        while let connection = deadlines.popDue(at: now) { connection.woke(at: now) }
        isWaking = false
        ensureLoopWake()
    }

    private func insert(_ connection: HTTPServerConnection) {
        if let free = freeConnectionSlots.popLast() {
            connectionSlots[Int(free)] = connection
            connection.tableIndex = free
        } else {
            connection.tableIndex = Int32(connectionSlots.count)
            connectionSlots.append(connection)
        }
        connectionCount += 1
    }

    private var openConnections: [HTTPServerConnection] { connectionSlots.compactMap { $0 } }

    /// The connection table's capacity kept when the last connection closes (a kilobyte of references).
    static let keptTableCapacity = 128

    func connectionClosed(_ connection: HTTPServerConnection) {
        let index = Int(connection.tableIndex)
        guard index >= 0, index < connectionSlots.count, connectionSlots[index] === connection else { return }
        connectionSlots[index] = nil
        connection.tableIndex = -1
        connectionCount -= 1
        if connectionCount == 0 {
            // All gone: give the table's memory back rather than keep the largest burst's, unless it is small (a
            // server taking one connection at a time would otherwise allocate both arrays again for every one).
            let keep = connectionSlots.capacity <= Self.keptTableCapacity
            connectionSlots.removeAll(keepingCapacity: keep)
            freeConnectionSlots.removeAll(keepingCapacity: keep)
        } else {
            freeConnectionSlots.append(Int32(index))
        }
        counter.release()
        checkDrained()
    }

    func handlerStarted() {
        runningHandlers += 1
    }

    func handlerEnded() {
        runningHandlers -= 1
        checkDrained()
    }

    /// Stops accepting, closes idle connections, asks busy ones to close after their response, and closes what
    /// remains at `deadline`.
    func beginShutdown(deadline: Deadline) {
        guard !isShuttingDown else { return }
        isShuttingDown = true
        listener?.close()
        listener = nil
        for connection in openConnections { connection.shutdownRequested() }
        forceCloseTimer = loop.scheduleOnLoop(at: deadline) { [weak self] in self?.forceClose() }
        checkDrained()
    }

    private func forceClose() {
        forceCloseTimer = nil
        for connection in openConnections { connection.abort() }
    }

    /// Calls `body` once no connection is open and no handler runs.
    func whenDrained(_ body: @escaping () -> Void) {
        drainWaiters.append(body)
        checkDrained()
    }

    private func checkDrained() {
        guard isShuttingDown, connectionCount == 0, runningHandlers == 0, !drainWaiters.isEmpty else { return }
        if let forceCloseTimer { loop.cancelOnLoop(forceCloseTimer) }
        forceCloseTimer = nil
        let waiters = drainWaiters
        drainWaiters.removeAll()
        for waiter in waiters { waiter() }
    }
}

/// A request parser, and the exchange it is parsing, lent by its loop to one busy connection at a time.
final class ParserSlot {
    /// (No dynamic exclusivity check: one connection at a time parses with it, and a parse returns before its
    /// event is handled.)
    @exclusivity(unchecked) var parser: HTTP1Parser
    /// The borrowing connection's exchange under way; nil while the slot is spare.
    @exclusivity(unchecked) var exchange: HTTPServerConnection.ExchangeContext?

    init(_ parser: HTTP1Parser) { self.parser = parser }
}
