import FoundationEssentials
@_spi(Locking) import Wire

/// `wire serve --record DIR`: each connection the server accepts is recorded to a file of its own in DIR
/// (`RecordLine`'s format, role "server"), through the server's connection observer (plaintext, one piece per read
/// and per write, with the ends of each direction and the close) and each exchange's metrics through its exchange
/// observer (found by the client's address among the open connections). A connection's file is written when it
/// closes, off the loop; `finish()` waits for the files still being written.
final class ServerRecorder: HTTPServerObserver {
    /// The folder the files go to.
    let directory: String
    /// `http` or `https`, for each file's header's URL (the scheme and the address the connection came in on).
    private let scheme: String
    /// Names files apart from another run's in the same folder: the run's start and the process.
    private let prefix: String
    private let state = Lock(State())

    private struct State {
        var connections = 0
        /// The connections open now, by the client's address: where an exchange's metrics go.
        var open: [String: ConnectionRecorder] = [:]
        var writes: [Task<Void, Never>] = []
        var failures: [String] = []
    }

    /// A recorder writing into `directory` (made, mode 0700, when missing).
    init(directory: String, scheme: String, processID: Int32) throws(IOError) {
        try LocalFiles.makeDirectories(atPath: directory)
        self.directory = directory
        self.scheme = scheme
        let stamp = Timestamp.rfc3339(Timestamp.now()).filter { $0.isNumber }.prefix(14)
        prefix = "\(stamp)-\(processID)"
    }

    func exchangeStarted(_ exchange: HTTPServerExchangeStart) -> (any HTTPServerExchangeObserver)? {
        guard let remote = RecordFile.text(exchange.remoteAddress),
            let connection = state.withLock({ $0.open[remote] })
        else { return nil }
        let head = exchange.head
        let host = head.headers.first(name: "Host") ?? RecordFile.text(exchange.localAddress) ?? "localhost"
        let url = head.target.hasPrefix("/") ? "\(scheme)://\(host)\(head.target)" : head.target
        return connection.exchangeStarted(method: head.method.rawValue, url: url)
    }

    func connectionOpened(_ connection: HTTPServerConnectionStart) -> (any HTTPServerConnectionObserver)? {
        let number = state.withLock { state in
            state.connections += 1
            return state.connections
        }
        let remote = RecordFile.text(connection.remoteAddress)
        let digits = String(number)
        let name = "\(prefix)-\(String(repeating: "0", count: max(0, 6 - digits.count)))\(digits).jsonl"
        let recorder = ConnectionRecorder(
            path: directory + (directory.hasSuffix("/") ? "" : "/") + name,
            url: "\(scheme)://\(RecordFile.text(connection.localAddress) ?? "localhost")/", number: number,
            start: connection, recorder: self)
        // A Unix socket's clients have no address to tell them apart: their exchanges go unmeasured.
        if let remote, connection.remoteAddress?.family != .unix { state.withLock { $0.open[remote] = recorder } }
        return recorder
    }

    /// The connection from `remote` closed: a later one from the same address is another.
    fileprivate func closed(_ recorder: ConnectionRecorder) {
        guard let remote = recorder.remote else { return }
        state.withLock { state in
            if state.open[remote] === recorder { state.open[remote] = nil }
        }
    }

    /// Writes one connection's file on a task of its own, remembered until `finish()`.
    fileprivate func save(_ lines: [RecordLine], to path: String) {
        let task = Task.detached {
            do { try LocalFiles.replaceContents(atPath: path, with: RecordFile.encode(lines)) } catch {
                self.state.withLock { $0.failures.append("cannot write \(path): \(error)") }
            }
        }
        state.withLock { $0.writes.append(task) }
    }

    /// Waits for every file being written; returns the failures.
    func finish() async -> [String] {
        let writes = state.withLock { state in
            defer { state.writes.removeAll() }
            return state.writes
        }
        for write in writes { await write.value }
        return state.withLock { $0.failures }
    }
}

/// One connection's recording, gathered in memory as the loop tells it.
private final class ConnectionRecorder: HTTPServerConnectionObserver {
    let path: String
    let number: Int
    let recorder: ServerRecorder
    let remote: String?
    private let start = ContinuousClock.now
    private let lines: Lock<[RecordLine]>
    private let tally = Lock(Tally())
    private let header: RecordLine

    /// Bytes so far, and where the last exchange ended in them: the next exchange's bytes start there.
    private struct Tally {
        var bytesIn = 0
        var bytesOut = 0
        var exchanges = 0
        var endedIn = 0
        var endedOut = 0
    }

