import Foundation
import Testing
import Wire

/// A running server on 127.0.0.1 with an ephemeral port, its own loop group, and a client loop.
struct ServerHarness: Sendable {
    let server: HTTPServer
    let group: EventLoopGroup
    let clientLoop: EventLoop
    let port: Int

    /// Starts `handler` with `configure` applied to a default test configuration.
    static func start(
        loops: Int = 1,
        configure: (inout HTTPServerConfiguration) -> Void = { _ in },
        handler: some HTTPHandler
    ) async throws -> ServerHarness {
        var configuration = HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0))
        configure(&configuration)
        let group = try EventLoopGroup(loopCount: loops, namePrefix: "test-server")
        let server = HTTPServer(configuration: configuration, group: group, handler: handler)
        let address = try await server.start()
        let clientLoop = try EventLoop(name: "test-client")
        return ServerHarness(server: server, group: group, clientLoop: clientLoop, port: address.port!)
    }

    /// Starts a closure handler.
    static func start(
        loops: Int = 1,
        configure: (inout HTTPServerConfiguration) -> Void = { _ in },
        _ handler: @escaping @Sendable (HTTPServerRequest, HTTPResponseWriter) async throws -> Void
    ) async throws -> ServerHarness {
        try await start(loops: loops, configure: configure, handler: HTTPClosureHandler(handler))
    }

    /// Opens a raw connection to the server; `receiveBufferSize` sets the client's `SO_RCVBUF`, so that a client that
    /// stops reading fills the kernel's buffers after a few KiB instead of megabytes.
    func connect(receiveBufferSize: Int? = nil) async throws -> RawClient {
        try await RawClient.connect(port: port, loop: clientLoop, receiveBufferSize: receiveBufferSize)
    }

    /// Shuts everything down.
    func stop(gracePeriod: Duration = .seconds(2)) async {
        await server.shutdown(gracePeriod: gracePeriod)
        await group.shutdownGracefully()
        await clientLoop.shutdownGracefully()
    }
}

/// A test client over a raw socket: sends bytes as given, records every byte received.
struct RawClient: Sendable {
    let stream: LoopBound<SocketStream>
    let delegate: LoopBound<RecordingDelegate>

    static func connect(port: Int, loop: EventLoop, receiveBufferSize: Int? = nil) async throws -> RawClient {
        let socket = try await Connector.connect(host: "127.0.0.1", port: port, on: loop, timeout: .seconds(5))
        return try await loop.submit { () throws -> RawClient in
            if let receiveBufferSize { try socket.value.setOption(.receiveBufferSize(receiveBufferSize)) }
            let stream = try SocketStream(socket: socket.value, on: loop)
            let delegate = RecordingDelegate()
            stream.delegate = delegate
            return RawClient(stream: LoopBound(stream, loop: loop), delegate: LoopBound(delegate, loop: loop))
        }
    }

    /// Sends `text` as bytes.
    func send(_ text: String) async throws {
        try await send(Array(text.utf8))
    }

    /// Sends `bytes`.
    func send(_ bytes: [UInt8]) async throws {
        let stream = self.stream
        try await stream.loop.submit { stream.value.write([ByteBuffer(bytes: bytes)]) }
    }

    /// Waits until the server closed the connection (end of stream or reset); returns everything received.
    func readUntilClosed() async -> [UInt8] {
        await StreamPair.wait(delegate) { $0.reachedEnd || $0.closed }
        return await received()
    }

    /// Waits until `count` complete responses arrived; returns them.
    func readResponses(_ count: Int, methods: [HTTPMethod]? = nil) async throws -> [ParsedResponse] {
        let methods = methods ?? Array(repeating: .get, count: count)
        await StreamPair.wait(delegate) { delegate in
            (try? ParsedResponse.parseAll(delegate.received, methods: methods).count) ?? 0 >= count
                || delegate.reachedEnd || delegate.closed
        }
        return try ParsedResponse.parseAll(await received(), methods: methods)
    }

