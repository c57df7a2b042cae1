import Synchronization
import Foundation
import Testing
@_spi(Locking) import Wire

extension IOSuite {
    /// What the client records of each exchange, and requests pinned to a Unix socket.
    @Suite struct HTTPClientRecordTests {
        @Test func theSentHeadIsRecordedByteForByteHopByHop() async throws {
            let received = Lock<[String]>([])
            try await HTTPClientFaultTests.withServer(script: { _, _, head in
                received.withLock { $0.append(head + "\r\n\r\n") }
                return head.hasPrefix("POST /start ")
                    ? .respond("HTTP/1.1 303 See Other\r\nLocation: /next\r\nContent-Length: 0\r\n\r\n")
                    : .respond(ScriptedServer.ok("done"))
            }) { client, server in
                let response = try await client.execute(
                    HTTPClientRequest(
                        url: HTTPClientFaultTests.url(server, "/start"), method: .post, headers: ["X-Trace": "1"],
                        body: .bytes(ByteBuffer(string: "payload"))))
                #expect(try await response.body.collect(upTo: 10) == ByteBuffer(string: "done"))
                let metrics = response.metrics.snapshot
                let heads = received.withLock { $0 }
                try #require(heads.count == 2)
                #expect(metrics.redirectHops.count == 1)
                #expect(String(decoding: metrics.redirectHops[0].requestHead, as: UTF8.self) == heads[0])
                #expect(metrics.redirectHops[0].responseHead.status.code == 303)
                #expect(metrics.redirectHops[0].url.target == "/start")
                #expect(String(decoding: metrics.requestHead, as: UTF8.self) == heads[1])
                #expect(heads[0].contains("\r\nContent-Length: 7\r\n") && heads[0].contains("\r\nX-Trace: 1\r\n"))
                #expect(heads[1].hasPrefix("GET /next HTTP/1.1\r\n") && !heads[1].contains("Content-Length"))
            }
        }

        @Test func aUnixSocketRequestAndItsRedirectsStayOnTheSocket() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "wire-unix-\(UInt32.random(in: 0...UInt32.max))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("s.sock").path
            let received = Lock<[String]>([])
            try await HTTPClientFaultTests.withServer(
                address: try SocketAddress(unixPath: path),
                script: { _, _, head in
                    received.withLock { $0.append(head) }
                    // An absolute redirect to a host that does not exist: followed over the socket, never resolved.
                    return head.hasPrefix("GET /first ")
                        ? .respond(
                            "HTTP/1.1 302 Found\r\nLocation: http://elsewhere.invalid:8123/second\r\nContent-Length: 0\r\n\r\n")
                        : .respond(ScriptedServer.ok("second"))
                }
            ) { client, _ in
                var request = HTTPClientRequest(url: "http://api.invalid/first")
                request.unixSocketPath = path
                let response = try await client.execute(request)
                #expect(try await response.body.collect(upTo: 10) == ByteBuffer(string: "second"))
                #expect(response.url.host == "elsewhere.invalid")
                let heads = received.withLock { $0 }
                try #require(heads.count == 2)
                #expect(heads[0].contains("\r\nHost: api.invalid\r\n"))
                #expect(
                    heads[1].hasPrefix("GET /second HTTP/1.1\r\n") && heads[1].contains("\r\nHost: elsewhere.invalid:8123\r\n"))
            }
        }
    }
}
