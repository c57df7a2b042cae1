import ArgumentParser
import Glibc
import Wire

/// `wire demo`: Wire's main job with no network: an embedded server on loopback and real
/// requests through the client's keep-alive pool, with what happened to each; then the same server through
/// WireClient's `HTTPSessionManager` (`DemoCommand+Manager.swift`), its resource downloader and HTTP cache
/// (`DemoCommand+Downloader.swift`) and its file transfers (`DemoCommand+Transfers.swift`). Any unexpected outcome
/// ends it with status 1.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Start an embedded server on loopback and send it real requests through the client."
    )

    @Option(help: "Event loops for the server and client (default: one per core).")
    var loops: Int = EventLoopGroup.coreCount

    func run() async throws {
        let group = try EventLoopGroup(loopCount: max(1, loops))
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0)),
            group: group,
            handler: Self.handle
        )
        let address = try await server.start()
        let base = "http://\(address.host):\(address.port ?? 0)"
        print("wire demo: server listening on \(base) (\(group.loops.count) loop\(group.loops.count == 1 ? "" : "s"))")
        print("")
        print(Self.row("request", "status", "body", "connection", "connect", "first byte", "total"))

        let client = try HTTPClient(group: group)
        let upload = ByteBuffer(bytes: (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let requests: [HTTPClientRequest] = [
            HTTPClientRequest(url: "\(base)/hello"),
            HTTPClientRequest(url: "\(base)/hello"),
            HTTPClientRequest(url: "\(base)/hello", method: .head),
            HTTPClientRequest(url: "\(base)/echo", method: .post, body: .bytes(upload)),
            HTTPClientRequest(url: "\(base)/stream"),
            HTTPClientRequest(url: "\(base)/missing"),
        ]
        var failures = 0
        for request in requests {
            let label = "\(request.method) \(request.url.dropFirst(base.count))"
            do {
                let response = try await client.execute(request, timeout: .seconds(10))
                let body = try await response.body.collect(upTo: 16 << 20)
                let facts = response.metrics.snapshot
                print(
                    Self.row(
                        label, "\(response.status.code)", Self.bytes(body.readableBytes),
                        facts.isReusedConnection ? "reused" : "new",
                        Self.milliseconds(facts.timings.connected), Self.milliseconds(facts.timings.firstByte),
                        Self.milliseconds(facts.timings.lastByte)
                    ))
            } catch {
                failures += 1
                print(Self.row(label, "error", "", "", "", "", "") + "  \(error)")
            }
        }

        // A malformed request on a raw connection: the server answers 400 and closes.
        print("")
        print(
            "malformed request (space before the colon, a smuggling vector) → \(try Self.sendRaw("GET / HTTP/1.1\r\nHost : x\r\n\r\n", to: address))"
        )

        failures += try await Self.runManager(base: base)
        failures += try await Self.runDownloader(base: base)
        failures += try await Self.runTransfers(base: base)

        await client.shutdown()
        await server.shutdown(gracePeriod: .seconds(2))
        await group.shutdownGracefully()
        if failures > 0 { throw ExitCode(1) }
    }

    /// The demo's server: `/hello`, `/echo` (POST), `/stream` (chunked), the routes of the manager's, the
    /// downloader's and the transfers' parts, 404 otherwise.
    @Sendable static func handle(_ request: HTTPServerRequest, _ response: HTTPResponseWriter) async throws {
        if try await handleManagerRoutes(request.head.target, response) { return }
        if try await handleDownloaderRoutes(request, response) { return }
        if try await handleTransferRoutes(request, response) { return }
        switch request.head.target {
        case "/hello":
            var head = HTTPResponseHead(status: .ok)
            head.headers.add(name: "Content-Type", value: "text/plain")
            try await response.respond(head, body: ByteBuffer(string: "Hello, World!"))
        case "/echo":
            let body = try await request.body.collect(upTo: 16 << 20)
            var head = HTTPResponseHead(status: .ok)
            head.headers.add(name: "Content-Length", value: String(body.readableBytes))
            try await response.respond(head, body: body)
        case "/stream":
            try await response.writeHead(HTTPResponseHead(status: .ok))
            for index in 0..<8 { try await response.write(ByteBuffer(string: "chunk \(index)\n")) }
            try await response.end()
        default:
            try await response.respond(HTTPResponseHead(status: .notFound), body: ByteBuffer(string: "not found\n"))
        }
    }

    /// Sends raw bytes on a fresh TCP connection and returns the response's status line.
    static func sendRaw(_ text: String, to address: SocketAddress) throws -> String {
        let handle = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(handle) }
        var raw = sockaddr_in()
        raw.sin_family = sa_family_t(AF_INET)
        raw.sin_port = UInt16(address.port ?? 0).bigEndian
        inet_pton(AF_INET, address.host, &raw.sin_addr)
        let connected = withUnsafePointer(to: &raw) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(handle, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return "connect failed (errno \(errno))" }
        _ = text.withCString { send(handle, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(handle, &chunk, chunk.count, 0)
            if count <= 0 { break }
            received += chunk[0..<count]
        }
        let text = String(decoding: received, as: UTF8.self)
        let statusLine = text.split(separator: "\r\n").first.map(String.init) ?? "(nothing)"
        return statusLine + (received.isEmpty ? "" : ", then the server closed the connection")
    }

    static func row(_ columns: String...) -> String {
        let widths = [22, 7, 10, 11, 10, 11, 10]
        return zip(columns, widths).map { column, width in column.padded(to: width) }
            .joined(separator: " ")
    }

    static func milliseconds(_ duration: Duration?) -> String {
        guard let duration else { return "-" }
        let (seconds, attoseconds) = duration.components
        return DecimalText.fixed((Double(seconds) + Double(attoseconds) / 1e18) * 1000, decimals: 2) + " ms"
    }

    static func bytes(_ count: Int) -> String {
        count >= 1 << 20 ? DecimalText.fixed(Double(count) / 1_048_576, decimals: 1) + " MiB" : "\(count) B"
    }
}
