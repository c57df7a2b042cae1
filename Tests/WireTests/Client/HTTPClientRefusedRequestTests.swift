import Testing
import Wire

extension IOSuite {
    /// A request the client refuses before writing it (its body file cannot be opened, its head cannot be serialized)
    /// holds no connection: with one connection per host, the requests after it still get one.
    @Suite struct HTTPClientRefusedRequestTests {
        @Test func aRefusedRequestLeavesTheConnectionToTheNext() async throws {
            var configuration = HTTPClientConfiguration()
            configuration.maxConnectionsPerHost = 1
            try await HTTPClientFaultTests.withServer(
                configuration: configuration,
                script: { _, _, _ in
                    .respond(ScriptedServer.ok())
                }
            ) { client, server in
                let url = HTTPClientFaultTests.url(server)
                let refused: [HTTPClientRequest] = [
                    HTTPClientRequest(url: url, method: .put, body: .file(path: "/nonexistent/wire-refused-body")),
                    HTTPClientRequest(url: url, headers: ["X-Split": "a\r\nInjected: b"]),
                ]
                // Bounded well inside the harness's limit. Before, each refusal kept its lease, so the one connection
                // allowed stayed leased and the second request waited for it forever.
                try await withTimeout(seconds: 15) {
                    for request in refused {
                        for _ in 0..<2 {
                            await #expect(throws: HTTPClientError.self) { try await client.execute(request) }
                        }
                    }
                    let response = try await client.execute(HTTPClientRequest(url: url))
                    #expect(try await response.body.collect(upTo: 10) == ByteBuffer(string: "ok"))
                }
            }
        }
    }
}