    init(path: String, url: String, number: Int, start connection: HTTPServerConnectionStart, recorder: ServerRecorder) {
        self.path = path
        self.number = number
        self.recorder = recorder
        remote = RecordFile.text(connection.remoteAddress)
        var header = RecordFile.header(role: .server, url: url, wallClock: Timestamp.now())
        header.local = RecordFile.text(connection.localAddress)
        header.remote = RecordFile.text(connection.remoteAddress)
        header.conn = number
        self.header = header
        lines = Lock([header])
    }

    private func line(_ kind: RecordLine.Kind) -> RecordLine {
        var line = RecordLine(type: kind)
        line.t = RecordFile.seconds(ContinuousClock.now - start)
        line.conn = number
        return line
    }

    private func data(_ bytes: ByteBuffer, _ direction: RecordLine.Direction) {
        var line = line(.data)
        line.dir = direction
        line.data = Data(bytes.readableBytesArray)
        lines.withLock { $0.append(line) }
    }

    func bytesRead(_ bytes: ByteBuffer) {
        tally.withLock { $0.bytesIn += bytes.readableBytes }
        data(bytes, .in)
    }

    func bytesWritten(_ bytes: ByteBuffer) {
        tally.withLock { $0.bytesOut += bytes.readableBytes }
        data(bytes, .out)
    }

    /// Seconds from the recording's start to `instant`.
    func seconds(at instant: ContinuousClock.Instant) -> Double { RecordFile.seconds(instant - start) }

    /// A request head arrived on this connection: its exchange's observer.
    func exchangeStarted(method: String, url: String) -> ExchangeRecorder {
        let index = tally.withLock { tally in
            defer { tally.exchanges += 1 }
            return tally.exchanges
        }
        return ExchangeRecorder(connection: self, index: index, method: method, url: url)
    }

    /// An exchange ended: its `metrics` line, with the bytes read and written since the previous one ended.
    func exchangeEnded(_ exchange: ExchangeRecorder, status: Int?, headWritten: ContinuousClock.Instant?, error: String?) {
        let ended = ContinuousClock.now
        let (bytesIn, bytesOut) = tally.withLock { tally in
            defer { (tally.endedIn, tally.endedOut) = (tally.bytesIn, tally.bytesOut) }
            return (tally.bytesIn - tally.endedIn, tally.bytesOut - tally.endedOut)
        }
        var line = RecordLine(type: .metrics)
        line.exchange = exchange.index
        line.conn = number
        line.t = seconds(at: exchange.started)
        line.method = exchange.method
        line.url = exchange.url
        line.status = status
        line.local = header.local
        line.remote = header.remote
        line.bytesIn = bytesIn
        line.bytesOut = bytesOut
        line.error = error
        line.timings = RecordLine.Timings(
            responseStarted: headWritten.map { RecordFile.seconds($0 - exchange.started) },
            responseEnded: error == nil ? RecordFile.seconds(ended - exchange.started) : nil)
        lines.withLock { $0.append(line) }
    }

    func readEnded() {
        var line = line(.end)
        line.dir = .in
        lines.withLock { $0.append(line) }
    }

    func writeEnded() {
        var line = line(.end)
        line.dir = .out
        lines.withLock { $0.append(line) }
    }

    func connectionClosed(error: (any Error)?) {
        var line = line(.close)
        line.error = error.map { "\($0)" }
        let all = lines.withLock { lines in
            lines.append(line)
            return lines
        }
        recorder.closed(self)
        recorder.save(all, to: path)
    }
}

/// One exchange of a recorded connection: when its head came, and its response's status and times.
private final class ExchangeRecorder: HTTPServerExchangeObserver {
    let connection: ConnectionRecorder
    /// The exchange's number on its connection, from 0.
    let index: Int
    /// When its request head was in.
    let started = ContinuousClock.now
    let method: String
    let url: String
    private let response = Lock<(status: Int?, headWritten: ContinuousClock.Instant?)>((nil, nil))

    init(connection: ConnectionRecorder, index: Int, method: String, url: String) {
        self.connection = connection
        self.index = index
        self.method = method
        self.url = url
    }

    func responseHeadWritten(_ head: HTTPResponseHead) {
        let now = ContinuousClock.now
        response.withLock { $0 = (head.status.code, now) }
    }

    func exchangeEnded(_ outcome: HTTPServerExchangeOutcome) {
        let (status, headWritten) = response.withLock { $0 }
        let error: String? =
            switch outcome {
            case .completed: nil
            case .failed(let failure): "\(failure)"
            }
        connection.exchangeEnded(self, status: status, headWritten: headWritten, error: error)
    }
}
