import Wire

/// A hostile HTTP/1.1 server that plays a `FaultScenario`: the engine of `wire serve --faults`, and what tests start
/// in process. It reads each request's head and `Content-Length` body loosely (it is the peer under test's opponent,
/// not a parser under test) and answers with its rule's actions. One loop; every connection and timer lives on it.
package struct FaultServer: Sendable {
    /// Chooses the rule for one request in code, as a test in process does: the connection's and the request's
    /// numbers (from 0) and the request head as text (up to its blank line). Nil leaves the request to the scenario's
    /// rules. Called on the server's loop as soon as the head is in, before its body.
    package typealias Script = @Sendable (_ connection: Int, _ request: Int, _ head: String) -> FaultRule?
    /// Told of each write the server makes, in order (a trickled piece is one write): the connection's number and the
    /// byte count. Called on the server's loop.
    package typealias WriteObserver = @Sendable (_ connection: Int, _ bytes: Int) -> Void

    private let core: LoopBound<Core>
    /// Where it listens.
    package let address: SocketAddress

    /// Listens on `address` (port 0 picks one) and plays `scenario`; `security` wraps each connection (HTTPS).
    /// `script` picks rules in code before the scenario's are tried; `onWrite` sees every write.
    package static func start(
        _ scenario: FaultScenario, on loop: EventLoop, address: SocketAddress,
        security: (any ServerTransportSecurity)? = nil, script: Script? = nil, onWrite: WriteObserver? = nil
    ) async throws -> FaultServer {
        try security?.prepare()
        let hooks = FaultHooks(script: script, onWrite: onWrite)
        let core = try await loop.submit { () throws -> LoopBound<Core> in
            LoopBound(
                try Core(loop: loop, address: address, scenario: scenario, security: security, hooks: hooks), loop: loop)
        }
        let bound = try await loop.submit { core.value.listener.localAddress }
        return FaultServer(core: core, address: bound)
    }

    /// Connections accepted so far.
    package func connectionCount() async throws -> Int {
        let core = self.core
        return try await core.loop.submit { core.value.accepted }
    }

    /// Connections open now: accepted and not yet closed (a reset or a FIN the client answered closes one).
    package func openConnectionCount() async throws -> Int {
        let core = self.core
        return try await core.loop.submit { core.value.connections.count }
    }

    /// The writes held back (`hold`) on the open connections, not yet released.
    package func heldCount() async throws -> Int {
        let core = self.core
        return try await core.loop.submit { core.value.connections.values.reduce(0) { $0 + $1.heldCount } }
    }

    /// Sends what every open connection holds back, each connection's in one write, as a `release` would.
    package func releaseHeld() async throws {
        let core = self.core
        try await core.loop.submit { for connection in core.value.connections.values { connection.releaseHeld() } }
    }

    /// The most requests the server took from one read of a connection, over every connection so far: above 1, the
    /// client pipelined.
    package func maxRequestsPerRead() async throws -> Int {
        let core = self.core
        return try await core.loop.submit { core.value.tally.maxRequestsPerRead }
    }

    /// Closes every connection accepted so far and keeps listening, as a server's idle timeout does.
    package func closeConnections() async throws {
        let core = self.core
        try await core.loop.submit { for connection in core.value.connections.values { connection.closeNow() } }
    }

    /// Stops listening and closes every connection.
    package func close() async throws {
        let core = self.core
        try await core.loop.submit { core.value.close() }
    }

    final class Core {
        let loop: EventLoop
        let scenario: FaultScenario
        let security: (any ServerTransportSecurity)?
        let hooks: FaultHooks
        let tally = FaultTally()
        var listener: SocketListener!
        var connections: [ObjectIdentifier: FaultConnection] = [:]
        var accepted = 0

        init(
            loop: EventLoop, address: SocketAddress, scenario: FaultScenario, security: (any ServerTransportSecurity)?,
            hooks: FaultHooks
        ) throws {
            self.loop = loop
            self.scenario = scenario
            self.security = security
            self.hooks = hooks
            listener = try SocketListener(bindingTo: address, on: loop, onAccept: { [unowned self] incoming in accept(incoming) })
        }

        private func accept(_ incoming: AcceptedConnection) {
            guard let stream = try? SocketStream(accepted: incoming, on: loop) else { return }
            let index = accepted
            accepted += 1
            let connection = FaultConnection(index: index, socket: stream, scenario: scenario, hooks: hooks, tally: tally) {
                [weak self] closed in
                self?.connections.removeValue(forKey: ObjectIdentifier(closed))
            }
            connections[ObjectIdentifier(connection)] = connection
            connection.start(security: security)
        }

        func close() {
            listener.close()
            for connection in connections.values { connection.socket.close(error: nil) }
            connections.removeAll()
        }
    }
}

