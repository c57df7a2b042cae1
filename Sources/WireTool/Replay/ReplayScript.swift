import Wire

/// What one side of a recorded connection does when it is replayed: its writes, each with the point in the live
/// peer's bytes it waits for and the recorded pause before it.
///
/// A write waits until the live peer has sent as much as the recorded peer had before it: counted in HTTP messages
/// (each head, each message's end: `MessageStream.milestones`) when the recorded peer's bytes parse, so that a peer
/// sending other bytes (curl instead of wire get) is answered at the same points; in bytes otherwise. Then it waits
/// the recorded time between the later of the previous write and the peer's last bytes before it and itself, divided
/// by the speed.
struct ReplayScript: Sendable {
    /// One write.
    struct Write: Sendable, Equatable {
        var bytes: [UInt8]
        /// The peer progress (milestones or bytes, as `progress` says) to wait for.
        var needs: Int
        var delay: Duration
    }

    /// How the peer's progress is counted.
    enum Progress: Sendable, Equatable {
        /// In message milestones, read by a parser of this kind.
        case messages(HTTP1Parser.Kind)
        /// In bytes: the recorded peer's bytes are no HTTP this tool reads.
        case bytes
    }

    var writes: [Write] = []
    var progress: Progress
    /// The methods of the requests, for reading responses (HEAD and CONNECT frame them differently).
    var methods: [HTTPMethod]
    /// The peer progress that means it sent everything it sent in the recording.
    var peerTotal: Int
    /// Whether the side sends end of stream after its last write: it did in the recording, or (a server) its last
    /// response is delimited by the connection's end or says `Connection: close`.
    var endsAfterWrites: Bool

    /// The script of `side` in `connection`, its pauses divided by `speed`.
    init(_ connection: Recording.Connection, playing side: Recording.Side, speed: Double) {
        let peer: Recording.Side = side == .client ? .server : .client
        let peerBytes = connection.bytes(of: peer)
        methods = MessageStream.methods(connection.bytes(of: .client))
        let peerStream = MessageStream(
            peerBytes, kind: peer == .client ? .request : .response, methods: peer == .server ? methods : [])
        let countsMessages = peerStream.error == nil && !peerStream.upgraded && !peerStream.milestones.isEmpty
        progress = countsMessages ? .messages(peer == .client ? .request : .response) : .bytes
        peerTotal = countsMessages ? peerStream.milestones.count : peerBytes.count
        var peerSoFar = 0
        var lastPeer: Double?
        var lastOwn: Double?
        for event in connection.events {
            guard event.side == side else {
                peerSoFar += event.bytes.count
                lastPeer = event.t
                continue
            }
            let reference = max(lastOwn ?? -.infinity, lastPeer ?? -.infinity)
            let pause = reference.isFinite ? max(0, event.t - reference) / speed : 0
            writes.append(
                Write(
                    bytes: event.bytes, needs: countsMessages ? peerStream.milestones(within: peerSoFar) : peerSoFar,
                    delay: .nanoseconds(Int64((pause * 1e9).rounded()))))
            lastOwn = event.t
        }
        switch side {
        case .client:
            endsAfterWrites = connection.clientEnded
        case .server:
            let last = MessageStream(connection.bytes(of: .server), kind: .response, methods: methods).messages.last
            endsAfterWrites = connection.serverEnded || (last?.response.map(Self.endsConnection) ?? false)
        }
    }

    /// Whether a response ends its connection: it says so, or its body runs to the connection's end.
    private static func endsConnection(_ head: HTTPResponseHead) -> Bool {
        if !head.isKeepAlive { return true }
        if head.isInterim || head.status.code == 204 || head.status.code == 304 { return false }
        return !head.headers.contains(name: "Content-Length") && !head.headers.contains(name: "Transfer-Encoding")
    }
}

/// The live peer's progress, counted as a `ReplayScript` counts the recorded one.
struct LiveProgress {
    private(set) var count = 0
    private var parser: HTTP1Parser?
    private var pending: [UInt8] = []

    init(_ progress: ReplayScript.Progress, methods: [HTTPMethod]) {
        if case .messages(let kind) = progress {
            var parser = HTTP1Parser(kind: kind, configuration: .lenient)
            if kind == .response { for method in methods { parser.expectResponse(to: method) } }
            self.parser = parser
        }
    }

    /// Counts what `bytes` complete. Bytes the parser refuses leave the count unbounded: nothing more can be matched
    /// with the recording, and no write waits for what will not come.
    mutating func feed(_ bytes: [UInt8]) {
        guard var parser else {
            if count != .max { count += bytes.count }
            return
        }
        pending += bytes
        var position = 0
        var added = 0
        var stop = false
        do throws(HTTP1ParseError) {
            try pending.withUnsafeBufferPointer { (input) throws(HTTP1ParseError) -> Void in
                while true {
                    let step = try parser.parse(UnsafeBufferPointer(rebasing: input[position...]))
                    position += step.consumed
                    switch step.event {
                    case .requestHead, .responseHead:
                        added += 1
                    case .end:
                        added += 1
                        if parser.isAwaitingUpgradeDecision { parser.declineUpgrade() }
                    case .upgraded:
                        stop = true
                        return
                    case .body:
                        continue
                    case nil:
                        if step.consumed == 0 { return }
                    }
                }
            }
        } catch {
            stop = true
        }
        if stop {
            count = .max
            self.parser = nil
            pending = []
            return
        }
        count += added
        pending.removeFirst(position)
        self.parser = parser
    }

    /// The peer's end of stream: a body delimited by it ends.
    mutating func finish() {
        guard var parser else { return }
        if case .end? = try? parser.finish() { count += 1 }
        self.parser = parser
    }
}
