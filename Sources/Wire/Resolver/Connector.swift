import Synchronization

/// Opens outgoing connections on an event loop: resolves the name off the loop, then races
/// the addresses (Happy Eyeballs, RFC 8305) under one connect deadline.
///
/// ```swift
/// let socket = try await Connector.connect(host: "localhost", port: 8080, on: loop)
/// ```
package enum Connector {
    /// Connects to `host:port`, returning the connected socket bound to `loop`.
    ///
    /// - Throws: `ConnectError` naming the cause: unknown host, refused, unreachable, timed out, or the loop shut
    ///   down first (even while the resolver has not answered).
    package static func connect(
        host: String,
        port: Int,
        on loop: EventLoop,
        resolver: any Resolver = SystemResolver(),
        timeout: Duration = .seconds(10),
        attemptDelay: Duration = .milliseconds(250)
    ) async throws(ConnectError) -> LoopBound<Socket> {
        let deadline = Deadline.after(timeout)
        let addresses = try await resolve(
            host: host, port: port, resolver: resolver, for: loop, deadline: deadline, timeout: timeout)
        return try await connect(
            to: addresses, host: host, port: port, on: loop, deadline: deadline, timeout: timeout, attemptDelay: attemptDelay)
    }

    /// Asks `resolver` for `host`'s addresses on behalf of a connect that will run on `loop`. The wait ends when
    /// the resolver answers, when `deadline` passes, or when `loop` shuts down, whichever comes first: a
    /// resolver that never answers cannot hold the connect forever (it is cancelled and left behind).
    ///
    /// - Throws: `ConnectError` with `.unknownHost` (also for no addresses), `.timedOut` or `.eventLoopClosed`.
    static func resolve(
        host: String, port: Int, resolver: any Resolver, for loop: EventLoop, deadline: Deadline,
        timeout: Duration
    ) async throws(ConnectError) -> [SocketAddress] {
        let outcome = Promise<[SocketAddress], ConnectError>()
        let lookup = Task {
            do {
                let addresses = try await resolver.resolve(host: host, port: port)
                guard !addresses.isEmpty else {
                    throw ConnectError(reason: .unknownHost, host: host, port: port, resolutionError: .unknownHost(host))
                }
                outcome.succeed(addresses)
            } catch let error as ConnectError {
                outcome.fail(error)
            } catch let error as NameResolutionError {
                outcome.fail(ConnectError(reason: .unknownHost, host: host, port: port, resolutionError: error))
            } catch {
                outcome.fail(
                    ConnectError(
                        reason: .unknownHost, host: host, port: port,
                        resolutionError: NameResolutionError(host: host, code: 0, message: "\(error)", systemError: nil)))
            }
        }
        let watch = ResolutionWatch()
        loop.execute(
            {
                let closing = loop.onClosing { outcome.fail(.loopClosed(loop, host: host, port: port)) }
                let timer = loop.scheduleOnLoop(at: deadline) {
                    outcome.fail(ConnectError(reason: .timedOut, host: host, port: port, timeout: timeout))
                }
                if !watch.arm(closing: closing, timer: timer) {
                    // The lookup finished before the watch was armed.
                    loop.cancelOnClosing(closing)
                    loop.cancelOnLoop(timer)
                }
            }, ifClosed: { outcome.fail(.loopClosed(loop, host: host, port: port)) })
        let result: Result<[SocketAddress], ConnectError>
        do throws(ConnectError) { result = .success(try await outcome.get()) } catch { result = .failure(error) }
        if case .failure = result { lookup.cancel() }
        if let (closing, timer) = watch.disarm() {
            loop.execute {
                loop.cancelOnClosing(closing); loop.cancelOnLoop(timer)
            }
        }
        return try result.get()
    }

    /// Races already-resolved addresses. `trafficClass`, when given, is set on every attempt's socket before it
    /// connects (`IP_TOS` or `IPV6_TCLASS` by the address's family), so that the SYN carries it too, and so are
    /// `socketOptions`.
    package static func connect(
        to addresses: [SocketAddress],
        host: String,
        port: Int?,
        on loop: EventLoop,
        deadline: Deadline,
        timeout: Duration,
        attemptDelay: Duration = .milliseconds(250),
        trafficClass: UInt8? = nil,
        socketOptions: ClientSocketOptions = ClientSocketOptions(),
        observer: (@Sendable (ConnectAttemptRecord) -> Void)? = nil
    ) async throws(ConnectError) -> LoopBound<Socket> {
        let result: Result<LoopBound<Socket>, ConnectError> = await withCheckedContinuation { continuation in
            loop.execute(
                {
                    let race = ConnectionRace(
                        addresses: addresses, host: host, port: port, loop: loop,
                        deadline: deadline, timeout: timeout, attemptDelay: attemptDelay, trafficClass: trafficClass,
                        socketOptions: socketOptions, observer: observer
                    ) { result in
                        continuation.resume(returning: result.map { LoopBound($0, loop: loop) })
                    }
                    race.start()
                },
                ifClosed: {
                    continuation.resume(returning: .failure(.loopClosed(loop, host: host, port: port)))
                })
        }
        return try result.get()
    }
}

