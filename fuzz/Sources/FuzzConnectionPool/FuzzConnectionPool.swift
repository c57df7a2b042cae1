import FuzzSupport
@testable import Wire

/// libFuzzer entry: drives `ConnectionPoolStateMachine` with arbitrary interleavings of requests, cancellations,
/// connects that succeed, fail or close early, releases (reusable or not), closes by the server, idle timers firing
/// early or late, and shutdown, with time passed in; checks that it never traps, never exceeds its limits, never
/// hands one request two connections or a closed connection, and never strands a waiter.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConnectionPool(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    guard input.count >= 2 else { return 0 }
    var run = ConnectionPoolRun(input: input)
    run.play()
    return 0
}

struct ConnectionPoolRun {
    typealias Machine = ConnectionPoolStateMachine
    typealias ConnectionID = Machine.ConnectionID
    typealias RequestID = Machine.RequestID

    var script: EventScript
    var checker: InvariantChecker
    var machine: Machine
    let maxConnections: Int
    let maxPipelined: Int
    var now = Deadline(uptimeNanoseconds: 1_000_000_000)

    /// The run's own account of the pool, kept from the actions alone.
    var connecting: Set<ConnectionID> = []
    var leases: [ConnectionID: [RequestID]] = [:]
    var idle: Set<ConnectionID> = []
    var waiting: [RequestID] = []
    var done: Set<RequestID> = []
    /// Connections closed while being opened: the shell still reports how their connect ended, late.
    var lateReports: [ConnectionID] = []
    var nextRequest = 0
    var shutDown = false

    init(input: [UInt8]) {
        maxConnections = Int(input[0] % 4) + 1
        maxPipelined = Int(input[1] % 4) + 1
        machine = Machine(maxConnections: maxConnections, idleTimeout: .seconds(60), maxPipelined: maxPipelined)
        script = EventScript(Array(input.dropFirst(2)))
        checker = InvariantChecker(input: input)
    }

    mutating func play() {
        var steps = 0
        while !script.isAtEnd && steps < 1024 {
            steps += 1
            now = now + .milliseconds(Int(script.byte()) * 500)
            switch script.choice(9) {
            case 0, 1:
                let id = RequestID(value: nextRequest)
                nextRequest += 1
                let pipelinable = script.flag()
                // The shell's array-free lease, when the script asks for it: it must act as `requestArrived` would.
                let fast = script.flag()
                checker.note("arrive(\(id), pipelinable: \(pipelinable), fast: \(fast))")
                waiting.append(id)
                if fast, let connection = machine.takeIdleConnection(pipelinable: pipelinable) {
                    apply([.cancelIdleTimeout(connection), .lease(connection, to: id, pipelined: false)])
                } else {
                    apply(machine.requestArrived(id, pipelinable: pipelinable, now: now))
                }
            case 2:
                guard let id = pick(waiting) else { continue }
                checker.note("cancel(\(id))")
                waiting.removeAll { $0 == id }
                done.insert(id)
                apply(machine.requestCancelled(id))
            case 3 where !lateReports.isEmpty && script.flag():
                let connection = lateReports.removeFirst()
                let late = script.flag()
                checker.note("late \(late ? "established" : "failed")(\(connection))")
                let actions = late ? machine.connectionEstablished(connection, now: now) : machine.connectionFailed(connection)
                checker.check(actions == (late ? [.closeConnection(connection)] : []), "a late report answered \(actions)")
                apply(actions)
            case 3:
                guard let connection = pick(Array(connecting)) else { continue }
                checker.note("established(\(connection))")
                connecting.remove(connection)
                leases[connection] = []
                apply(machine.connectionEstablished(connection, now: now))
                if leases[connection]?.isEmpty == true && !idle.contains(connection) { leases[connection] = nil }
            case 4:
                guard let connection = pick(Array(connecting)) else { continue }
                checker.note("failed(\(connection))")
                connecting.remove(connection)
                apply(machine.connectionFailed(connection))
            case 5:
                guard let connection = pick(Array(leases.keys)) else { continue }
                let reusable = script.flag()
                checker.note("released(\(connection), reusable: \(reusable))")
                if var requests = leases[connection], !requests.isEmpty {
                    done.insert(requests.removeFirst())
                    leases[connection] = requests
                }
                // A release that closes the connection fails what is pipelined behind it with it.
                // The shell's array-free park, when the script asks for it: it must act as `connectionReleased` would.
                let actions: [Machine.Action] = if reusable, script.flag(), let deadline = machine.releaseToIdle(connection, now: now) {
                    [.scheduleIdleTimeout(connection, at: deadline)]
                } else {
                    machine.connectionReleased(connection, reusable: reusable, now: now)
                }
                if leases[connection]?.isEmpty == true && !actions.contains(where: { if case .lease(connection, _, _) = $0 { true } else { false } }) {
                    leases[connection] = nil
                }
                apply(actions)
            case 6:
                let all = Array(connecting) + Array(leases.keys) + Array(idle)
                guard let connection = pick(all) else { continue }
                checker.note("closed(\(connection))")
                let wasConnecting = connecting.remove(connection) != nil
                for request in leases[connection] ?? [] { done.insert(request) }
                leases[connection] = nil
                idle.remove(connection)
                apply(machine.connectionClosed(connection))
                if wasConnecting { lateReports.append(connection) }
            case 7:
                guard let connection = pick(Array(idle) + Array(leases.keys)) else { continue }
                checker.note("idleTimeout(\(connection))")
                apply(machine.idleTimeoutFired(connection, now: now))
            default:
                checker.note("shutdown")
                shutDown = true
                apply(machine.shutDown())
            }
            checkState()
        }
    }

