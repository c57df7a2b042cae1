import Synchronization

/// The keep-alive pool for one origin (`Key`): hands connections to requests, opens new ones
/// within the limit, parks released ones, and closes idle ones on time.
///
/// Decisions are `ConnectionPoolStateMachine`'s, made under one lock. The machine is the one
/// record of which connections the pool holds and in what state; this shell keeps only what a
/// value type cannot hold, the objects, in one table that follows the machine: an established
/// connection gets its entry when the machine takes it, and loses it, with its idle timer, in the
/// same locked step in which the machine lets it go. Everything an action needs from the table is
/// taken under that lock too, so no later step can find an entry gone; the work itself
/// (connecting, closing, timers, resuming waiters) runs after the lock is released, so no I/O or
/// user code ever runs while it is held.
package final class ConnectionPool: Sendable {
    typealias Machine = ConnectionPoolStateMachine

    /// A connection handed to a request.
    package struct Lease: Sendable {
        package let connection: LoopBound<HTTP1ClientConnection>
        /// Whether the connection was opened for this request (false: reused from the pool).
        package let isNew: Bool
        /// Whether the request joins others in flight on the connection (pipelining).
        let isPipelined: Bool
        /// The connection's number in events and metrics.
        let number: Int
        /// When the pool handed the connection to a request that waited (nil for an idle connection leased at once,
        /// which costs no clock read).
        let handedOver: Deadline?
        /// How the connection was set up, for its first lease only (nil when reused). Boxed: a reused connection's
        /// lease, every request's but the first, is a few words, where the setup's timings, attempts and `CONNECT`
        /// exchange made it about 250 bytes, copied at each step from the pool's lock into the request's frame.
        private let setupRecord: SetupRecord?

        init(
            connection: LoopBound<HTTP1ClientConnection>, isNew: Bool, isPipelined: Bool, number: Int,
            handedOver: Deadline?, setupRecord: SetupRecord?
        ) {
            self.connection = connection
            self.isNew = isNew
            self.isPipelined = isPipelined
            self.number = number
            self.handedOver = handedOver
            self.setupRecord = setupRecord
        }

        /// Time spent resolving the name and connecting, when new.
        var nameResolution: Duration? { setupRecord?.timings.nameResolution }
        var connect: Duration? { setupRecord?.timings.connect }
        /// Time until the TLS handshake finished, when new and secured.
        var secureConnect: Duration? { setupRecord?.timings.secureConnect }
        /// How long the proxy's handshake (`CONNECT` or SOCKS) took, when new and tunnelled.
        var proxyHandshake: Duration? { setupRecord?.timings.proxyHandshake }
        /// How long setting the connection up took in all, when new (from the start of its opening until it was
        /// ready for its first request).
        var setup: Duration? { setupRecord?.timings.total }
        /// The addresses the connect tried, when new.
        var connectAttempts: [HTTPClientMetrics.ConnectAttempt] { setupRecord?.timings.connectAttempts ?? [] }
        /// When the connection began opening, when new.
        var openStarted: Deadline? { setupRecord?.timings.started }
        /// The `CONNECT` exchange that opened the tunnel, when new and tunnelled through an HTTP proxy.
        var proxyConnect: HTTPClientMetrics.ProxyConnect? { setupRecord?.timings.proxyConnect }
    }

    /// A new connection's setup, as its first lease carries it.
    final class SetupRecord: Sendable {
        let timings: SetupTimings

        init(_ timings: SetupTimings) { self.timings = timings }
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
        /// The TLS layer, for https origins (for a `.proxy` route, the TLS layer to the `https` proxy).
        var security: (any ClientTransportSecurity)? = nil
        /// How a `.tunnel` route's connections are opened; nil for the other routes.
        var tunnel: TunnelSetup? = nil
        /// Requests allowed to wait for a connection at once; nil for no limit.
        var maxWaiters: Int? = nil
        /// How long a request may wait for a connection; nil for as long as its own deadline allows.
        var acquireTimeout: Duration? = nil
        /// Whether connections sample `TCP_INFO` at the end of each exchange.
        var samplesTCPInfo = false
        /// Told of each connection's setup (DNS, connect attempts, TLS).
        var listener: HTTPClientEventListener? = nil
        /// How each TCP socket is set up before it connects.
        var socketOptions = ClientSocketOptions()
    }

    /// What opening a tunnel through a proxy needs.
    struct TunnelSetup: Sendable {
        /// The pool of connections to the HTTP proxy, on which `CONNECT` is sent; nil for a SOCKS proxy.
        var proxyPool: ConnectionPool?
        /// The `CONNECT` request's head, serialized (an HTTP proxy only).
        var connectHead: [UInt8] = []
        /// How long the proxy may take to answer `CONNECT` (within the connect timeout).
        var readTimeout: Duration = .seconds(30)
        /// Whether a `CONNECT` sent on a pooled connection the proxy had closed is sent again on a fresh one.
        var retriesStaleConnections = true
    }

    /// How long a new connection took to set up, reported by its first lease only.
    struct SetupTimings: Sendable {
        var nameResolution: Duration?
        var connect: Duration
        var secureConnect: Duration?
        var proxyHandshake: Duration? = nil
        /// From the start of the opening until the connection was ready.
        var total: Duration = .zero
        var connectAttempts: [HTTPClientMetrics.ConnectAttempt] = []
        var number = 0
        /// When the pool decided to open the connection.
        var started: Deadline? = nil
        var proxyConnect: HTTPClientMetrics.ProxyConnect? = nil
    }

    /// An established connection the machine holds.
    ///
    /// Its idle timer is re-armed lazily: a lease does not cancel it and a park does not arm
    /// another while one is pending; when it fires it reports the timeout only if the machine
    /// still wants one that is due, and otherwise re-arms for the time the machine wants. A busy
    /// connection, leased and parked once per request, so costs no timer work per request (a
    /// cancel from a request's thread is a hop onto the loop).
    private struct Entry {
        var connection: LoopBound<HTTP1ClientConnection>
        /// The connection's number in events and metrics.
        var number: Int
        /// Until the first lease reports them. Boxed: inline, the timings' 200 bytes put the idle deadline below, which
        /// every lease and park writes, four cache lines into the entry (a miss each, a thousand connections in use).
        var setup: SetupRecord?
        /// When the machine wants `idleTimeoutFired` (the last `scheduleIdleTimeout`); nil after
        /// `cancelIdleTimeout`.
        var idleDeadline: Deadline?
        /// Whether a timer is pending (decided under the lock; its object may come a moment later).
        var idleTimerArmed = false
        var idleTimer: Scheduled?

        init(connection: LoopBound<HTTP1ClientConnection>, number: Int, setup: SetupTimings) {
            self.connection = connection
            self.number = number
            self.setup = SetupRecord(setup)
        }

        /// The connection handed to a request: its setup timings go to the first lease only.
        mutating func lease(pipelined: Bool, at now: Deadline? = nil) -> Lease {
            let record = setup.take()
            return Lease(
                connection: connection, isNew: record != nil, isPipelined: pipelined, number: number, handedOver: now,
                setupRecord: record)
        }

        /// The machine wants `idleTimeoutFired` at `deadline`: where and when to arm a timer, or nil when one is
        /// already pending (it finds the new deadline when it fires).
        mutating func wantIdleTimeout(at deadline: Deadline) -> (EventLoop, Deadline)? {
            idleDeadline = deadline
            guard !idleTimerArmed else { return nil }
            idleTimerArmed = true
            return (connection.loop, deadline)
        }
    }

    /// Unchecked (a checked one allocates a canary per lease): a waiter is resumed only by the one step that takes it
    /// out of `State.waiters`, under the lock.
    private typealias Waiter = UnsafeContinuation<Result<Lease, ConnectionPoolError>, Never>

    private struct State {
        var machine: Machine
        var waiters: [Machine.RequestID: Waiter] = [:]
        var entries: [Machine.ConnectionID: Entry] = [:]
        var nextRequestID = 0
    }

    /// Work decided under the lock, done after releasing it.
    private enum Effect {
        case resume(Waiter, Result<Lease, ConnectionPoolError>)
        /// Open a connection, for the call named (the one whose arrival made the machine open it), if any.
        case open(Machine.ConnectionID, call: Int?)
        case close(LoopBound<HTTP1ClientConnection>)
        case armIdleTimer(Machine.ConnectionID, on: EventLoop, at: Deadline)
        case cancel(Scheduled)
        /// Tell the listener the pool let go of the connection numbered so (closed by either side, or retired).
        case closed(number: Int)
    }

    let key: Key
    /// `key.forwardingProxy` and `key.proxy`, worked out once: every request reads them, and reading them through the
    /// key copied its route (an enum holding a `Proxy`) through its value witness each time.
    let forwardingProxy: Proxy?
    let proxy: Proxy?
    /// Whether `proxy` is set: a request asks this, and reading the optional proxy to compare it with nil copied it
    /// (a retain and release of each of its parts; through its value witness, before release builds turned off
    /// type-layout lowering).
    let isProxied: Bool
    /// The `Host` value of every request on a pool straight to one origin (nil through a proxy, or on a Unix socket):
    /// worked out once instead of per request.
    let originHostHeader: String?
    let configuration: Configuration
    let group: EventLoopGroup
    private let state: Lock<State>

    init(key: Key, configuration: Configuration, group: EventLoopGroup) {
        self.key = key
        forwardingProxy = key.forwardingProxy
        proxy = key.proxy
        isProxied = proxy != nil
        if case .direct = key.route, case .host(let host, let port) = key.endpoint {
            originHostHeader = HTTPURL.hostHeader(scheme: key.scheme, host: host, port: port)
        } else {
            originHostHeader = nil
        }
        self.configuration = configuration
        self.group = group
        state = Lock(
            State(
                machine: Machine(
                    maxConnections: configuration.maxConnections, idleTimeout: configuration.idleTimeout,
                    maxPipelined: configuration.maxPipelined, maxWaiters: configuration.maxWaiters)))
    }

    /// The pool's state now, as `HTTPClient.poolSnapshots()` reports it.
    func snapshot() -> HTTPClientPoolSnapshot {
        state.withLock { snapshot(of: $0.machine, now: .now()) }
    }

    private func snapshot(of machine: Machine, now: Deadline) -> HTTPClientPoolSnapshot {
        let open = machine.connectionCount - machine.connectingCount
        return HTTPClientPoolSnapshot(
            origin: key.description, open: open, idle: machine.idleCount, leased: open - machine.idleCount,
            connecting: machine.connectingCount, waiters: machine.waiterCount,
            oldestWaiterAge: machine.oldestWaiterSince.map { now - $0 }, connectionsOpened: machine.openedCount,
            connectionsClosed: machine.closedCount)
    }

    /// Counts for diagnostics and tests.
    package var counts: (connections: Int, idle: Int, waiters: Int) {
        state.withLock { ($0.machine.connectionCount, $0.machine.idleCount, $0.machine.waiterCount) }
    }

    /// How many connection objects the shell holds on to: for tests that check closed connections are let go.
    var retainedConnectionCount: Int { state.withLock { $0.entries.count } }

    // MARK: Requests

    /// Waits for a connection. `pipelinable` lets the request share a connection with others in
    /// flight when the pool pipelines. `registerCancel` receives a closure that abandons the wait
    /// (deadline or cancellation): the wait then fails with `.abandoned`. `call` names the request in the events of
    /// a connection opened for it. A wait longer than `configuration.acquireTimeout` fails with `.acquireTimedOut`.
    package func lease(pipelinable: Bool = false, call: Int? = nil, registerCancel: (@escaping @Sendable () -> Void) -> Void)
        async throws(ConnectionPoolError) -> Lease
    {
        var acquireTimer: Scheduled?
        var resumed: Waiter?
        let result = await withUnsafeContinuation { (continuation: Waiter) in
            resumed = continuation
            // One locked step numbers the request, registers its waiter and asks the machine; a
            // request that got an idle connection at once has nothing left to cancel.
            var id = Machine.RequestID(value: 0)
            let waiting = run(registering: continuation, call: call) { machine, request in
                id = request
                return machine.requestArrived(request, pipelinable: pipelinable, now: .now())
            }
            if waiting {
                let request = id
                // Strong captures here and in the idle timer: one weak reference would give the pool a side table,
                // and each of its several retains and releases per request the slow path. The closure lives as
                // long as the request, the timer until it fires or its connection goes.
                registerCancel { self.abandonWait(request) }
                if let timeout = configuration.acquireTimeout {
                    acquireTimer = group.next().schedule(in: timeout) { self.abandonWait(request, timedOut: timeout) }
                }
            }
        }
        // A loop may resume the waiter before this task has suspended: the runtime then tells the sanitizer nothing, so
        // the hand-over (the lease, and the task's own frame the resumer touched) is published by hand.
        if let resumed { ThreadSanitizer.acquire(resumed: resumed) }
        acquireTimer?.cancel()
        return try result.get()
    }

    /// A keep-alive client's usual case, as `requestArrived` would decide it: an idle connection leased in one locked
    /// step, with no continuation and no array of actions; nil when there is none (then `lease` waits).
    @inline(__always) func leaseIdleConnection(pipelinable: Bool = false) -> Lease? {
        state.withLock { state -> Lease? in
            // The machine holds an entry for every connection it holds; were one missing, the general path decides.
            // The entry is changed where it is, through its index: one lookup, no copy of it out and back.
            guard let next = state.machine.nextIdleConnection, let index = state.entries.index(forKey: next),
                state.machine.takeIdleConnection(pipelinable: pipelinable) == next
            else { return nil }
            // `.cancelIdleTimeout`: the pending timer stays and finds nothing due when it fires.
            state.entries.values[index].idleDeadline = nil
            return state.entries.values[index].lease(pipelined: false)
        }
    }

    /// Ends a wait: abandoned by its request, or timed out after `timedOut` (the error then carries the pool's state
    /// as it was, this waiter included).
    private func abandonWait(_ id: Machine.RequestID, timedOut: Duration? = nil) {
        let resumption = state.withLock { state -> (Waiter, ConnectionPoolError)? in
            guard let waiter = state.waiters.removeValue(forKey: id) else { return nil }
            let error: ConnectionPoolError =
                timedOut.map { .acquireTimedOut(snapshot(of: state.machine, now: .now()), after: $0) } ?? .abandoned
            _ = state.machine.requestCancelled(id)
            return (waiter, error)
        }
        if let (waiter, error) = resumption {
            ThreadSanitizer.release(resuming: waiter)
            waiter.resume(returning: .failure(error))
        }
    }

    /// A request is done with a connection, at `now`.
    func release(_ id: Machine.ConnectionID, reusable: Bool, now: Deadline = .now()) {
        if reusable, let timer = parkIdle(id, now: now) {
            if let (loop, deadline) = timer { armIdleTimer(id, on: loop, at: deadline) }
            return
        }
        run(concerning: id) { $0.connectionReleased(id, reusable: reusable, now: now) }
    }

    /// Parks a released connection as `connectionReleased` would when nobody waits for it, with no array of
    /// actions: nil when the machine decides otherwise; else the idle timer to arm, if none is pending.
    private func parkIdle(_ id: Machine.ConnectionID, now: Deadline) -> (EventLoop, Deadline)?? {
        state.withLock { state -> (EventLoop, Deadline)?? in
            guard let index = state.entries.index(forKey: id), let deadline = state.machine.releaseToIdle(id, now: now)
            else { return nil }
            return .some(state.entries.values[index].wantIdleTimeout(at: deadline))
        }
    }

    /// A connection closed on its own. A leased one is forgotten at once too: its requests hold it
    /// through their leases, and their releases are then ignored.
    func connectionClosed(_ id: Machine.ConnectionID) {
        run(concerning: id) { $0.connectionClosed(id) }
    }

    /// Closes idle connections and fails waiters; leased connections close when released.
    func shutDown() {
        run { $0.shutDown() }
    }

    /// A connection's idle timer fired: reports the timeout if the machine's is due, or arms
    /// the timer again for the time the machine now wants.
    private func idleTimerFired(_ id: Machine.ConnectionID) {
        let now = Deadline.now()
        let (due, rearm) = state.withLock { state -> (Bool, (EventLoop, Deadline)?) in
            guard var entry = state.entries[id] else { return (false, nil) }
            defer { state.entries[id] = entry }
            entry.idleTimer = nil
            entry.idleTimerArmed = false
            guard let deadline = entry.idleDeadline else { return (false, nil) }
            if deadline <= now { return (true, nil) }
            // Parked again since this timer was set: wait for the time the machine wants now.
            entry.idleTimerArmed = true
            return (false, (entry.connection.loop, deadline))
        }
        if due { run(concerning: id) { $0.idleTimeoutFired(id, now: now) } }
        if let (loop, deadline) = rearm { armIdleTimer(id, on: loop, at: deadline) }
    }

    private func armIdleTimer(_ id: Machine.ConnectionID, on loop: EventLoop, at deadline: Deadline) {
        let timer = loop.schedule(at: deadline) { self.idleTimerFired(id) }
        let stale = state.withLock { state -> Bool in
            guard state.entries[id] != nil else { return true }
            state.entries[id]?.idleTimer = timer
            return false
        }
        // Gone before its timer was set: the timer has nothing to close.
        if stale { timer.cancel() }
    }

    /// A connection being opened is ready, or could not be: reports it to the machine, which
    /// takes it (and the shell its entry) or has it closed.
    func opened(
        _ id: Machine.ConnectionID, _ outcome: Result<(LoopBound<HTTP1ClientConnection>, SetupTimings), ConnectionPoolError>
    ) {
        switch outcome {
        case .success(let (connection, setup)):
            run(concerning: id, adopting: Entry(connection: connection, number: setup.number, setup: setup)) {
                $0.connectionEstablished(id, now: .now())
            }
        case .failure(let error):
            run(concerning: id, connectFailure: error) { $0.connectionFailed(id) }
        }
    }

    // MARK: Running the machine

    /// Feeds one event to the machine and performs its actions: what they need from the tables is
    /// taken (and the tables updated) under the lock, the work is done after.
    ///
    /// - Parameters:
    ///   - id: The connection the event concerns: its entry goes if the machine no longer holds it.
    ///   - adopting: The entry of a connection just established, kept if the machine takes it.
    ///   - connectFailure: What a request failed for lack of a connection is told.
    private func run(
        concerning id: Machine.ConnectionID? = nil, adopting: Entry? = nil, connectFailure: ConnectionPoolError? = nil,
        _ event: (inout Machine) -> [Machine.Action]
    ) {
        run(concerning: id, adopting: adopting, connectFailure: connectFailure, registering: nil, call: nil) { machine, _ in
            event(&machine)
        }
    }

    /// `run`, numbering a new request and registering its waiter in the same locked step when
    /// `registering` is given; returns whether that waiter still waits.
    @discardableResult
    private func run(
        concerning id: Machine.ConnectionID? = nil, adopting: Entry? = nil, connectFailure: ConnectionPoolError? = nil,
        registering waiter: Waiter?, call: Int?, _ event: (inout Machine, Machine.RequestID) -> [Machine.Action]
    ) -> Bool {
        let (effects, waiting) = state.withLock { state -> ([Effect], Bool) in
            let request = Machine.RequestID(value: state.nextRequestID)
            if let waiter {
                state.nextRequestID += 1
                state.waiters[request] = waiter
            }
            var pending = event(&state.machine, request)
            var effects: [Effect] = []
            // The connections whose entries may have to go: `id`, and those the actions close.
            var touched: [Machine.ConnectionID] = []
            if let id, let adopting, state.machine.tracks(id) { state.entries[id] = adopting }
            var index = 0
            while index < pending.count {
                let action = pending[index]
                index += 1
                switch action {
                case .lease(let connection, let request, let pipelined):
                    guard var entry = state.entries[connection] else {
                        // The machine leases only connections it holds, whose entries exist.
                        if let waiter = state.waiters.removeValue(forKey: request) {
                            effects.append(.resume(waiter, .failure(.connectionLost(origin: key))))
                        }
                        continue
                    }
                    guard let waiter = state.waiters.removeValue(forKey: request) else {
                        // Waiters leave the machine and the table in one step, so this cannot happen; were it
                        // to, the connection goes back.
                        pending += state.machine.connectionReleased(connection, reusable: true, now: .now())
                        continue
                    }
                    let lease = entry.lease(pipelined: pipelined, at: .now())
                    state.entries[connection] = entry
                    effects.append(.resume(waiter, .success(lease)))
                case .createConnection(let connection):
                    effects.append(.open(connection, call: call))
                case .closeConnection(let connection):
                    touched.append(connection)
                    if let entry = state.entries.removeValue(forKey: connection) {
                        if let timer = entry.idleTimer { effects.append(.cancel(timer)) }
                        effects.append(.close(entry.connection))
                        if configuration.listener != nil { effects.append(.closed(number: entry.number)) }
                    } else if connection == id, let adopting {
                        // Established after it was reported closed, or after shutdown: never taken.
                        effects.append(.close(adopting.connection))
                    }
                case .scheduleIdleTimeout(let connection, let deadline):
                    guard var entry = state.entries[connection] else { continue }
                    if let (loop, at) = entry.wantIdleTimeout(at: deadline) {
                        effects.append(.armIdleTimer(connection, on: loop, at: at))
                    }
                    state.entries[connection] = entry
                case .cancelIdleTimeout(let connection):
                    // The pending timer stays: it finds nothing due when it fires.
                    state.entries[connection]?.idleDeadline = nil
                case .failRequest(let request, let failure):
                    guard let waiter = state.waiters.removeValue(forKey: request) else { continue }
                    let error: ConnectionPoolError =
                        switch failure {
                        case .connectFailed: connectFailure ?? .connectionLost(origin: key)
                        case .shutDown: .shutDown
                        case .waiterLimit: .waiterLimit(snapshot(of: state.machine, now: .now()))
                        }
                    effects.append(.resume(waiter, .failure(error)))
                }
            }
            // Entries the machine no longer holds go; the listener hears of each once, as it goes.
            let listens = configuration.listener != nil
            if let id, !state.machine.tracks(id), let entry = state.entries.removeValue(forKey: id) {
                if let timer = entry.idleTimer { effects.append(.cancel(timer)) }
                if listens { effects.append(.closed(number: entry.number)) }
            }
            for connection in touched where !state.machine.tracks(connection) {
                guard let entry = state.entries.removeValue(forKey: connection) else { continue }
                if let timer = entry.idleTimer { effects.append(.cancel(timer)) }
                if listens { effects.append(.closed(number: entry.number)) }
            }
            return (effects, waiter != nil && state.waiters[request] != nil)
        }
        for effect in effects {
            switch effect {
            case .resume(let waiter, let result):
                ThreadSanitizer.release(resuming: waiter)
                waiter.resume(returning: result)
            case .open(let connection, let call):
                let loop = group.next()
                let started = Deadline.now()
                Task { await self.open(connection, on: loop, call: call, started: started) }
            case .close(let connection):
                connection.loop.execute { connection.value.close() }
            case .armIdleTimer(let connection, let loop, let deadline):
                armIdleTimer(connection, on: loop, at: deadline)
            case .cancel(let timer):
                timer.cancel()
            case .closed(let number):
                configuration.listener?(HTTPClientEvent(call: nil, connection: number, time: .now(), kind: .connectionClosed))
            }
        }
        return waiting
    }
}
