/// The keep-alive pool's decisions for one origin, as a value type: it takes events and returns
/// actions, touches no socket and reads no clock (time comes in as `now:`), so every policy
/// below is tested as a plain table of events and expected actions.
///
/// Policy:
/// - at most `maxConnections` open or opening at once;
/// - an idle connection is reused most-recently-used first (the warmest, least likely to have
///   been closed by the server's own idle timer);
/// - requests that find no idle connection wait in FIFO order; a new connection is opened for
///   a waiter only when no connection already being opened will serve it;
/// - an idle connection is closed after `idleTimeout`;
/// - with pipelining on (`maxPipelined` > 1), a pipelinable request that finds no idle
///   connection and no room for a new one joins the least-loaded connection whose requests are
///   all pipelinable, up to `maxPipelined` in flight on it. Connections are opened before any
///   are shared, so pipelining only starts when the per-host limit is reached.
package struct ConnectionPoolStateMachine {
    /// Identifies a connection within one pool.
    package struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
        let value: Int
        package var description: String { "c\(value)" }

        package init(value: Int) { self.value = value }

        package func hash(into hasher: inout Hasher) { hasher.combine(value) }

        /// What the pool's tables hash: a multiplication instead of SipHash. An ID is a counter the pool hands out,
        /// never a peer's input, so there is no flooding to resist, and consecutive IDs land in distinct buckets. Each
        /// request looks its connection up four times (lease and release, in the machine and in the pool's table),
        /// about 150 instructions each through `Hasher`.
        package func _rawHashValue(seed: Int) -> Int { (value ^ seed) &* -7_046_029_254_386_353_131 }
    }

    /// Identifies a request waiting for or holding a connection.
    package struct RequestID: Hashable, Sendable, CustomStringConvertible {
        let value: Int
        package var description: String { "r\(value)" }

        package init(value: Int) { self.value = value }
    }

    /// Why the pool fails a request without a connection.
    package enum Failure: Hashable, Sendable {
        /// The connection opened for it could not be established (the shell holds the error).
        case connectFailed
        /// The pool (its client) is shutting down.
        case shutDown
        /// As many requests wait as `maxWaiters` allows: the request is refused at once.
        case waiterLimit
    }

    /// What the shell must do.
    package enum Action: Hashable, Sendable {
        /// Give connection to request; it is now leased. `pipelined` is true when the request
        /// joins others already in flight on it.
        case lease(ConnectionID, to: RequestID, pipelined: Bool)
        /// Open a new connection (report `connectionEstablished` or `connectionFailed`).
        case createConnection(ConnectionID)
        /// Close a connection that is no longer wanted.
        case closeConnection(ConnectionID)
        /// Call `idleTimeoutFired` for this connection at this time.
        case scheduleIdleTimeout(ConnectionID, at: Deadline)
        /// The connection left the idle set: its idle timer no longer matters.
        case cancelIdleTimeout(ConnectionID)
        /// Fail a waiting request.
        case failRequest(RequestID, Failure)
    }

    private enum ConnectionState: Hashable {
        /// Being opened. Valid transitions: to `.leased` or `.idle` (established), or removed
        /// (failed, or closed before it was established, which counts as failed).
        case connecting
        /// Serving `count` requests (more than one only when pipelining); `pipelinable` says whether
        /// all of them are, so that another pipelinable request may join. Valid transitions: to
        /// `.leased` with another count, `.idle` (last one released reusable), or removed.
        case leased(count: Int, pipelinable: Bool)
        /// Parked for reuse since the given time. Valid transitions: to `.leased` or removed.
        case idle(since: Deadline)
    }

    let maxConnections: Int
    let idleTimeout: Duration
    /// Requests allowed in flight on one connection: 1 turns pipelining off.
    let maxPipelined: Int
    /// Requests allowed to wait at once; nil for no limit.
    let maxWaiters: Int?
    private var connections: [ConnectionID: ConnectionState] = [:]
    /// Idle connections, least recently used first: reuse takes from the end.
    private var idle: [ConnectionID] = []
    /// Requests waiting for a connection, oldest first, with whether each may be pipelined and since when it waits.
    private var waiters: [(id: RequestID, pipelinable: Bool, since: Deadline)] = []
    /// Connections established, and established connections closed, over the pool's life.
    private(set) var openedCount = 0
    private(set) var closedCount = 0
    private var connecting = 0
    private var nextConnectionID = 0
    private var isShutDown = false

    package init(maxConnections: Int, idleTimeout: Duration, maxPipelined: Int = 1, maxWaiters: Int? = nil) {
        // The pool's user refuses such settings with a typed error before making a pool, so only a
        // caller inside Wire bypassing that could trip these.
        precondition(maxConnections > 0, "a pool needs room for at least one connection")
        precondition(maxPipelined > 0, "a connection carries at least one request")
        self.maxConnections = maxConnections
        self.idleTimeout = idleTimeout
        self.maxPipelined = maxPipelined
        self.maxWaiters = maxWaiters
    }

    /// The number of connections open or opening.
    package var connectionCount: Int { connections.count }
    /// The number of idle connections.
    package var idleCount: Int { idle.count }
    /// The idle connection the next request would lease (the most recently parked one).
    package var nextIdleConnection: ConnectionID? { idle.last }
    /// The number of requests waiting.
    package var waiterCount: Int { waiters.count }
    /// The number of connections being opened.
    var connectingCount: Int { connecting }
    /// Since when the oldest waiting request waits.
    var oldestWaiterSince: Deadline? { waiters.first?.since }

    // MARK: Events

    /// A request wants a connection. `pipelinable` says it may share a connection with others
    /// in flight (an idempotent, keep-alive request whose whole body is in memory).
    package mutating func requestArrived(_ request: RequestID, pipelinable: Bool = false, now: Deadline) -> [Action] {
        if isShutDown { return [.failRequest(request, .shutDown)] }
        if let connection = takeIdleConnection(pipelinable: pipelinable) {
            return [.cancelIdleTimeout(connection), .lease(connection, to: request, pipelined: false)]
        }
        if pipelinable, connections.count >= maxConnections, let connection = pipelineTarget() {
            join(connection)
            return [.lease(connection, to: request, pipelined: true)]
        }
        if let maxWaiters, waiters.count >= maxWaiters { return [.failRequest(request, .waiterLimit)] }
        waiters.append((request, pipelinable, now))
        return openConnectionsForWaiters()
    }

    /// The common case of `requestArrived` with no array of actions (the shell's per-request path): a request that
    /// finds an idle connection leases it, exactly as `requestArrived` would (its actions would be
    /// `.cancelIdleTimeout(c)` and `.lease(c, to: request, pipelined: false)`). Nil, changing nothing, when there
    /// is none or the pool is shut down: then `requestArrived` decides.
    package mutating func takeIdleConnection(pipelinable: Bool = false) -> ConnectionID? {
        guard !isShutDown, let connection = idle.popLast() else { return nil }
        connections[connection] = .leased(count: 1, pipelinable: pipelinable)
        return connection
    }

    /// The common case of `connectionReleased` with no array of actions: the last request on a reusable connection
    /// lets it go while nobody waits, and it parks, exactly as `connectionReleased` would (its one action would be
    /// `.scheduleIdleTimeout(connection, at:)` with the deadline returned). Nil, changing nothing, in every other
    /// case: then `connectionReleased` decides.
    package mutating func releaseToIdle(_ connection: ConnectionID, now: Deadline) -> Deadline? {
        guard !isShutDown, waiters.isEmpty, let index = connections.index(forKey: connection),
            case .leased(1, _) = connections.values[index]
        else { return nil }
        // Through the index: one lookup, not a second one to store.
        connections.values[index] = .idle(since: now)
        idle.append(connection)
        return now + idleTimeout
    }

    /// A waiting request gave up (cancelled or timed out). A request that already holds a
    /// connection releases it instead.
    package mutating func requestCancelled(_ request: RequestID) -> [Action] {
        waiters.removeAll { $0.id == request }
        return []
    }

    /// A connection opened by `createConnection` is ready. One already reported closed (and so
    /// counted as failed) is no longer wanted: it is closed.
    package mutating func connectionEstablished(_ connection: ConnectionID, now: Deadline) -> [Action] {
        guard let state = connections[connection] else { return [.closeConnection(connection)] }
        // The shell reports each connection it opens once. A second report changes nothing: the connection is
        // already parked or leased, and closing it would fail a request that did nothing wrong.
        guard state == .connecting else { return [] }
        connecting -= 1
        openedCount += 1
        if isShutDown {
            closedCount += 1
            connections[connection] = nil
            return [.closeConnection(connection)]
        }
        return park(connection, now: now)
    }

    /// A connection opened by `createConnection` could not be established: the oldest waiter
    /// gets the error (it is the one this connection was opened for, in FIFO order). A late
    /// report for one already reported closed changes nothing: its waiter has had its failure.
    package mutating func connectionFailed(_ connection: ConnectionID) -> [Action] {
        guard let state = connections[connection] else { return [] }
        // A failure reported for a connection that is already open means it is gone now: treat it as closed.
        guard state == .connecting else { return connectionClosed(connection) + [.closeConnection(connection)] }
        connections[connection] = nil
        return connectFailed()
    }

    /// A connection being opened is gone: the oldest waiter fails, and more open for the rest.
    private mutating func connectFailed() -> [Action] {
        connecting -= 1
        guard !waiters.isEmpty else { return [] }
        let failed = waiters.removeFirst()
        return [.failRequest(failed.id, .connectFailed)] + openConnectionsForWaiters()
    }

    /// A request is done with its connection. `reusable` is false after any error, framing
    /// anomaly, `Connection: close`, or a body that was not read to its end. A connection that
    /// is already gone (closed by an earlier release of a pipelined request) is ignored.
    package mutating func connectionReleased(_ connection: ConnectionID, reusable: Bool, now: Deadline) -> [Action] {
        guard let state = connections[connection] else { return [] }
        guard case .leased(let count, let pipelinable) = state else {
            // Released without a lease (a duplicate release): the pool no longer knows what the connection
            // carries, so it is not reused.
            return connectionClosed(connection) + [.closeConnection(connection)]
        }
        guard reusable, !isShutDown else {
            // Requests pipelined behind this one fail with the connection; their releases are ignored.
            connections[connection] = nil
            closedCount += 1
            return [.closeConnection(connection)] + openConnectionsForWaiters()
        }
        guard count > 1 else { return park(connection, now: now) }
        connections[connection] = .leased(count: count - 1, pipelinable: pipelinable)
        // A pipeline slot opened: the oldest pipelinable waiter may take it.
        if let index = waiters.firstIndex(where: { $0.pipelinable }), pipelinable {
            let waiter = waiters.remove(at: index)
            join(connection)
            return [.lease(connection, to: waiter.id, pipelined: true)]
        }
        return []
    }

    /// Whether the machine still knows `connection` (connecting, leased or idle).
    package func tracks(_ connection: ConnectionID) -> Bool {
        connections[connection] != nil
    }

    /// Whether `connection` is leased to at least one request.
    package func isLeased(_ connection: ConnectionID) -> Bool {
        if case .leased? = connections[connection] { return true }
        return false
    }

    /// A connection closed on its own (the server closed an idle connection, or it failed). One
    /// still being opened failed to open: the shell's later report for it is then ignored
    /// (failed) or answered by closing it (established).
    package mutating func connectionClosed(_ connection: ConnectionID) -> [Action] {
        guard let state = connections.removeValue(forKey: connection) else { return [] }
        if state != .connecting { closedCount += 1 }
        switch state {
        case .idle:
            idle.removeAll { $0 == connection }
            return [.cancelIdleTimeout(connection)] + openConnectionsForWaiters()
        case .leased:
            return openConnectionsForWaiters()
        case .connecting:
            return connectFailed()
        }
    }

    /// The idle timer of `connection` fired.
    package mutating func idleTimeoutFired(_ connection: ConnectionID, now: Deadline) -> [Action] {
        guard case .idle(let since) = connections[connection] else { return [] }
        guard now - since >= idleTimeout else {
            // Re-idled since this timer was set: a later timer covers it.
            return []
        }
        connections[connection] = nil
        closedCount += 1
        idle.removeAll { $0 == connection }
        return [.closeConnection(connection)]
    }

    /// The client is shutting down: close idle connections, fail waiters; leased connections
    /// close when released.
    package mutating func shutDown() -> [Action] {
        isShutDown = true
        var actions: [Action] = []
        for connection in idle {
            connections[connection] = nil
            closedCount += 1
            actions.append(.cancelIdleTimeout(connection))
            actions.append(.closeConnection(connection))
        }
        idle.removeAll()
        for waiter in waiters { actions.append(.failRequest(waiter.id, .shutDown)) }
        waiters.removeAll()
        return actions
    }

    // MARK: Helpers

    private mutating func park(_ connection: ConnectionID, now: Deadline) -> [Action] {
        if !waiters.isEmpty {
            let first = waiters.removeFirst()
            connections[connection] = .leased(count: 1, pipelinable: first.pipelinable)
            var actions: [Action] = [.lease(connection, to: first.id, pipelined: false)]
            // With pipelining, a connection that comes free serves every pipelinable waiter it can.
            guard first.pipelinable, maxPipelined > 1 else { return actions }
            while case .leased(let count, _) = connections[connection], count < maxPipelined,
                let index = waiters.firstIndex(where: { $0.pipelinable })
            {
                let waiter = waiters.remove(at: index)
                join(connection)
                actions.append(.lease(connection, to: waiter.id, pipelined: true))
            }
            return actions
        }
        connections[connection] = .idle(since: now)
        idle.append(connection)
        return [.scheduleIdleTimeout(connection, at: now + idleTimeout)]
    }

    /// The leased, all-pipelinable connection with the fewest requests in flight and room for one more.
    private func pipelineTarget() -> ConnectionID? {
        guard maxPipelined > 1 else { return nil }
        var best: (id: ConnectionID, count: Int)?
        for (id, state) in connections {
            guard case .leased(let count, true) = state, count < maxPipelined else { continue }
            if best == nil || count < best!.count || (count == best!.count && id.value < best!.id.value) { best = (id, count) }
        }
        return best?.id
    }

    /// One more pipelinable request joins `connection`.
    private mutating func join(_ connection: ConnectionID) {
        // Only leased connections are chosen to join (pipelineTarget, a release's free slot).
        guard case .leased(let count, let pipelinable) = connections[connection] else { return }
        connections[connection] = .leased(count: count + 1, pipelinable: pipelinable)
    }

    /// Opens connections for waiters that no connection being opened will serve, within the limit.
    private mutating func openConnectionsForWaiters() -> [Action] {
        var actions: [Action] = []
        while waiters.count > connecting && connections.count < maxConnections && !isShutDown {
            let connection = ConnectionID(value: nextConnectionID)
            nextConnectionID += 1
            connections[connection] = .connecting
            connecting += 1
            actions.append(.createConnection(connection))
        }
        return actions
    }
}
