import Testing
import Wire

extension IOSuite.HTTPClientFaultTests {
    /// A server refuses a large upload with a complete response as soon as the body starts, and
    /// reads no more of it. The client's first part is far larger than the socket buffers, so it
    /// is parked waiting for the socket to drain before the answer can arrive (the server answers
    /// only after body bytes it can see, written by the call that parked). The request must return
    /// the server's 413, as curl does: it used to wait for a drain that never came, forever.
    @Test(arguments: [false, true])
    func anUploadAnsweredBeforeItsBodyReturnsTheAnswer(serverCloses: Bool) async throws {
        var configuration = HTTPClientConfiguration()
        // Without `Expect: 100-continue`: the server's answer interrupts the body itself.
        configuration.expectContinueThreshold = nil
        let refusal =
            "HTTP/1.1 413 Content Too Large\r\nContent-Length: 7\r\n" + (serverCloses ? "Connection: close\r\n" : "")
            + "\r\ntoo big"
        try await Self.withServer(configuration: configuration, script: { _, _, _ in .respondBeforeBody(refusal) }) {
            client, server in
            let size = 64 << 20
            let parts = AsyncThrowingStream<ByteBuffer, any Error> { continuation in
                continuation.yield(ByteBuffer(bytes: Array(repeating: 0x61, count: size)))
                continuation.finish()
            }
            let response = try await withTimeout(seconds: 20) {
                try await client.execute(
                    HTTPClientRequest(url: Self.url(server), method: .put, body: .stream(length: size, parts)))
            }
            #expect(response.status.code == 413)
            #expect(try await response.body.collect(upTo: 100) == ByteBuffer(string: "too big"))
        }
    }
}
