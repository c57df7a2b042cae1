@_spi(Locking) import Wire

/// What `-w` and `--trace` need to know of each transfer, gathered hop by hop: the bytes each request wrote and read
/// (from Wire's byte tap, `HTTPClientRequest.observesBytes`), when its first byte went out, and its metrics.
///
/// One per run; `begin` starts each URL afresh. The observer runs on the client's loop, the fetcher on its task: the
/// state is behind a lock.
final class TransferObservation: Sendable {
    /// One request of a transfer (the first, then one per redirect followed).
    struct Hop {
        var url: HTTPURL
        var method: String
        /// When the hop was sent, by the tool's clock.
        var start: ContinuousClock.Instant
        /// When its request's first byte went to the connection, since `start`.
        var pretransfer: Duration?
        var metrics: HTTPClientMetrics?
        var response: HTTPResponseHead?
        /// Head bytes read (every response head, interim ones included), request bytes written, body bytes written.
        var headerBytes = 0
        var requestBytes = 0
        var uploadBytes = 0
        var referer: String?
    }

    /// One URL's transfer so far.
    struct Transfer {
        var url = ""
        var index = 0
        var start = ContinuousClock.now
        var end: ContinuousClock.Instant?
        var hops: [Hop] = []
        var filename: String?
        /// The Location of a redirect not followed, resolved.
        var redirectURL: String?
        /// Connections seen, by local address, for curl's `#N` in the trace.
        var connections: [SocketAddress] = []
        // The attempt under way: whether its head has gone out (the next bytes written are body) and how its
        // answer splits.
        var headSent = false
        var splitter = ResponseSplitter()
    }

    let trace: TraceWriter?
    /// `--trace-tcp-info`: each exchange's `TCP_INFO` sample ends it in the trace.
    let tracesTCPInfo: Bool
    private let state = Lock(Transfer())
    /// Connection numbers last the whole run, as curl's do.
    private let connections: ConnectionNumbers

    convenience init(trace: TraceWriter?, tracesTCPInfo: Bool = false) {
        self.init(trace: trace, tracesTCPInfo: tracesTCPInfo, connections: ConnectionNumbers())
    }

    private init(trace: TraceWriter?, tracesTCPInfo: Bool, connections: ConnectionNumbers) {
        self.trace = trace
        self.tracesTCPInfo = tracesTCPInfo
        self.connections = connections
    }

    /// An observation for another transfer running at the same time (`-Z`): its own state, the same trace and
    /// connection numbers.
    func forAnotherTransfer() -> TransferObservation {
        TransferObservation(trace: trace, tracesTCPInfo: tracesTCPInfo, connections: connections)
    }

    /// The run's connections, numbered by their local address in the order they were first seen.
    private final class ConnectionNumbers: Sendable {
        let known = Lock<[SocketAddress]>([])
    }

    /// Starts the transfer of the `index`th URL, `url` as given.
    func begin(url: String, index: Int) {
        state.withLock { $0 = Transfer(url: url, index: index) }
    }

    /// Where the body goes (`filename_effective`).
    func setFilename(_ path: String?) {
        state.withLock { $0.filename = path }
    }

    /// Makes `request` tell this observation of its bytes, and starts a hop for it.
    func attach(to request: inout HTTPClientRequest, url: HTTPURL) {
        let hop = Hop(
            url: url, method: request.method.rawValue, start: .now, referer: request.headers.first(name: "Referer"))
        // The previous hop (a redirect's) is over: its sample ends it.
        traceTCPInfo(of: state.withLock { $0.hops.last?.metrics })
        state.withLock {
            $0.hops.append(hop)
            $0.headSent = false
            $0.splitter = ResponseSplitter()
        }
        request.observesBytes = true
        request.observer = { [self] event, metrics in observe(event, metrics) }
    }

    /// The hop's response head arrived.
    func answered(_ response: HTTPClientResponse) {
        state.withLock { state in
            guard !state.hops.isEmpty else { return }
            state.hops[state.hops.count - 1].metrics = response.metrics
            state.hops[state.hops.count - 1].response = response.head
        }
    }

    /// The last response was a redirect that was not followed: its target, for `redirect_url`.
    func setRedirectURL(_ url: String?) {
        state.withLock { $0.redirectURL = url }
    }

    /// The transfer is over (its body read, or failed); the values for `-w`.
    func finish(exitCode: Int32, error: String?) -> WriteOutValues {
        let (transfer, endsNow) = state.withLock { state in
            let endsNow = state.end == nil
            if endsNow { state.end = .now }
            return (state, endsNow)
        }
        if endsNow { traceTCPInfo(of: transfer.hops.last?.metrics) }
        return WriteOutValues(transfer, exitCode: exitCode, error: error)
    }