/// What an in-process user adds to a scenario (`FaultServer.start`).
struct FaultHooks {
    let script: FaultServer.Script?
    let onWrite: FaultServer.WriteObserver?
}

/// Figures kept over every connection, closed ones included.
final class FaultTally {
    var maxRequestsPerRead = 0
}

/// One accepted connection: reads requests, finds their rules and plays their actions.
final class FaultConnection: ByteStreamDelegate {
    let index: Int
    /// The TCP stream underneath (a reset goes here, below any TLS).
    let socket: SocketStream
    /// What requests are read from and responses written to: `socket`, or TLS over it.
    private var stream: any ByteStream
    private let scenario: FaultScenario
    private let hooks: FaultHooks
    private let tally: FaultTally
    private let onClose: (FaultConnection) -> Void
    private var random: FaultRandom
    private var pending: [UInt8] = []
    private var requests = 0
    /// Requests taken in the current pass over what was read.
    private var requestsThisPass = 0
    /// Writes held back by `hold`, in order, until a release.
    private var held: [[UInt8]] = []
    /// Body bytes of the current request still to come (and be dropped).
    private var bodyRemaining = 0
    /// A rule waiting for its request's body before it runs.
    private var waitingRule: FaultRule?
    /// A rule waiting for the first byte of its request's body (`"when": "body"`).
    private var bodyStartRule: FaultRule?
    private var runner: FaultRunner?
    private var advancing = false
    /// Nothing more is answered: the server side ended, or a rule hung the connection.
    private var done = false
    private var isClosed = false
    /// Waiting for a whole ClientHello before cutting the handshake this way.
    private var handshakeCut: HandshakeCut?

    init(
        index: Int, socket: SocketStream, scenario: FaultScenario, hooks: FaultHooks, tally: FaultTally,
        onClose: @escaping (FaultConnection) -> Void
    ) {
        self.index = index
        self.socket = socket
        self.stream = socket
        self.scenario = scenario
        self.hooks = hooks
        self.tally = tally
        self.onClose = onClose
        // One generator per connection, so one connection's draws do not depend on how others interleave.
        random = FaultRandom(seed: scenario.seed &+ UInt64(index) &* 0xD1B5_4A32_D192_ED03)
    }

    func start(security: (any ServerTransportSecurity)?) {
        let acceptRule = scenario.acceptRule(connection: index)
        if let acceptRule, case .cutHandshake(let cut) = acceptRule.actions.first {
            handshakeCut = cut
            socket.delegate = self
            return
        }
        if let security {
            do {
                stream = try security.wrap(socket, handshakeTimeout: .seconds(10))
            } catch {
                socket.close(error: error)
                onClose(self)
                return
            }
        }
        stream.delegate = self
        if let acceptRule { run(acceptRule) }
    }

    // MARK: Reading