    mutating func pick<T>(_ items: [T]) -> T? {
        guard !items.isEmpty else { return nil }
        return items[script.choice(items.count)]
    }

    mutating func apply(_ actions: [Machine.Action]) {
        for action in actions {
            switch action {
            case .lease(let connection, let request, let pipelined):
                checker.check(waiting.contains(request), "\(request) leased but not waiting (done: \(done.contains(request)))")
                checker.check(!shutDown, "a lease after shutdown")
                checker.check(!connecting.contains(connection), "\(connection) leased before it was established")
                var requests = leases[connection] ?? []
                checker.check(pipelined == !requests.isEmpty, "\(connection) leased pipelined: \(pipelined) with \(requests.count) in flight")
                requests.append(request)
                checker.check(requests.count <= maxPipelined, "\(connection) carries \(requests.count) > \(maxPipelined)")
                leases[connection] = requests
                idle.remove(connection)
                waiting.removeAll { $0 == request }
            case .createConnection(let connection):
                checker.check(!shutDown, "a connection opened after shutdown")
                checker.check(!connecting.contains(connection) && leases[connection] == nil && !idle.contains(connection),
                              "\(connection) created twice")
                connecting.insert(connection)
            case .closeConnection(let connection):
                for request in leases[connection] ?? [] { done.insert(request) }
                leases[connection] = nil
                idle.remove(connection)
            case .scheduleIdleTimeout(let connection, _):
                checker.check(leases[connection]?.isEmpty ?? true, "\(connection) parked with requests on it")
                leases[connection] = nil
                idle.insert(connection)
            case .cancelIdleTimeout:
                break
            case .failRequest(let request, _):
                checker.check(waiting.contains(request), "\(request) failed but not waiting")
                waiting.removeAll { $0 == request }
                done.insert(request)
            }
        }
    }

    func checkState() {
        let open = connecting.count + leases.count + idle.count
        checker.check(machine.connectionCount <= maxConnections, "\(machine.connectionCount) connections > \(maxConnections)")
        checker.check(machine.idleCount == idle.count, "the machine has \(machine.idleCount) idle, the run \(idle.count)")
        checker.check(machine.waiterCount == waiting.count, "the machine has \(machine.waiterCount) waiting, the run \(waiting.count)")
        checker.check(machine.connectionCount == open, "the machine tracks \(machine.connectionCount), the run \(open)")
        // Liveness: a waiter always has a connection coming, unless the pool is full of leased connections.
        if !waiting.isEmpty && !shutDown {
            checker.check(!connecting.isEmpty || open >= maxConnections, "\(waiting.count) waiting with nothing opening and room for more")
            checker.check(idle.isEmpty, "waiters and idle connections at once")
        }
        if shutDown { checker.check(waiting.isEmpty && idle.isEmpty, "shutdown left waiters or idle connections") }
    }
}

/// The executable's entry (see `runLibFuzzer`).
@_cdecl("FuzzConnectionPool_main")
public func fuzzConnectionPoolMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc: argc, argv: argv) { data, size in fuzzConnectionPool(data, size) }
}
