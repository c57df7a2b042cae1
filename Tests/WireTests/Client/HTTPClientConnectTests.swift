import Foundation
import Testing
import Wire

extension IOSuite {
    /// CONNECT through a loopback proxy (Python, raw sockets): a 2xx opens a tunnel the caller
    /// owns, any other answer is an ordinary response; and `wire request -X CONNECT`.
    @Suite struct HTTPClientConnectTests {
        /// Starts `Resources/connect_proxy.py`; returns it with its URL.
        static func withProxy(_ body: @escaping @Sendable (HTTPClient, String) async throws -> Void) async throws {
            let proxy = try TestProcess("/usr/bin/env", ["python3", "\(testResources)/connect_proxy.py"])
            defer { proxy.stop() }
            guard let port = Int(try await proxy.firstLine()) else { throw TestTimeout(seconds: 0) }
            let group = try EventLoopGroup(loopCount: 1)
            let client = try HTTPClient(group: group)
            do {
                try await withTimeout(seconds: 30) { try await body(client, "http://127.0.0.1:\(port)") }
            } catch {
                await client.shutdown()
                await group.shutdownGracefully()
                throw error
            }
            await client.shutdown()
            await group.shutdownGracefully()
        }

        /// Reads from `tunnel` until `count` bytes came (or it ended).
        static func read(_ count: Int, from tunnel: HTTPTunnel) async throws -> [UInt8] {
            var bytes: [UInt8] = []
            while bytes.count < count, let chunk = try await tunnel.read() { bytes += chunk.readableBytesArray }
            return bytes
        }

        @Test func twoHundredOpensATunnelThatCarriesBytesBothWays() async throws {
            try await Self.withProxy { client, proxy in
                let answer = try await client.connect(to: "example.org:443", via: proxy)
                #expect(answer.status.code == 200)
                #expect(answer.head.reasonPhrase == "Connection established")
                #expect(answer.headers.first(name: "x-request-line") == "CONNECT example.org:443 HTTP/1.1")
                #expect(answer.headers.first(name: "x-host") == "example.org:443")
                let tunnel = try #require(answer.tunnel)
                // Sent in the same write as the head: these bytes came with it and must not be lost.
                let greeting = "hello from the tunnel\n"
                #expect(try await Self.read(greeting.utf8.count, from: tunnel) == Array(greeting.utf8))
                try await tunnel.write(ByteBuffer(string: "ping"))
                #expect(try await Self.read(4, from: tunnel) == Array("ping".utf8))
                // More than the write watermark and the read channel's, both ways at once.
                let large = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
                async let echoed = Self.read(large.count, from: tunnel)
                for start in stride(from: 0, to: large.count, by: 100_000) {
                    try await tunnel.write(ByteBuffer(bytes: large[start..<min(start + 100_000, large.count)]))
                }
                #expect(try await echoed == large)
                // A half-close: the proxy sees our end, ends its side, and reading ends.
                await tunnel.finishWriting()
                #expect(try await tunnel.read() == nil)
                await tunnel.close()
                await #expect(throws: HTTPClientError.self) { try await tunnel.write(ByteBuffer(string: "late")) }
            }
        }

        @Test func aTunnelLeavesThePoolForGood() async throws {
            try await Self.withProxy { client, proxy in
                let first = try await client.connect(to: "a.example:80", via: proxy)
                let tunnel = try #require(first.tunnel)
                _ = try await Self.read(22, from: tunnel)
                // The tunnel's connection is not idle in the pool: the next CONNECT needs a new one.
                let second = try await client.connect(to: "b.example:80", via: proxy)
                #expect(second.metrics.snapshot.isReusedConnection == false)
                let other = try #require(second.tunnel)
                // Both tunnels still work, each on its own connection.
                try await tunnel.write(ByteBuffer(string: "one"))
                try await other.write(ByteBuffer(string: "two"))
                #expect(try await Self.read(3, from: tunnel) == Array("one".utf8))
                #expect(try await Self.read(22 + 3, from: other).suffix(3) == Array("two".utf8))
                await tunnel.close()
                await other.close()
                // The pool let go of both connections when their tunnels opened.
                #expect(client.retainedConnectionCount == 0)
            }
        }

