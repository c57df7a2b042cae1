import Wire

/// Writes `--json-summary` output: one JSON object per URL, on one line,
///
/// `{"url", "status", "version", "headers": [[name, value], …], "body_b64", "reused", "timings": {"name_resolved",
/// "connected", "request_sent", "first_byte", "last_byte"}}`
///
/// where `url` is the URL as fetched (a glob's, expanded), which says whose line it is when `-Z` prints them in the
/// order the transfers end.
///
/// with timings in seconds from the start of the request (strings by `JSONString`'s byte mapping) (null when the phase did not happen). The body is
/// base64-encoded chunk by chunk as it arrives and written at once, so memory stays flat however large it is. A
/// transfer that fails before its response prints `{"url", "error", "exit_code"}`; one that fails in the middle of the body
/// ends its object with the same two keys after the timings.
struct JSONSummaryWriter {
    private let sink: OutputSink
    private let url: String
    private var pending: [UInt8] = []
    private var encoder = Base64Encoder()

    /// A writer printing the summary of `url` to `sink`.
    init(url: String, sink: OutputSink) {
        self.url = url
        self.sink = sink
    }

    /// Writes everything up to the opening quote of `body_b64`.
    ///
    /// - Throws: `TransferFailure` with status 23 if the output fails.
    mutating func begin(_ head: HTTPResponseHead) throws(TransferFailure) {
        appendURL()
        pending.append(contentsOf: #","status":\#(head.status.code),"version":"#.utf8)
        JSONString.append(head.version.description, to: &pending)
        pending.append(contentsOf: #","headers":"#.utf8)
        JSONString.appendFields(head.headers, to: &pending)
        pending.append(contentsOf: #","body_b64":""#.utf8)
        try flush()
    }

    /// Encodes and writes one body chunk.
    ///
    /// - Throws: `TransferFailure` with status 23 if the output fails.
    mutating func body(_ chunk: ByteBuffer) throws(TransferFailure) {
        chunk.withReadableSpan { span in
            span.withUnsafeBufferPointer { encoder.encode($0, into: &pending) }
        }
        try flush()
    }

    /// Closes `body_b64` and writes `reused`, `timings` and, for a transfer that failed mid-body, the failure.
    ///
    /// - Throws: `TransferFailure` with status 23 if the output fails.
    mutating func end(_ metrics: HTTPClientMetrics.Snapshot, failure: TransferFailure?) throws(TransferFailure) {
        encoder.finish(into: &pending)
        pending.append(contentsOf: #"","reused":\#(metrics.isReusedConnection),"timings":{"#.utf8)
        let timings = metrics.timings
        let phases: [(String, Duration?)] = [
            ("name_resolved", timings.nameResolved), ("connected", timings.connected),
            ("request_sent", timings.requestSent),
            ("first_byte", timings.firstByte), ("last_byte", timings.lastByte),
        ]
        for (position, (name, value)) in phases.enumerated() {
            if position > 0 { pending.append(UInt8(ascii: ",")) }
            JSONString.append(name, to: &pending)
            pending.append(UInt8(ascii: ":"))
            pending.append(contentsOf: (value.map { String(Self.seconds($0)) } ?? "null").utf8)
        }
        pending.append(UInt8(ascii: "}"))
        if let failure { appendFailure(failure) }
        pending.append(contentsOf: "}\n".utf8)
        try flush()
    }

    /// Writes the object of a transfer that failed before any response.
    ///
    /// - Throws: `TransferFailure` with status 23 if the output fails.
    mutating func failed(_ failure: TransferFailure) throws(TransferFailure) {
        appendURL()
        appendFailure(failure)
        pending.append(contentsOf: "}\n".utf8)
        try flush()
    }

    /// `{"url":"…"`.
    private mutating func appendURL() {
        pending.append(contentsOf: #"{"url":"#.utf8)
        JSONString.append(url, to: &pending)
    }

    private mutating func appendFailure(_ failure: TransferFailure) {
        pending.append(contentsOf: #","error":"#.utf8)
        JSONString.append(failure.message, to: &pending)
        pending.append(contentsOf: #","exit_code":\#(failure.status)"#.utf8)
    }

    private mutating func flush() throws(TransferFailure) {
        defer { pending.removeAll(keepingCapacity: true) }
        try sink.write(pending)
    }

    /// A duration in seconds, as a JSON number.
    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
