import Synchronization
import Testing
import Wire

extension IOSuite {
    /// The per-request observer and redirect policy, through the public API.
    @Suite struct HTTPClientObserverTests {
        final class Events: Sendable {
            let list = Lock<[String]>([])
            func append(_ event: HTTPClientRequestEvent, _ metrics: HTTPClientMetrics) {
                let text: String =
                    switch event {
                    case .bodyBytesSent(let total, let expected): "sent \(total)/\(expected.map(String.init) ?? "?")"
                    case .responseHead(let head): "head \(head.status.code)"
                    case .redirect(let hop): "redirect \(hop.responseHead.status.code)"
                    case .retry(let attempt, _): "retry \(attempt)"
                    }
                list.withLock { $0.append(text) }
            }
            var all: [String] { list.withLock { $0 } }
        }

        /// POST /a answers 307 to /b, GET /moved 302 to /b, anything else 200; `body` gets the client and the base URL.
        static func withServer(_ body: @escaping @Sendable (HTTPClient, String) async throws -> Void) async throws {
            try await HTTPClientFaultTests.withServer(script: { _, _, head in
                if head.hasPrefix("POST /a ") {
                    return .respond("HTTP/1.1 307 Temporary Redirect\r\nLocation: /b\r\nContent-Length: 0\r\n\r\n")
                }
                if head.hasPrefix("GET /moved ") {
                    return .respond("HTTP/1.1 302 Found\r\nLocation: /b\r\nContent-Length: 0\r\n\r\n")
                }
                return .respond(ScriptedServer.ok())
            }) { client, server in try await body(client, HTTPClientFaultTests.url(server, "")) }
        }

        @Test func theObserverHearsBodyProgressEachRedirectAndTheHead() async throws {
            try await Self.withServer { client, base in
                let events = Events()
                let part = ByteBuffer(bytes: [UInt8](repeating: 0x42, count: 100_000))
                var request = HTTPClientRequest(
                    url: base + "/a", method: .post,
                    body: .replayable(length: 300_000) {
                        AsyncStream<ByteBuffer> { continuation in
                            for _ in 0..<3 { continuation.yield(part) }
                            continuation.finish()
                        }
                    })
                request.observer = { events.append($0, $1) }
                let response = try await client.execute(request)
                #expect(response.status.code == 200)
                let expectedAttempt = ["sent 100000/300000", "sent 200000/300000", "sent 300000/300000"]
                #expect(events.all == expectedAttempt + ["head 307", "redirect 307"] + expectedAttempt + ["head 200"])
            }
        }

        @Test func aRequestsOwnPolicyOverridesTheClients() async throws {
            try await Self.withServer { client, base in
                var request = HTTPClientRequest(url: base + "/moved")
                request.redirects = .disallow
                let response = try await client.execute(request)
                #expect(response.status.code == 302)
                let followed = try await client.execute(HTTPClientRequest(url: base + "/moved"))
                #expect(followed.status.code == 200)
            }
        }
    }
}
