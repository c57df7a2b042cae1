import Synchronization
import Testing
@_spi(Locking) import Wire

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
                    case .bytesWritten(let bytes): "wrote \(bytes.readableBytes)"
                    case .bytesRead(let bytes): "read \(bytes.readableBytes)"
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

        /// Every byte each hop wrote and read, in order, as `observesBytes` tells them.
        final class Bytes: Sendable {
            let hops = Lock<[(written: [UInt8], read: [UInt8], pieces: Int)]>([([], [], 0)])
            func append(_ event: HTTPClientRequestEvent) {
                hops.withLock { hops in
                    switch event {
                    case .bytesWritten(let bytes):
                        hops[hops.count - 1].written += bytes.readableBytesArray
                        hops[hops.count - 1].pieces += 1
                    case .bytesRead(let bytes): hops[hops.count - 1].read += bytes.readableBytesArray
                    case .redirect: hops.append(([], [], 0))
                    default: break
                    }
                }
            }
        }

        @Test func observingBytesTellsEveryByteOfEachHopInPlaintext() async throws {
            let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
            let redirect = "HTTP/1.1 307 Temporary Redirect\r\nLocation: /b\r\nContent-Length: 0\r\n\r\n"
            try await HTTPClientFaultTests.withServer(script: { _, _, head in
                .respond(head.hasPrefix("POST /a ") ? redirect : chunked)
            }) { client, server in
                let bytes = Bytes()
                var request = HTTPClientRequest(
                    url: HTTPClientFaultTests.url(server, "/a"), method: .post, body: .bytes(ByteBuffer(string: "abc")))
                request.observer = { event, _ in bytes.append(event) }
                request.observesBytes = true
                let response = try await client.execute(request)
                let body = try await response.body.collect(upTo: 1024)
                #expect(String(decoding: body.readableBytesArray, as: UTF8.self) == "hello")
                let hops = bytes.hops.withLock { $0 }
                try #require(hops.count == 2)
                // The head, then the body, each as one piece; and the answers exactly as the server wrote them.
                #expect(hops[1].written == response.metrics.snapshot.requestHead + Array("abc".utf8))
                #expect(hops.map(\.pieces) == [2, 2])
                #expect(String(decoding: hops[0].read, as: UTF8.self) == redirect)
                #expect(String(decoding: hops[1].read, as: UTF8.self) == chunked)
                // Without it, the observer hears of no byte.
                let quiet = Bytes()
                request.observesBytes = false
                request.observer = { event, _ in quiet.append(event) }
                _ = try await client.execute(request).body.collect(upTo: 1024)
                #expect(quiet.hops.withLock { $0.map(\.written.count) + $0.map(\.read.count) } == [0, 0, 0, 0])
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