    func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer) {
        pending += buffer.readableBytesArray
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        if let handshakeCut {
            cutHandshake(handshakeCut)
            return
        }
        advance()
    }

    /// One whole TLS record (the ClientHello) in, then the cut.
    private func cutHandshake(_ cut: HandshakeCut) {
        guard pending.count >= 5, pending.count >= 5 + (Int(pending[3]) << 8 | Int(pending[4])) else { return }
        self.handshakeCut = nil
        pending.removeAll()
        done = true
        switch cut {
        case .stall: break
        case .fin: end(.fin)
        case .rst: end(.rst)
        }
    }

    private func advance() {
        guard !advancing else { return }
        advancing = true
        defer { advancing = false }
        requestsThisPass = 0
        while !isClosed {
            if let rule = bodyStartRule, !pending.isEmpty {
                bodyStartRule = nil
                run(rule)
            }
            if bodyRemaining > 0 {
                let dropped = min(bodyRemaining, pending.count)
                pending.removeFirst(dropped)
                bodyRemaining -= dropped
                if bodyRemaining > 0 { return }
            }
            if done { pending.removeAll() }
            if let rule = waitingRule {
                waitingRule = nil
                run(rule)
            }
            guard runner == nil, !done, let end = headEnd() else { return }
            let head = String(decoding: pending[..<end], as: UTF8.self)
            pending.removeFirst(end + 4)
            let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
            let requestLine = lines.first?.split(separator: " ") ?? []
            let target = requestLine.count > 1 ? String(requestLine[1]) : ""
            var length = 0
            var expectsContinue = false
            for line in lines.dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2 else { continue }
                let name = parts[0].lowercased()
                let value = parts[1].trimmingSpaces
                if name == "content-length", let number = Int(value), number >= 0 { length = number }
                if name == "expect" && value.lowercased() == "100-continue" { expectsContinue = true }
            }
            let rule =
                hooks.script?(index, requests, head) ?? scenario.rule(connection: index, request: requests, target: target)
                ?? Self.noRule
            requests += 1
            requestsThisPass += 1
            tally.maxRequestsPerRead = max(tally.maxRequestsPerRead, requestsThisPass)
            bodyRemaining = length
            guard rule.when == .body || rule.when == .request else {
                run(rule)
                continue
            }
            // The client waits for leave to send its body; the rule runs once the body starts, or is in.
            if expectsContinue && length > 0 { write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)[...]) }
            if rule.when == .request {
                waitingRule = rule
            } else if length == 0 {
                run(rule)
            } else {
                bodyStartRule = rule
            }
        }
    }

    /// What a request no rule matches gets.
    static let noRule = FaultRule(actions: [
        .write(Array("HTTP/1.1 404 Not Found\r\nContent-Length: 15\r\nContent-Type: text/plain\r\n\r\nno rule matches".utf8))
    ])

    private func headEnd() -> Int? {
        guard pending.count >= 4 else { return nil }
        for index in 0...(pending.count - 4)
        where pending[index] == 13 && pending[index + 1] == 10 && pending[index + 2] == 13 && pending[index + 3] == 10 {
            return index
        }
        return nil
    }

    // MARK: Running a rule

    private func run(_ rule: FaultRule) {
        let runner = FaultRunner(actions: rule.actions, connection: self)
        self.runner = runner
        runner.step()
    }

    /// The runner reached its last action with the connection still open: the next request may be read.
    fileprivate func runnerFinished() {
        runner = nil
        advance()
    }

    fileprivate var isOpen: Bool { !isClosed }

    fileprivate func write(_ bytes: ArraySlice<UInt8>) {
        guard !isClosed, !bytes.isEmpty else { return }
        hooks.onWrite?(index, bytes.count)
        stream.write([ByteBuffer(bytes: bytes)])
    }

    fileprivate func hold(_ bytes: [UInt8]) { held.append(bytes) }

    /// Everything held back, as one piece; nothing is held after.
    fileprivate func takeHeld() -> [UInt8] {
        let bytes = Array(held.joined())
        held.removeAll()
        return bytes
    }

    var heldCount: Int { held.count }

    /// Sends what is held back now, outside any rule (no trickle, no cut).
    func releaseHeld() { write(takeHeld()[...]) }

    /// Closes the connection now, as a server's idle timeout would.
    func closeNow() { stream.close(error: nil) }

    fileprivate func nextRandom(upTo bound: Int) -> Int { Int(random.next() % UInt64(bound)) + 1 }

    fileprivate func stopReading() { stream.setReadingEnabled(false) }

    fileprivate func hang() {
        done = true
        runner = nil
    }

    /// Ends the server's side: FIN after the queued bytes (reading on, so the client's own end closes the
    /// connection and no unread byte turns the close into a reset), or RST now.
    fileprivate func end(_ ending: FaultEnding) {
        done = true
        runner = nil
        switch ending {
        case .fin: stream.shutdownWrite()
        case .rst: socket.reset()
        // The TCP stream's own FIN, below TLS: TLS writes are encrypted and queued on it at once, so every record
        // written goes out first, and no close_notify does.
        case .finWithoutCloseNotify: socket.shutdownWrite()
        case .rstAfterAck: resetOnceAcknowledged(until: .now() + .seconds(10))
        }
    }

    /// Resets the connection once nothing written is left unacknowledged (or at `deadline`), looking every
    /// millisecond: an acknowledgement raises no event on the loop.
    private func resetOnceAcknowledged(until deadline: Deadline) {
        guard socket.isOpen else { return }
        if let unacknowledged = socket.unacknowledgedByteCount(), unacknowledged > 0, Deadline.now() < deadline {
            schedule(afterMilliseconds: 1) { [weak self] in self?.resetOnceAcknowledged(until: deadline) }
            return
        }
        socket.reset()
    }

    fileprivate func schedule(afterMilliseconds milliseconds: Int, _ work: @escaping () -> Void) {
        _ = socket.eventLoop.scheduleOnLoop(at: .after(.milliseconds(milliseconds))) { [weak self] in
            guard let self, !self.isClosed else { return }
            work()
        }
    }

    func streamDidReachEnd(_ stream: any ByteStream) { self.stream.close(error: nil) }
    func streamDidDrainWrites(_ stream: any ByteStream) {}
    func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?) {
        guard !isClosed else { return }
        isClosed = true
        runner = nil
        // A TLS stream closes its socket; a plain one is the socket.
        if socket.isOpen { socket.close(error: nil) }
        onClose(self)
    }
}

