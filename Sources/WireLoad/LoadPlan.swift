import Wire

/// What a load run does: where it connects, the request it repeats (or the mix of requests it
/// sends in turn), how many connections on how many loops, and when it stops. Built once, before
/// any connection opens.
package struct LoadPlan: Sendable {
    /// When the run ends.
    package enum Stop: Sendable, Hashable {
        /// After this long (the warm-up not included): requests still in flight then are dropped.
        case after(Duration)
        /// After exactly this many requests have been answered or have failed.
        case requests(Int)
    }

    /// The addresses to connect to, in the order to try them (Happy Eyeballs).
    package var addresses: [SocketAddress]
    /// The host as the user wrote it, for messages.
    package var host: String
    /// The port, for messages.
    package var port: Int
    /// The request, serialized once; every request sent is these bytes (unless `mix` is given).
    package var request: ByteBuffer
    /// Whether the request is HEAD, whose responses carry no body whatever their framing says.
    package var isHeadRequest = false
    /// Requests sent in turn instead of `request`, each as often as its weight says, interleaved
    /// (smooth weighted round-robin): empty for `request` alone.
    package var mix: [MixEntry] = []
    /// Connections in total, spread over the loops round-robin. With a `segment`, the whole run's
    /// connections, of which this process opens its share.
    package var connections = 64
    /// Event loops (threads) driving the connections.
    package var loops = 1
    /// Requests in flight per connection, written in one write (closed-loop mode only).
    package var pipeline = 1
    /// When to stop.
    package var stop = Stop.after(.seconds(10))
    /// Requests per second in total (constant-rate mode), or nil to send each next request as soon
    /// as the previous answer arrives (closed loop). With a `segment`, the whole run's rate.
    package var rate: Double?
    /// The part of the whole run this process sends: its share of the connections, of the
    /// request slots at a constant rate and of a request count (`LoadSegment`).
    package var segment = LoadSegment.whole
    /// When the run starts on the monotonic clock (`Posix.monotonicNanoseconds()`), so that
    /// processes started apart begin together; nil: as soon as the connections are open.
    package var startAt: UInt64?
    /// A request not answered within this time counts as a timeout; its connection is replaced.
    package var timeout: Duration = .seconds(10)
    /// Load sent before measuring starts (duration runs only).
    package var warmup: Duration = .zero
    /// The limit for opening one connection.
    package var connectTimeout: Duration = .seconds(5)
    /// Bytes per read(2) on each connection (its read buffer is kept for the connection's life).
    package var readChunkSize = 16 * 1024
    /// Opens each connection in place of the race over `addresses` (which then only name the target in messages):
    /// through a proxy, with TLS (`wire bench -x`). It is given the connection's loop and must return a stream on
    /// that loop, with no delegate; a thrown error is the connect's failure (the first one met is kept for
    /// `LoadStartError.cause`). Opening runs in a task; the requests on the stream do not.
    package var openStream: (@Sendable (EventLoop) async throws -> LoopBound<any ByteStream>)?

    /// Creates a plan for `request` against `addresses`.
    package init(addresses: [SocketAddress], host: String, port: Int, request: ByteBuffer) {
        self.addresses = addresses
        self.host = host
        self.port = port
        self.request = request
    }

    /// One request of a mix: its bytes and how often it is sent relative to the others.
    package struct MixEntry: Sendable {
        /// The request, serialized once.
        package var request: ByteBuffer
        /// Whether it is HEAD (its responses have no body).
        package var isHead: Bool
        /// How many times it is sent in each cycle of the mix, at least 1.
        package var weight: Int

        /// An entry for `request`, sent `weight` times per cycle.
        package init(request: ByteBuffer, isHead: Bool = false, weight: Int = 1) {
            self.request = request
            self.isHead = isHead
            self.weight = weight
        }
    }

    /// The connections this process opens: its segment's share of `connections`.
    package var segmentConnections: Int { segment.share(of: connections) }

    /// At a constant rate, the first slot of the whole run's schedule that this segment's connection
    /// `connection` sends (slot `k` is due `k / rate` seconds after the start); its next ones follow
    /// every `slotStride` slots. The segment's slots are those `k` with `k % segment.count ==
    /// segment.index`, dealt to its connections in turn; with `connections` a multiple of the
    /// segment count, each slot goes to the connection that sends it in one whole run.
    package func firstSlot(ofConnection connection: Int) -> Int { segment.globalNumber(ofLocal: connection) }

    /// The slots between two requests of one connection at a constant rate.
    package var slotStride: Int { segment.count * segmentConnections }

    /// One cycle of a weighted mix, as entry numbers in the order they are sent: each entry as
    /// often as its weight, spread out rather than in runs (nginx's smooth weighted round-robin:
    /// weights 5, 1, 1 give 0 0 1 0 2 0 0). The weights are divided by their common divisor first.
    package static func mixOrder(weights: [Int]) -> [Int] {
        guard !weights.isEmpty, weights.allSatisfy({ $0 > 0 }) else { return [] }
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        let divisor = weights.reduce(0, gcd)
        let reduced = weights.map { $0 / divisor }
        let total = reduced.reduce(0, +)
        var current = Array(repeating: 0, count: reduced.count)
        var order: [Int] = []
        order.reserveCapacity(total)
        for _ in 0..<total {
            var best = 0
            for entry in reduced.indices {
                current[entry] += reduced[entry]
                if current[entry] > current[best] { best = entry }
            }
            current[best] -= total
            order.append(best)
        }
        return order
    }

    /// Serializes a request for a load run: the given fields, plus `Host` from the URL unless
    /// one was given, plus `Content-Length` when there is a body.
    ///
    /// - Throws: `HTTP1SerializationError` for a method, target or field that is unsafe on the wire.
    /// Through a forwarding proxy (`proxy`), the target is in absolute form (RFC 9112 §3.2.2) and the proxy's fields
    /// and credentials are added (`Proxy.fieldsForProxy(_:)`), as Wire's client sends them.
    package static func serializeRequest(
        method: HTTPMethod,
        url: HTTPURL,
        headers: HTTPHeaders,
        body: [UInt8]?,
        forwardingTo proxy: Proxy? = nil
    ) throws(HTTP1SerializationError) -> ByteBuffer {
        var head = HTTPRequestHead(method: method, target: url.target, headers: headers)
        if let proxy {
            head.target = "\(url.scheme)://\(url.hostHeader)\(url.target)"
            head.headers = proxy.fieldsForProxy(headers)
        }
        if !head.headers.contains(name: "host") {
            var withHost = HTTPHeaders()
            withHost.add(name: "Host", value: url.hostHeader)
            withHost.add(contentsOf: head.headers)
            head.headers = withHost
        }
        var bytes: [UInt8] = []
        let framing: HTTP1Serializer.BodyFraming = body.map { .contentLength($0.count) } ?? .asInHeaders
        try HTTP1Serializer.writeRequestHead(head, framing: framing, into: &bytes)
        if let body { bytes += body }
        return ByteBuffer(bytes: bytes)
    }
}

/// A load run that could not start.
package struct LoadStartError: Error, Sendable, CustomStringConvertible {
    /// Why.
    package let message: String
    /// The first error a connection failed with, when no connection opened and the plan's `openStream` threw it:
    /// the caller's own type (a proxy's refusal, say), for its exit status.
    package var cause: (any Error & Sendable)?

    /// An error saying `message`, caused by `cause`.
    package init(message: String, cause: (any Error & Sendable)? = nil) {
        self.message = message
        self.cause = cause
    }
    /// `could not connect to HOST:PORT: ...`.
    package var description: String { message }
}
