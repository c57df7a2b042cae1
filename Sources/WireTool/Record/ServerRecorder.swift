import FoundationEssentials
import Wire

/// `wire serve --record DIR`: each connection the server accepts is recorded to a file of its own in DIR
/// (`RecordLine`'s format, role "server"), through the server's connection observer (plaintext, one piece per read
/// and per write, with the ends of each direction and the close). A connection's file is written when it closes,
/// off the loop; `finish()` waits for the files still being written.
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

    func exchangeStarted(_ exchange: HTTPServerExchangeStart) -> (any HTTPServerExchangeObserver)? { nil }

    func connectionOpened(_ connection: HTTPServerConnectionStart) -> (any HTTPServerConnectionObserver)? {
        let number = state.withLock { state in
            state.connections += 1
            return state.connections
        }
        let digits = String(number)
        let name = "\(prefix)-\(String(repeating: "0", count: max(0, 6 - digits.count)))\(digits).jsonl"
        return ConnectionRecorder(
            path: directory + (directory.hasSuffix("/") ? "" : "/") + name,
            url: "\(scheme)://\(RecordFile.text(connection.localAddress) ?? "localhost")/", number: number,
            start: connection, recorder: self)
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
    private let start = ContinuousClock.now
    private let lines: Lock<[RecordLine]>

    init(path: String, url: String, number: Int, start connection: HTTPServerConnectionStart, recorder: ServerRecorder) {
        self.path = path
        self.number = number
        self.recorder = recorder
        var header = RecordFile.header(role: .server, url: url, wallClock: Timestamp.now())
        header.local = RecordFile.text(connection.localAddress)
        header.remote = RecordFile.text(connection.remoteAddress)
        header.conn = number
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

    func bytesRead(_ bytes: ByteBuffer) { data(bytes, .in) }

    func bytesWritten(_ bytes: ByteBuffer) { data(bytes, .out) }

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
        recorder.save(all, to: path)
    }
}