/// The shell around `HappyEyeballs`: owns the attempt sockets and timers on one loop. Used
/// directly (no task) by code already on the loop, such as the load generator's reconnects.
package final class ConnectionRace {
    private var machine: HappyEyeballs
    private let host: String
    private let port: Int?
    private let loop: EventLoop
    private let deadline: Deadline
    private let timeout: Duration
    private var attempts: [Int: PendingConnect] = [:]
    private var attemptTimer: TimerQueue<() -> Void>.ID?
    private var deadlineTimer: TimerQueue<() -> Void>.ID?
    private var closingHandler: UInt64?
    private var completion: ((Result<Socket, ConnectError>) -> Void)?
    private var failures: [ConnectError.Attempt] = []
    private let trafficClass: UInt8?
    private let socketOptions: ClientSocketOptions
    /// Told when each attempt starts and when it ends (connected, failed or abandoned).
    private let observer: ((ConnectAttemptRecord) -> Void)?
    /// The attempts under way, by index, as the observer was last told of them.
    private var records: [Int: ConnectAttemptRecord] = [:]

    package init(
        addresses: [SocketAddress], host: String, port: Int?, loop: EventLoop, deadline: Deadline, timeout: Duration,
        attemptDelay: Duration, trafficClass: UInt8? = nil, socketOptions: ClientSocketOptions = ClientSocketOptions(),
        observer: ((ConnectAttemptRecord) -> Void)? = nil,
        completion: @escaping (Result<Socket, ConnectError>) -> Void
    ) {
        machine = HappyEyeballs(addresses: addresses, attemptDelay: attemptDelay)
        self.observer = observer
        self.trafficClass = trafficClass
        self.socketOptions = socketOptions
        self.host = host
        self.port = port
        self.loop = loop
        self.deadline = deadline
        self.timeout = timeout
        self.completion = completion
    }

    package func start() {
        // The race keeps itself alive through the timers and attempts that reference it.
        deadlineTimer = loop.scheduleOnLoop(at: deadline) { [self] in timedOut() }
        // Between attempts the race waits on a timer, which a closing loop drops: it must hear the close itself.
        closingHandler = loop.onClosing { [self] in loopClosed() }
        perform(machine.start(now: .now()))
    }

    private func perform(_ actions: [HappyEyeballs.Action]) {
        for action in actions {
            switch action {
            case .startAttempt(let index, let address):
                startAttempt(index, address)
            case .scheduleNextAttempt(let when):
                if let attemptTimer { loop.cancelOnLoop(attemptTimer) }
                attemptTimer = loop.scheduleOnLoop(at: when) { [self] in
                    attemptTimer = nil
                    perform(machine.attemptDelayElapsed(now: .now()))
                }
            case .succeed(let index, let losers):
                for loser in losers {
                    attempts.removeValue(forKey: loser)?.cancel()
                    attemptEnded(loser, error: nil, abandoned: true)
                }
                attemptEnded(index, error: nil, abandoned: false)
                guard let winner = attempts.removeValue(forKey: index) else { preconditionFailure("winner \(index) unknown") }
                finish(.success(winner.takeSocket()))
            case .fail(let failed):
                let attempts = failed.map { ConnectError.Attempt(address: $0.address, error: $0.error) }
                finish(
                    .failure(ConnectError(reason: ConnectError.classify(attempts), host: host, port: port, attempts: attempts)))
            }
        }
    }

    private func startAttempt(_ index: Int, _ address: SocketAddress) {
        if let observer {
            let record = ConnectAttemptRecord(address: address, started: .now())
            records[index] = record
            observer(record)
        }
        do {
            let pending = try PendingConnect(
                address: address, loop: loop, trafficClass: trafficClass, socketOptions: socketOptions
            ) { [self] outcome in
                switch outcome {
                case .success: perform(machine.attemptSucceeded(index))
                case .failure(let error):
                    attempts.removeValue(forKey: index)
                    attemptEnded(index, error: error, abandoned: false)
                    perform(machine.attemptFailed(index, error: error, now: .now()))
                }
            }
            attempts[index] = pending
            pending.begin()
        } catch {
            // socket(2) itself failed (EMFILE, EAFNOSUPPORT for IPv6 on a v4-only host), or the socket's options or
            // local binding could not be set.
            loop.executeSoon { [self] in
                attemptEnded(index, error: error, abandoned: false)
                perform(machine.attemptFailed(index, error: error, now: .now()))
            }
            attempts[index] = nil
        }
    }

    /// Tells the observer that attempt `index` ended: connected (no error), failed, or abandoned (another won, the
    /// deadline passed, the loop closed).
    private func attemptEnded(_ index: Int, error: IOError?, abandoned: Bool) {
        guard let observer, var record = records.removeValue(forKey: index) else { return }
        record.ended = abandoned ? nil : .now()
        record.error = error
        record.isOver = true
        observer(record)
    }

    /// Every attempt still under way is abandoned.
    private func abandonAll() {
        for (_, attempt) in attempts { attempt.cancel() }
        for index in attempts.keys.sorted() { attemptEnded(index, error: nil, abandoned: true) }
        attempts.removeAll()
    }

    private func timedOut() {
        deadlineTimer = nil
        guard completion != nil else { return }
        abandonAll()
        finish(.failure(ConnectError(reason: .timedOut, host: host, port: port, attempts: failures, timeout: timeout)))
    }

    private func loopClosed() {
        closingHandler = nil
        guard completion != nil else { return }
        abandonAll()
        finish(.failure(.loopClosed(loop, host: host, port: port, attempts: failures)))
    }

    private func finish(_ result: Result<Socket, ConnectError>) {
        if let attemptTimer { loop.cancelOnLoop(attemptTimer) }
        if let deadlineTimer { loop.cancelOnLoop(deadlineTimer) }
        if let closingHandler { loop.cancelOnClosing(closingHandler) }
        attemptTimer = nil
        deadlineTimer = nil
        closingHandler = nil
        guard let completion else {
            if case .success(let socket) = result { try? socket.close() }
            return
        }
        self.completion = nil
        completion(result)
    }
}

