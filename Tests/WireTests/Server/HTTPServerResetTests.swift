import Testing
import Wire

extension IOSuite {
    /// A client that pipelines requests and resets the connection at once must cost the server that one connection
    /// and nothing else: a response that ends after its connection closed is dropped quietly.
    @Suite("HTTPServer under resets")
    struct HTTPServerResetTests {
        /// Pipelined requests, then an RST before the server has answered them all.
        static let burst = String(repeating: "GET / HTTP/1.1\r\nHost: a\r\n\r\n", count: 3)

        /// Sends `bytes` and resets the connection straight after (SO_LINGER 0, then close).
        static func sendAndReset(_ bytes: [UInt8], port: Int, loop: EventLoop) async throws {
            let client = try await RawClient.connect(port: port, loop: loop)
            let stream = client.stream
            try await loop.submit {
                stream.value.write([ByteBuffer(bytes: bytes)])
                try? stream.value.socketForTesting.setOption(.linger(seconds: 0))
                stream.value.close(error: nil)
            }
        }

        /// The server still answers a fresh client.
        static func expectAnswers(_ harness: ServerHarness) async throws {
            let client = try await harness.connect()
            try await client.send("GET /alive HTTP/1.1\r\nHost: a\r\n\r\n")
            let responses = try await client.readResponses(1)
            #expect(responses.first?.status == 200)
            await client.close()
        }

        @Test("an immediate-response server survives pipelined requests followed by a reset")
        func immediateResponses() async throws {
            let harness = try await ServerHarness.start(handler: HTTPFixedResponseHandler.hello)
            for round in 0..<300 {
                var bytes = Array(Self.burst.utf8)
                // Every other round, malformed bytes after a valid request: the parse error races the reset too.
                if round % 2 == 1 { bytes = Array("GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHo\0st: b\r\n\r\n".utf8) }
                try await Self.sendAndReset(bytes, port: harness.port, loop: harness.clientLoop)
            }
            try await Self.expectAnswers(harness)
            await harness.stop()
        }

        @Test("a handler that answers after the reset finishes quietly, and its exchange is freed")
        func asyncHandlers() async throws {
            let harness = try await ServerHarness.start { request, response in
                // Answer from the handler's task: by now the reset has usually closed the connection.
                await Task.yield()
                try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "hi"))
            }
            for _ in 0..<300 {
                try await Self.sendAndReset(Array(Self.burst.utf8), port: harness.port, loop: harness.clientLoop)
            }
            try await Self.expectAnswers(harness)
            await harness.stop()
        }
    }
}