/// Plays one rule's actions in order on its connection, waiting on the loop's timers between them.
private final class FaultRunner {
    private let actions: [FaultAction]
    private unowned let connection: FaultConnection
    private var next = 0
    private var trickle: (bytes: Int, every: Int, random: Bool)?
    private var cut: (offset: Int, ending: FaultEnding)?
    /// Bytes this rule has written so far (the cut's offsets count from its first).
    private var sent = 0
    private var endlessCount = 0
    /// Writes go to the connection's held-back bytes instead of out.
    private var holding = false

    init(actions: [FaultAction], connection: FaultConnection) {
        self.actions = actions
        self.connection = connection
    }

    func step() {
        while next < actions.count {
            guard connection.isOpen else { return }
            let action = actions[next]
            next += 1
            switch action {
            case .delay(let milliseconds):
                connection.schedule(afterMilliseconds: milliseconds) { [self] in step() }
                return
            case .write(let bytes):
                if holding {
                    connection.hold(bytes)
                    continue
                }
                guard send(bytes) else { return }
            case .hold:
                holding = true
            case .release:
                holding = false
                guard send(connection.takeHeld()) else { return }
            case .trickle(let bytes, let every, let random):
                trickle = (bytes, every, random)
            case .cutAt(let offset, let ending):
                cut = (offset, ending)
                guard sent < offset else {
                    connection.end(ending)
                    return
                }
            case .close(let ending):
                connection.end(ending)
                return
            case .endlessHead(let every):
                endlessHead(every: every)
                return
            case .stopReading:
                connection.stopReading()
            case .hang:
                connection.hang()
                return
            case .cutHandshake:
                // Played at accept, before any TLS (`FaultConnection.start`).
                continue
            }
        }
        connection.runnerFinished()
    }

    /// Writes through the trickle and the cut; false when the steps go on later (a trickle's pieces) or the cut ended
    /// the connection.
    private func send(_ bytes: [UInt8]) -> Bool {
        if let trickle {
            writePieces(bytes[...], trickle: trickle)
            return false
        }
        return emit(bytes[...])
    }

    /// Writes through the cut; false once the cut ended the connection.
    private func emit(_ bytes: ArraySlice<UInt8>) -> Bool {
        if let cut, sent + bytes.count >= cut.offset {
            connection.write(bytes.prefix(cut.offset - sent))
            sent = cut.offset
            connection.end(cut.ending)
            return false
        }
        connection.write(bytes)
        sent += bytes.count
        return true
    }

    private func writePieces(_ bytes: ArraySlice<UInt8>, trickle: (bytes: Int, every: Int, random: Bool)) {
        guard !bytes.isEmpty else {
            step()
            return
        }
        let size = min(bytes.count, trickle.random ? connection.nextRandom(upTo: trickle.bytes) : trickle.bytes)
        guard emit(bytes.prefix(size)) else { return }
        let rest = bytes.dropFirst(size)
        guard !rest.isEmpty else {
            step()
            return
        }
        connection.schedule(afterMilliseconds: trickle.every) { [self] in writePieces(rest, trickle: trickle) }
    }

    private func endlessHead(every: Int) {
        endlessCount += 1
        guard emit(Array("X-Endless-\(endlessCount): \(String(repeating: "z", count: 48))\r\n".utf8)[...]) else { return }
        connection.schedule(afterMilliseconds: every) { [self] in endlessHead(every: every) }
    }
}

/// SplitMix64: a small seeded generator, so a scenario's random choices repeat for a seed.
struct FaultRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
