import Wire

/// What a load run does: where it connects, the one request it repeats, how many connections on
/// how many loops, and when it stops. Built once, before any connection opens.
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
    /// The request, serialized once; every request sent is these bytes.
    package var request: ByteBuffer
    /// Whether the request is HEAD, whose responses carry no body whatever their framing says.
    package var isHeadRequest = false
    /// Connections in total, spread over the loops round-robin.
    package var connections = 64
    /// Event loops (threads) driving the connections.
    package var loops = 1
    /// Requests in flight per connection, written in one write (closed-loop mode only).
    package var pipeline = 1
    /// When to stop.
    package var stop = Stop.after(.seconds(10))
    /// Requests per second in total (constant-rate mode), or nil to send each next request as soon
    /// as the previous answer arrives (closed loop).
    package var rate: Double?
    /// A request not answered within this time counts as a timeout; its connection is replaced.
    package var timeout: Duration = .seconds(10)
    /// Load sent before measuring starts (duration runs only).
    package var warmup: Duration = .zero
    /// The limit for opening one connection.
    package var connectTimeout: Duration = .seconds(5)
    /// Bytes per read(2) on each connection (its read buffer is kept for the connection's life).
    package var readChunkSize = 16 * 1024

    /// Creates a plan for `request` against `addresses`.
    package init(addresses: [SocketAddress], host: String, port: Int, request: ByteBuffer) {
        self.addresses = addresses
        self.host = host
        self.port = port
        self.request = request
    }

    /// Serializes a request for a load run: the given fields, plus `Host` from the URL unless
    /// one was given, plus `Content-Length` when there is a body.
    ///
    /// - Throws: `HTTP1SerializationError` for a method, target or field that is unsafe on the wire.
    package static func serializeRequest(
        method: HTTPMethod,
        url: HTTPURL,
        headers: HTTPHeaders,
        body: [UInt8]?
    ) throws(HTTP1SerializationError) -> ByteBuffer {
        var head = HTTPRequestHead(method: method, target: url.target, headers: headers)
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
    /// `could not connect to HOST:PORT: ...`.
    package var description: String { message }
}