        @Test func a407IsAnOrdinaryResponseAndTheConnectionIsReused() async throws {
            try await Self.withProxy { client, proxy in
                let refused = try await client.connect(
                    to: "deny.example:443", via: proxy,
                    headers: HTTPHeaders([("Proxy-Authorization", "Basic eDp5")]))
                #expect(refused.status.code == 407)
                #expect(refused.tunnel == nil)
                #expect(refused.headers.first(name: "proxy-authenticate") == "Basic realm=\"tests\"")
                let body = try await refused.body.collect(upTo: 1024)
                #expect(String(decoding: body.readableBytesArray, as: UTF8.self) == "proxy authentication required\n")
                // The answer was framed like any response: the connection went back to the pool.
                let accepted = try await client.connect(to: "example.org:443", via: proxy)
                #expect(accepted.status.code == 200)
                #expect(accepted.metrics.snapshot.isReusedConnection == true)
                let tunnel = try #require(accepted.tunnel)
                #expect(try await Self.read(22, from: tunnel) == Array("hello from the tunnel\n".utf8))
                await tunnel.close()
            }
        }

        @Test(arguments: [
            "example.org", "example.org:0", "example.org:99999", "http://example.org:80", "a b:80", "[zz]:80", ":443",
        ])
        func aTargetThatIsNotHostAndPortIsRefused(_ target: String) async throws {
            let client = try HTTPClient()
            defer { Task { await client.shutdown() } }
            do {
                _ = try await client.connect(to: target, via: "http://127.0.0.1:1")
                Issue.record("\(target) was accepted")
            } catch {
                #expect(error.code == .invalidRequest, "\(error)")
            }
        }

        @Test func executeRefusesConnectAndNamesTheCallThatOpensATunnel() async throws {
            try await Self.withProxy { client, proxy in
                var request = HTTPClientRequest(url: proxy)
                request.method = .connect
                do {
                    _ = try await client.execute(request)
                    Issue.record("execute sent CONNECT")
                } catch let error as HTTPClientError {
                    #expect(error.code == .invalidRequest)
                    #expect(error.description.contains("connect(to:via:)"))
                }
            }
        }

        @Test func wireRequestConnectShowsTheHead() async throws {
            try await Self.withProxy { _, proxy in
                let run = try await WireToolRunner.run(["request", "-X", "CONNECT", "example.org:443", proxy])
                #expect(run.status == 0, "\(run.errors)")
                #expect(run.text.hasPrefix("HTTP/1.1 200 Connection established\r\n"), "\(run.text)")
                #expect(run.text.contains("X-Request-Line: CONNECT example.org:443 HTTP/1.1\r\n"))
                #expect(run.text.hasSuffix("\r\n\r\n"), "tunnel bytes were written: \(run.text)")
                let refused = try await WireToolRunner.run(["request", "-X", "CONNECT", "deny.example:443", proxy])
                #expect(refused.status == 0)
                #expect(refused.text.hasPrefix("HTTP/1.1 407 Proxy Authentication Required\r\n"))
                #expect(refused.text.hasSuffix("\r\n\r\nproxy authentication required\n"))
                let failed = try await WireToolRunner.run(["request", "-f", "-X", "CONNECT", "deny.example:443", proxy])
                #expect(failed.status == 22)
                let usage = try await WireToolRunner.run(["request", "-X", "CONNECT", proxy])
                #expect(usage.status == 2)
                #expect(usage.errors.contains("wire request -X CONNECT example.org:443 http://proxy:3128/"), "\(usage.errors)")
            }
        }
    }
}
