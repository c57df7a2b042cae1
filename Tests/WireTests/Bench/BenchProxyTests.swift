import Foundation
import Testing
import Wire

extension IOSuite {
    /// `wire bench -x` as a user measuring a proxy runs it: the load through tinyproxy (forwarded in absolute form, or
    /// tunnelled with `CONNECT`, one tunnel per bench connection, TLS to the origin through it), through the scripted
    /// SOCKS peer, and curl's exit statuses when the proxy refuses.
    @Suite struct BenchProxyTests {
        typealias Origins = ProxyTransportTests.Origins

        /// The JSON summary of a successful run.
        static func summary(_ run: WireToolRunner.Run) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(run.output)) as? [String: Any])
        }

        /// The lines tinyproxy logged for requests (`Request (file descriptor N): METHOD TARGET HTTP/1.1`).
        static func requestLines(_ proxy: TestProxy) -> [String] {
            proxy.log.split(separator: "\n").filter { $0.contains("Request (file descriptor") }.map(String.init)
        }

        @Test func forwardsInAbsoluteFormThroughTinyproxyWithItsCredentials() async throws {
            if let reason = TestProxy.missing(TestProxy.tinyproxyPath) { return print("skipped: \(reason)") }
            try await Origins.run(seconds: 60) { origins in
                let proxy = try TestProxy.tinyproxy(basicAuth: ("alice", "s3cret"))
                defer { proxy.stop() }
                let origin = "http://127.0.0.1:\(origins.plainPort)/bench"
                let run = try await WireToolRunner.run(
                    [
                        "bench", "-x", "http://127.0.0.1:\(proxy.port)", "-U", "alice:s3cret", "-c", "2", "-n", "40", "--json",
                        origin,
                    ])
                #expect(run.status == 0, "\(run.errors)")
                let summary = try Self.summary(run)
                #expect(summary["requests"] as? Int == 40)
                #expect((summary["errors"] as? [String: Any])?["total"] as? Int == 0, "\(summary)")
                // Every request reached tinyproxy as a forwarded one, in absolute form (it refuses those without the
                // credentials with a 407, which the summary would count); none was a CONNECT.
                let lines = Self.requestLines(proxy)
                #expect(lines.filter { $0.hasSuffix("GET \(origin) HTTP/1.1") }.count == 40, "\(lines)")
                #expect(proxy.connectCount == 0)
            }
        }

        @Test func tunnelsOncePerConnectionWithProxytunnelAndForHTTPS() async throws {
            if let reason = TestProxy.missing(TestProxy.tinyproxyPath) { return print("skipped: \(reason)") }
            try await Origins.run(seconds: 60) { origins in
                let proxy = try TestProxy.tinyproxy(connectPorts: [origins.plainPort, origins.securePort])
                defer { proxy.stop() }
                // -p: http:// through a CONNECT tunnel; at most one per bench connection, whatever the request count.
                let plain = try await WireToolRunner.run(
                    [
                        "bench", "-p", "-x", "127.0.0.1:\(proxy.port)", "-c", "3", "-n", "200", "--json",
                        "http://127.0.0.1:\(origins.plainPort)/",
                    ])
                #expect(plain.status == 0, "\(plain.errors)")
                #expect(try Self.summary(plain)["requests"] as? Int == 200)
                let afterPlain = proxy.connectCount
                #expect((1...3).contains(afterPlain), "\(Self.requestLines(proxy))")
                #expect(!Self.requestLines(proxy).contains { $0.contains(": GET ") })

                // https://: a tunnel per connection, TLS to the origin's name through it (verified with the test root).
                let secure = try await WireToolRunner.run(
                    [
                        "bench", "-x", "127.0.0.1:\(proxy.port)", "--cacert", origins.pki.rootCertificate, "-c", "2", "-t", "2",
                        "-n", "200", "--json", "https://localhost:\(origins.securePort)/",
                    ])
                #expect(secure.status == 0, "\(secure.errors)")
                let summary = try Self.summary(secure)
                #expect(summary["requests"] as? Int == 200)
                #expect((summary["errors"] as? [String: Any])?["total"] as? Int == 0, "\(summary)")
                #expect((1...2).contains(proxy.connectCount - afterPlain), "\(Self.requestLines(proxy))")
            }
        }

        @Test func goesThroughTheScriptedSOCKSPeer() async throws {
            try await Origins.run(seconds: 60) { origins in
                let socks = try await TestProxy.scriptedSOCKS()
                defer { socks.stop() }
                let run = try await WireToolRunner.run(
                    [
                        "bench", "--socks5-hostname", "127.0.0.1:\(socks.port)", "-c", "2", "-n", "50", "--json",
                        "http://localhost:\(origins.plainPort)/",
                    ])
                #expect(run.status == 0, "\(run.errors)")
                #expect(try Self.summary(run)["requests"] as? Int == 50)
                // SOCKS 5 with the name (5h), one handshake per connection.
                #expect(socks.records.count <= 2 && socks.records.allSatisfy { $0 == "v5 3 localhost \(origins.plainPort)" })
                #expect(!socks.records.isEmpty)
            }
        }

        @Test func aRefusingProxyExitsAsCurlDoes() async throws {
            if let reason = TestProxy.missing(TestProxy.tinyproxyPath) { return print("skipped: \(reason)") }
            try await Origins.run(seconds: 60) { origins in
                // CONNECT only to a port the origins do not use: tinyproxy answers 403.
                let closed = try LoopbackPort.free()
                let strict = try TestProxy.tinyproxy(connectPorts: [closed])
                let guarded = try TestProxy.tinyproxy(connectPorts: [origins.securePort], basicAuth: ("alice", "s3cret"))
                let socks = try await TestProxy.scriptedSOCKS()
                defer {
                    strict.stop()
                    guarded.stop()
                    socks.stop()
                }
                let secure = "https://localhost:\(origins.securePort)/"
                let cases: [([String], Int32, String)] = [
                    (["-x", "127.0.0.1:\(strict.port)", "-k", secure], 56, "wire: (56) CONNECT tunnel failed, response 403"),
                    (["-x", "127.0.0.1:\(guarded.port)", "-k", secure], 56, "wire: (56) CONNECT tunnel failed, response 407"),
                    (["-x", "127.0.0.1:\(closed)", "-k", secure], 7, "wire: (7) "),
                    (["-x", "proxy.invalid:3128", "-k", secure], 5, "wire: (5) Could not resolve proxy: proxy.invalid"),
                    (["-x", "socks6://127.0.0.1:1", "-k", secure], 7, "wire: (7) Unsupported proxy scheme"),
                    // The scripted peer refuses a port of 50000 + N with reply code N (2: not allowed by the rule set).
                    (["--socks5", "127.0.0.1:\(socks.port)", "http://127.0.0.1:50002/"], 97, "wire: (97) "),
                ]
                for (words, status, line) in cases {
                    let run = try await WireToolRunner.run(["bench", "-c", "2", "-n", "4"] + words)
                    #expect(run.status == status, "\(words): \(run.errors)")
                    #expect(run.errors.hasPrefix(line), "\(words): \(run.errors)")
                }
                // With the credentials the same proxy lets the load through.
                let run = try await WireToolRunner.run(
                    ["bench", "-x", "127.0.0.1:\(guarded.port)", "-U", "alice:s3cret", "-k", "-c", "2", "-n", "20", secure])
                #expect(run.status == 0, "\(run.errors)")
            }
        }
    }
}