    /// Everything received so far.
    func received() async -> [UInt8] {
        let delegate = self.delegate
        return (try? await delegate.loop.submit { delegate.value.received }) ?? []
    }

    /// Whether the server ended the connection.
    func isClosedByPeer() async -> Bool {
        let delegate = self.delegate
        return (try? await delegate.loop.submit { delegate.value.reachedEnd || delegate.value.closed }) ?? true
    }

    /// Stops or resumes reading from the socket: a client that stops reading lets the server's writes back up.
    func setReading(_ enabled: Bool) async throws {
        let stream = self.stream
        try await stream.loop.submit { stream.value.setReadingEnabled(enabled) }
    }

    /// Waits until at least `count` bytes arrived in all, or the server ended the connection; returns how many did.
    func waitForReceivedCount(atLeast count: Int) async -> Int {
        await StreamPair.wait(delegate) { $0.receivedCount >= count || $0.reachedEnd || $0.closed }
        let delegate = self.delegate
        return (try? await delegate.loop.submit { delegate.value.receivedCount }) ?? 0
    }

    /// Ends the client's sending side (a FIN after what is queued) and keeps reading: a half-close.
    func shutdownWrite() async throws {
        let stream = self.stream
        try await stream.loop.submit { stream.value.shutdownWrite() }
    }

    /// Closes the client's side.
    func close() async {
        let stream = self.stream
        try? await stream.loop.submit { stream.value.close(error: nil) }
    }
}

/// A response as the test client parsed it.
struct ParsedResponse: Sendable {
    var head: HTTPResponseHead
    var body: [UInt8]

    var status: Int { head.status.code }
    var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// Parses every complete response in `bytes` (interim 1xx ones included), answering `methods` in order.
    static func parseAll(_ bytes: [UInt8], methods: [HTTPMethod]) throws -> [ParsedResponse] {
        var parser = HTTP1Parser(kind: .response)
        for method in methods { parser.expectResponse(to: method) }
        var responses: [ParsedResponse] = []
        var current: ParsedResponse?
        var offset = 0
        while true {
            let step = try bytes[offset...].withUnsafeBufferPointer { try parser.parse($0) }
            switch step.event {
            case .responseHead(let head):
                if head.isInterim {
                    responses.append(ParsedResponse(head: head, body: []))
                } else {
                    current = ParsedResponse(head: head, body: [])
                }
            case .body(let range):
                current?.body += bytes[(offset + range.lowerBound)..<(offset + range.upperBound)]
            case .end:
                if let done = current { responses.append(done) }
                current = nil
            case .requestHead, .upgraded, nil:
                break
            }
            offset += step.consumed
            if step.event == nil { return responses }
        }
    }
}

/// The outcome of running curl.
struct CurlResult: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `/usr/bin/curl` with `arguments`; output goes through files so a large body cannot block the child.
func runCurl(_ arguments: [String]) async throws -> CurlResult {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wire-curl-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let outURL = directory.appendingPathComponent("out")
    let errURL = directory.appendingPathComponent("err")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let out = try FileHandle(forWritingTo: outURL)
    let err = try FileHandle(forWritingTo: errURL)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["--max-time", "10"] + arguments
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    let status: Int32 = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
        do { try process.run() } catch { continuation.resume(throwing: error) }
    }
    try out.close()
    try err.close()
    return CurlResult(
        status: status,
        stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
        stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
}

/// An echo of what the server saw, for tests: `METHOD TARGET <bytes of body>`.
struct EchoTestHandler: HTTPHandler {
    func handle(_ request: HTTPServerRequest, response: HTTPResponseWriter) async throws {
        let body = try await request.body.collect(upTo: 8 << 20)
        var out = ByteBuffer(string: "\(request.method) \(request.target) ")
        out.writeBuffer(body)
        try await response.respond(HTTPResponseHead(status: .ok), body: out)
    }
}
