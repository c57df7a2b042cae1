import FoundationEssentials
import Wire

/// A recording read back: its header's facts and its connections, each with the bytes of both sides in the order
/// they were written and read.
struct Recording: Sendable {
    /// One side of a connection.
    enum Side: Sendable, Equatable {
        case client, server
    }

    /// One write or read, as recorded.
    struct Event: Sendable, Equatable {
        var t: Double
        var side: Side
        var bytes: [UInt8]
        /// On the client side, the request the bytes belong to.
        var exchange: Int?
    }

    /// One connection's bytes.
    struct Connection: Sendable {
        var number: Int
        var events: [Event] = []
        /// Whether each side sent end of stream, or the connection closed, when the recording saw it (server
        /// recordings only).
        var clientEnded = false
        var serverEnded = false
        /// When the recording saw the connection close, if it did.
        var closed: Double?

        /// Every byte `side` sent, in order.
        func bytes(of side: Side) -> [UInt8] {
            var bytes: [UInt8] = []
            for event in events where event.side == side { bytes += event.bytes }
            return bytes
        }

        /// The time of the event that carried byte `offset` of `side`'s bytes (the last event's time past the end).
        func time(ofByte offset: Int, of side: Side) -> Double? {
            var position = 0
            var last: Double?
            for event in events where event.side == side {
                last = event.t
                position += event.bytes.count
                if offset < position { return event.t }
            }
            return last
        }
    }

    var role: RecordLine.Role
    var url: String
    var startedUnix: Double
    var connections: [Connection]
    /// The `metrics` lines, by exchange (HAR export reads a client recording's: a server's data lines name no
    /// exchange).
    var metrics: [Int: RecordLine]

    /// The recording in `lines` (as `RecordFile.decode` returns them, the header first).
    init(_ lines: [RecordLine]) {
        let header = lines[0]
        role = header.role ?? .client
        url = header.url ?? ""
        startedUnix = header.startedUnix ?? 0
        var connections: [Connection] = []
        var index: [Int: Int] = [:]
        var metrics: [Int: RecordLine] = [:]
        func position(of number: Int) -> Int {
            if let known = index[number] { return known }
            connections.append(Connection(number: number))
            index[number] = connections.count - 1
            return connections.count - 1
        }
        let clientDirection: RecordLine.Direction = header.role == .server ? .in : .out
        for line in lines.dropFirst() {
            switch line.type {
            case .header:
                continue
            case .data:
                guard let t = line.t, let number = line.conn, let direction = line.dir, let data = line.data else { continue }
                let side: Side = direction == clientDirection ? .client : .server
                connections[position(of: number)].events.append(
                    Event(t: t, side: side, bytes: Array(data), exchange: line.exchange))
            case .end:
                guard let number = line.conn, let direction = line.dir else { continue }
                if direction == clientDirection {
                    connections[position(of: number)].clientEnded = true
                } else {
                    connections[position(of: number)].serverEnded = true
                }
            case .close:
                guard let number = line.conn else { continue }
                connections[position(of: number)].closed = line.t
            case .metrics:
                if let exchange = line.exchange { metrics[exchange] = line }
            }
        }
        self.connections = connections
        self.metrics = metrics
    }

    /// Reads the recording at `path`.
    static func read(_ path: String) throws(RecordFile.ReadError) -> Recording {
        let bytes: [UInt8]
        do { bytes = try LocalFiles.contents(atPath: path) } catch {
            throw RecordFile.ReadError(line: 0, message: "cannot read \(path): \(error)")
        }
        return Recording(try RecordFile.decode(bytes))
    }
}

/// HTTP messages found in one side's bytes, with where they are: what HAR export, replay and comparison read.
struct MessageStream: Sendable {
    /// One message.
    struct Message: Sendable {
        /// Its bytes in the stream: head and body with its framing.
        var range: Range<Int>
        /// The head's length (up to and with the empty line).
        var headLength: Int
        var request: HTTPRequestHead?
        var response: HTTPResponseHead?
        /// The body without its framing (chunk sizes removed).
        var body: [UInt8] = []
        /// Whether its end was seen (an incomplete last message has none).
        var isComplete = false
    }

    var messages: [Message] = []
    /// The offset just past each head and each message's end, in order: the points a replay waits for.
    var milestones: [Int] = []
    /// Where the parser refused the bytes, and why; nothing after it is read.
    var error: (offset: Int, kind: String)?
    /// Whether the connection switched protocols: the bytes after `milestones.last` are no HTTP/1.1.
    var upgraded = false

    /// Requests (`kind` .request) or responses in `bytes`; responses answer `methods` in order (HEAD and CONNECT
    /// change their framing). `ended`: the stream's end is known (a body delimited by the close is then complete).
    init(_ bytes: [UInt8], kind: HTTP1Parser.Kind, methods: [HTTPMethod] = [], ended: Bool = true) {
        var parser = HTTP1Parser(kind: kind, configuration: .lenient)
        for method in methods { parser.expectResponse(to: method) }
        var position = 0
        var current: Message?
        do throws(HTTP1ParseError) {
            try bytes.withUnsafeBufferPointer { (input) throws(HTTP1ParseError) -> Void in
                while true {
                    let step = try parser.parse(UnsafeBufferPointer(rebasing: input[position...]))
                    let stepStart = position
                    position += step.consumed
                    switch step.event {
                    case .requestHead(let head):
                        current = Message(range: stepStart..<position, headLength: position - stepStart, request: head)
                        milestones.append(position)
                    case .responseHead(let head):
                        let message = Message(range: stepStart..<position, headLength: position - stepStart, response: head)
                        milestones.append(position)
                        if head.isInterim {
                            var interim = message
                            interim.isComplete = true
                            messages.append(interim)
                        } else {
                            current = message
                        }
                    case .body(let range):
                        current?.body += input[stepStart + range.lowerBound..<stepStart + range.upperBound]
                    case .end:
                        if var message = current {
                            message.range = message.range.lowerBound..<position
                            message.isComplete = true
                            messages.append(message)
                            milestones.append(position)
                        }
                        current = nil
                        // This reader answers no upgrade: the bytes after it are read as HTTP too.
                        if parser.isAwaitingUpgradeDecision { parser.declineUpgrade() }
                    case .upgraded:
                        if var message = current {
                            message.range = message.range.lowerBound..<position
                            message.isComplete = true
                            messages.append(message)
                            milestones.append(position)
                        }
                        current = nil
                        upgraded = true
                        return
                    case nil:
                        if step.consumed == 0 || position == input.count { return }
                    }
                }
            }
            if ended, !parser.isUpgraded, case .end? = try parser.finish(), var message = current {
                message.range = message.range.lowerBound..<bytes.count
                message.isComplete = true
                messages.append(message)
                milestones.append(bytes.count)
                current = nil
            }
        } catch {
            self.error = (error.offset, error.kind.name)
        }
        if var message = current {
            message.range = message.range.lowerBound..<max(position, message.range.upperBound)
            messages.append(message)
        }
    }

    /// How many milestones lie within the first `length` bytes.
    func milestones(within length: Int) -> Int {
        milestones.prefix { $0 <= length }.count
    }

    /// The methods of the requests in `bytes`, for reading their responses.
    static func methods(_ bytes: [UInt8]) -> [HTTPMethod] {
        MessageStream(bytes, kind: .request).messages.compactMap { $0.request?.method }
    }
}