    /// With `--trace-tcp-info`, an `== Info:` line with the `TCP_INFO` sample the client took as the exchange's
    /// response ended (none when it ended without one: a failed exchange).
    private func traceTCPInfo(of metrics: HTTPClientMetrics?) {
        guard tracesTCPInfo, let trace, let info = metrics?.snapshot.tcpInfo else { return }
        var line =
            "TCP_INFO rtt=\(Self.micros(info.smoothedRTT))us rttvar=\(Self.micros(info.rttVariance))us"
            + " retransmits=\(info.retransmits) total_retrans=\(info.totalRetransmits) cwnd=\(info.congestionWindow)"
            + " mss=\(info.sendMSS)"
        if let rate = info.deliveryRate { line += " delivery_rate=\(rate)B/s" }
        if let acked = info.bytesAcked { line += " bytes_acked=\(acked)" }
        trace.info(line)
    }

    private static func micros(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    private func observe(_ event: HTTPClientRequestEvent, _ metrics: HTTPClientMetrics) {
        switch event {
        case .bytesWritten(let bytes):
            let (isHead, info) = state.withLock { state -> (Bool, [String]) in
                guard !state.hops.isEmpty else { return (false, []) }
                let last = state.hops.count - 1
                state.hops[last].requestBytes += bytes.readableBytes
                guard !state.headSent else {
                    state.hops[last].uploadBytes += bytes.readableBytes
                    return (false, [])
                }
                state.headSent = true
                if state.hops[last].pretransfer == nil {
                    state.hops[last].pretransfer = .now - state.hops[last].start
                }
                return (true, trace == nil ? [] : connectionInfo(metrics.snapshot, url: state.hops[last].url))
            }
            guard let trace else { return }
            for line in info { trace.info(line) }
            bytes.withReadableSpan { span in
                span.withUnsafeBufferPointer { trace.record(isHead ? .sendHeader : .sendData, $0) }
            }
        case .bytesRead(let bytes):
            let pieces = state.withLock { state -> [ResponseSplitter.Piece] in
                let pieces = bytes.withReadableSpan { span in span.withUnsafeBufferPointer { state.splitter.split($0) } }
                if !state.hops.isEmpty {
                    for case .headerLine(let line) in pieces { state.hops[state.hops.count - 1].headerBytes += line.count }
                }
                return pieces
            }
            guard let trace else { return }
            for piece in pieces {
                switch piece {
                case .headerLine(let line): trace.record(.receiveHeader, line)
                case .data(let data): trace.record(.receiveData, data)
                }
            }
        case .retry(_, let error):
            // Sent again from the start on a fresh connection.
            state.withLock {
                $0.headSent = false
                $0.splitter = ResponseSplitter()
            }
            trace?.info("Connection died, retrying a fresh connect: \(error)")
        case .bodyBytesSent, .responseHead, .redirect:
            break
        }
    }

    /// curl's lines about the connection a request goes out on, told before its head.
    private func connectionInfo(_ metrics: HTTPClientMetrics.Snapshot, url: HTTPURL) -> [String] {
        guard let remote = metrics.remoteAddress else { return [] }
        let number = connections.known.withLock { known in
            guard let local = metrics.localAddress else { return known.count }
            if let index = known.firstIndex(of: local) { return index }
            known.append(local)
            return known.count - 1
        }
        if metrics.isReusedConnection {
            return ["Re-using existing connection #\(number) with host \(url.host)"]
        }
        var lines: [String] = []
        if let port = remote.port {
            lines.append("  Trying \(remote.family == .ipv6 ? "[\(remote.host)]" : remote.host):\(port)...")
            lines.append("Connected to \(url.host) (\(remote.host)) port \(port) (#\(number))")
        } else {
            lines.append("  Trying \(remote.host)...")
            lines.append("Connected to \(url.host) (\(remote.host)) (#\(number))")
        }
        if let proxy = metrics.proxy { lines.append("Via proxy \(proxy)") }
        if let tls = metrics.transportSecurity {
            // The handshake itself happens below the byte tap: what it settled, as lines.
            lines.append("SSL connection using \(tls.protocolVersion) / \(tls.cipherSuite)")
            lines.append(
                tls.applicationProtocol.map { "ALPN: server accepted \($0)" } ?? "ALPN: server did not agree on a protocol")
            lines.append(
                "TLS session \(tls.isSessionResumed ? "resumed" : "new"), \(tls.peerCertificates.count) certificates sent")
            if !tls.verifiedCertificates.isEmpty { lines.append("SSL certificate verify ok.") }
        }
        return lines
    }
}
