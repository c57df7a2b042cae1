import Synchronization
import Testing
import Wire

extension IOSuite {
    /// A body made by a factory is sent again on a 307/308 redirect; a one-shot stream is not.
    @Suite struct HTTPClientReplayableBodyTests {
        final class Calls: Sendable {
            let count = Atomic<Int>(0)
        }

        /// A server that answers POST /a with `status` to /b, and /b with the body length it received.
        /// A server that answers POST /a with `status` to /b, and /b with the body length it received.
        static func withRedirectingServer(_ status: String, _ body: @escaping @Sendable (HTTPClient, String) async throws -> Void)
            async throws
        {
            try await HTTPClientFaultTests.withServer(script: { _, _, head in
                if head.hasPrefix("POST /a ") {
                    return .respond("HTTP/1.1 \(status)\r\nLocation: /b\r\nContent-Length: 0\r\n\r\n")
                }
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                return .respond(ScriptedServer.ok("\(head.split(separator: " ")[1]) \(length.map(String.init) ?? "none")"))
            }) { client, server in try await body(client, HTTPClientFaultTests.url(server, "/a")) }
        }

        @Test(arguments: ["307 Temporary Redirect", "308 Permanent Redirect"])
        func aFactoryBodyIsMadeAgainForTheRedirect(_ status: String) async throws {
            try await Self.withRedirectingServer(status) { client, url in
                let calls = Calls()
                let body = HTTPClientRequest.Body.replayable(length: 10) {
                    calls.count.add(1, ordering: .relaxed)
                    return AsyncStream<ByteBuffer> { continuation in
                        continuation.yield(ByteBuffer(string: "01234"))
                        continuation.yield(ByteBuffer(string: "56789"))
                        continuation.finish()
                    }
                }
                let response = try await client.execute(HTTPClientRequest(url: url, method: .post, body: body))
                #expect(response.status.code == 200)
                #expect(try await response.body.collect(upTo: 100) == ByteBuffer(string: "/b Content-Length: 10"))
                #expect(calls.count.load(ordering: .relaxed) == 2)
                #expect(response.metrics.snapshot.redirects == 1)
            }
        }

        @Test func aOneShotStreamHandsTheRedirectBack() async throws {
            try await Self.withRedirectingServer("307 Temporary Redirect") { client, url in
                let body = HTTPClientRequest.Body.sequence(
                    AsyncStream<ByteBuffer> { continuation in
                        continuation.yield(ByteBuffer(string: "0123456789"))
                        continuation.finish()
                    }, length: 10)
                let response = try await client.execute(HTTPClientRequest(url: url, method: .post, body: body))
                #expect(response.status.code == 307)
            }
        }
    }
}
