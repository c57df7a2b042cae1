import FoundationEssentials
@_spi(Locking) import Wire

/// `wire get --record FILE` (and `wire request`): every byte each request wrote and read, from Wire's byte tap
/// (`HTTPClientRequest.observesBytes`: plaintext, one piece per write and per read), stamped with a monotonic clock
/// as the client's loop tells it, and each request's metrics; saved as a recording (`RecordLine`) when the run ends.
///
/// The observer runs on the client's loop and the fetcher on its task: the state is behind a lock.
final class ClientRecorder: Sendable {
    /// Where the recording goes.
    let path: String
    private let start = ContinuousClock.now
    private let wallClock = Timestamp.now()
    private let state = Lock(State())

    private struct State {
        var url = ""
        var lines: [RecordLine] = []
        /// Each request sent: when, and its metrics once its response head came (filled in when the run ends).
        var exchanges: [Exchange] = []
    }

    private struct Exchange {
        var t: Double
        var method: String
        var url: String
        var metrics: HTTPClientMetrics?
        var status: Int?
    }

    init(path: String) {
        self.path = path
    }

    private func now() -> Double {
        RecordFile.seconds(ContinuousClock.now - start)
    }

    /// Makes `request` tell the recorder its bytes (besides any observer it has already), as a new exchange.
    func attach(to request: inout HTTPClientRequest, url: HTTPURL) {
        let t = now()
        let index = state.withLock { state in
            if state.exchanges.isEmpty { state.url = url.description }
            state.exchanges.append(Exchange(t: t, method: request.method.rawValue, url: url.description))
            return state.exchanges.count - 1
        }
        let previous = request.observer
        request.observesBytes = true
        request.observer = { [self] event, metrics in
            previous?(event, metrics)
            observe(event, metrics, exchange: index)
        }
    }

    /// The latest exchange's response head came: its metrics fill in as its body is read.
    func answered(_ response: HTTPClientResponse) {
        state.withLock { state in
            guard !state.exchanges.isEmpty else { return }
            state.exchanges[state.exchanges.count - 1].metrics = response.metrics
            state.exchanges[state.exchanges.count - 1].status = Int(response.status.code)
        }
    }

    private func observe(_ event: HTTPClientRequestEvent, _ metrics: HTTPClientMetrics, exchange: Int) {
        let direction: RecordLine.Direction
        let bytes: ByteBuffer
        switch event {
        case .bytesWritten(let written): (direction, bytes) = (.out, written)
        case .bytesRead(let read): (direction, bytes) = (.in, read)
        case .bodyBytesSent, .responseHead, .redirect, .retry: return
        }
        let t = now()
        var line = RecordLine(type: .data)
        line.t = t
        line.conn = metrics.snapshot.connection ?? 0
        line.dir = direction
        line.data = Data(bytes.readableBytesArray)
        line.exchange = exchange
        state.withLock { $0.lines.append(line) }
    }

    /// The recording's lines: the header, the bytes in the order they were told, then each exchange's metrics.
    func lines() -> [RecordLine] {
        let state = state.withLock { $0 }
        var lines = [RecordFile.header(role: .client, url: state.url, wallClock: wallClock)]
        lines += state.lines
        for (index, exchange) in state.exchanges.enumerated() {
            var line = RecordLine(type: .metrics)
            line.exchange = index
            line.t = exchange.t
            line.method = exchange.method
            line.url = exchange.url
            line.status = exchange.status
            if let snapshot = exchange.metrics?.snapshot {
                line.conn = snapshot.connection
                line.reused = snapshot.isReusedConnection
                line.local = RecordFile.text(snapshot.localAddress)
                line.remote = RecordFile.text(snapshot.remoteAddress)
                line.tls = snapshot.transportSecurity.map {
                    RecordLine.TLSFacts(
                        version: $0.protocolVersion, cipher: $0.cipherSuite, alpn: $0.applicationProtocol,
                        resumed: $0.isSessionResumed)
                }
                let timings = snapshot.timings
                line.timings = RecordLine.Timings(
                    queued: RecordFile.seconds(snapshot.queued),
                    nameResolved: timings.nameResolved.map(RecordFile.seconds),
                    connected: timings.connected.map(RecordFile.seconds),
                    secureConnected: timings.secureConnected.map(RecordFile.seconds),
                    requestSent: timings.requestSent.map(RecordFile.seconds),
                    firstByte: timings.firstByte.map(RecordFile.seconds),
                    lastByte: timings.lastByte.map(RecordFile.seconds))
            }
            lines.append(line)
        }
        return lines
    }

    /// Writes the recording: a new file is readable by its owner only (it may hold cookies and credentials), an
    /// existing one is replaced whole and keeps its mode.
    func save() throws(IOError) {
        try LocalFiles.replaceContents(atPath: path, with: RecordFile.encode(lines()))
    }
}