/// One non-blocking connect in flight: registered for writability until it completes.
private final class PendingConnect: Selectable {
    private let socket: Socket
    private let loop: EventLoop
    private let address: SocketAddress
    private var registrationKey: UInt64?
    private var onOutcome: ((Result<Void, IOError>) -> Void)?

    init(
        address: SocketAddress, loop: EventLoop, trafficClass: UInt8?, socketOptions: ClientSocketOptions,
        onOutcome: @escaping (Result<Void, IOError>) -> Void
    ) throws(IOError) {
        self.address = address
        self.loop = loop
        self.onOutcome = onOutcome
        let socket = try Socket.makeStream(family: address.family)
        do throws(IOError) {
            if let trafficClass {
                switch address.family {
                case .ipv4: try socket.setOption(.typeOfService(trafficClass))
                case .ipv6: try socket.setOption(.ipv6TrafficClass(trafficClass))
                case .unix: break  // a local socket has no IP header
                }
            }
            try socketOptions.apply(to: socket, family: address.family)
        } catch {
            try? socket.close()
            throw error
        }
        self.socket = socket
    }

    /// Starts connecting. Completion is always reported later, from the loop, never re-entrantly.
    func begin() {
        do {
            switch try socket.connect(to: address) {
            case .processed:
                loop.executeSoon { [self] in report(.success(())) }
            case .wouldBlock:
                registrationKey = try loop.register(socket.rawDescriptor, interest: .write, handler: self)
            }
        } catch {
            loop.executeSoon { [self] in report(.failure(error)) }
        }
    }

    func ready(_ event: ReadinessEvent) {
        do {
            try socket.finishConnect()
            report(.success(()))
        } catch {
            report(.failure(error))
        }
    }

    func eventLoopIsClosing() {
        report(.failure(IOError(syscall: "connect", errno: .connectionAborted)))
        cancel()
    }

    private func report(_ outcome: Result<Void, IOError>) {
        guard let onOutcome else { return }
        self.onOutcome = nil
        unregister()
        if case .failure = outcome { try? socket.close() }
        onOutcome(outcome)
    }

    /// Hands the connected socket to the caller.
    func takeSocket() -> Socket { socket }

    /// Abandons the attempt and closes its socket.
    func cancel() {
        onOutcome = nil
        unregister()
        try? socket.close()
    }

    private func unregister() {
        if let key = registrationKey {
            loop.deregister(socket.rawDescriptor, key: key)
            registrationKey = nil
        }
    }
}

/// The loop-side watchers of one name lookup (its closing handler and deadline timer), handed between the loop
/// that arms them and the task that disarms them once the lookup is over, whichever comes first.
private final class ResolutionWatch: Sendable {
    private enum State {
        case pending
        case armed(closing: UInt64, timer: TimerQueue<() -> Void>.ID)
        case done
    }

    private let state = Lock(State.pending)

    /// Records the watchers; false when the lookup is already over (the caller cancels them at once).
    func arm(closing: UInt64, timer: TimerQueue<() -> Void>.ID) -> Bool {
        state.withLock { state in
            guard case .pending = state else { return false }
            state = .armed(closing: closing, timer: timer)
            return true
        }
    }

    /// Ends the watch; returns the watchers to cancel on the loop, if they were armed.
    func disarm() -> (UInt64, TimerQueue<() -> Void>.ID)? {
        state.withLock { state in
            defer { state = .done }
            if case .armed(let closing, let timer) = state { return (closing, timer) }
            return nil
        }
    }
}
