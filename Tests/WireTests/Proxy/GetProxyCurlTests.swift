import Foundation
import Testing
import Wire

extension IOSuite {
    /// `wire get` beside curl 7.88 through the same proxies (tinyproxy, the scripted SOCKS peer), with the same
    /// switches and environment: the route each takes (which proxy's log grew, or none), the exit status, and the
    /// `-v` lines about the proxy.
    @Suite struct GetProxyCurlTests {
        typealias Origins = ProxyTransportTests.Origins

        /// Every proxy variable set empty (an empty value counts as unset, for curl and wire alike), then `set`.
        static func environment(_ set: [String: String] = [:]) -> [String: String] {
            var environment: [String: String] = [:]
            for name in [
                "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
            ] {
                environment[name] = ""
            }
            return environment.merging(set) { $1 }
        }

        /// Requests tinyproxy logged so far.
        static func requests(_ proxy: TestProxy) -> Int {
            proxy.log.split(separator: "\n").filter { $0.contains("Request (file descriptor") }.count
        }

        /// Runs curl, then wire, with `words` and `environment`; returns both runs and, for each, the index in
        /// `proxies` of the one that logged its request (nil: none did, the request went direct).
        static func both(
            _ words: [String], environment: [String: String] = [:], proxies: [TestProxy] = []
        ) async throws -> [(run: WireToolRunner.Run, route: Int?)] {
            var results: [(WireToolRunner.Run, Int?)] = []
            for program in ["curl", "wire"] {
                let before = proxies.map(requests)
                let run =
                    program == "curl"
                    ? try await WireToolRunner.run(
                        program: URL(fileURLWithPath: "/usr/bin/curl"), words, environment: Self.environment(environment))
                    : try await WireToolRunner.run(["get"] + words, environment: Self.environment(environment))
                let after = proxies.map(requests)
                results.append((run, proxies.indices.first { after[$0] > before[$0] }))
            }
            return results
        }

        @Test func routesAndVerboseLinesMatchCurls() async throws {
            if let reason = TestProxy.missing(TestProxy.tinyproxyPath) { return print("skipped: \(reason)") }
            try await Origins.run(seconds: 120) { origins in
                let a = try TestProxy.tinyproxy(connectPorts: [origins.securePort, origins.plainPort])
                let b = try TestProxy.tinyproxy(connectPorts: [origins.securePort, origins.plainPort])
                defer {
                    a.stop()
                    b.stop()
                }
                let proxyA = "127.0.0.1:\(a.port)"
                let proxyB = "http://127.0.0.1:\(b.port)"
                let plain = "http://127.0.0.1:\(origins.plainPort)/"
                let secure = "https://localhost:\(origins.securePort)/"
                // (switches, environment, the route expected: 0 for a, 1 for b, nil direct)
                let cases: [([String], [String: String], Int?)] = [
                    (["-x", proxyA, plain], [:], 0),
                    ([plain], ["http_proxy": proxyA], 0),
                    // An upper-case HTTP_PROXY is not read (a CGI request could set it).
                    ([plain], ["HTTP_PROXY": proxyA], nil),
                    ([plain], ["HTTP_PROXY": proxyA, "ALL_PROXY": proxyB], 1),
                    ([plain], ["http_proxy": proxyA, "NO_PROXY": "localhost,127.0.0.0/8"], nil),
                    (["--noproxy", "", plain], ["http_proxy": proxyA, "no_proxy": "127.0.0.1"], 0),
                    (["-x", "", plain], ["http_proxy": proxyA], nil),
                    (["-k", secure], ["https_proxy": proxyB, "all_proxy": proxyA], 1),
                    (["-k", secure], ["HTTPS_PROXY": proxyA], 0),
                    (["-k", "--noproxy", "*", secure], ["https_proxy": proxyA], nil),
                    (["-p", "-x", proxyB, plain], [:], 1),
                ]
                for (words, environment, expected) in cases {
                    let runs = try await Self.both(
                        ["-sS", "-v", "-o", "/dev/null"] + words, environment: environment, proxies: [a, b])
                    let label = "\(words) \(environment)"
                    #expect(runs[0].run.status == 0 && runs[1].run.status == 0, "\(label): \(runs.map(\.run.errors))")
                    #expect(runs[0].route == expected, "curl's route for \(label)")
                    #expect(runs[1].route == expected, "wire's route for \(label)")
                    // The -v lines about the proxy, as curl writes them.
                    let proxyLines = { (text: String) in
                        text.split(whereSeparator: \.isNewline).map(String.init).filter {
                            $0.hasPrefix("* Uses proxy env variable") || $0.hasPrefix("* Establish HTTP proxy tunnel")
                                || $0.hasPrefix("> CONNECT ") || $0 == "* CONNECT phase completed"
                                || $0.hasPrefix("* CONNECT tunnel established")
                        }
                    }
                    #expect(proxyLines(runs[1].run.errors) == proxyLines(runs[0].run.errors), "\(label)")
                }
            }
        }

        /// The `-v` lines of a refused `CONNECT`, as curl 7.88 prints them: the request's line, `Host` and
        /// `Proxy-Authorization` (with the user it is for), the proxy's whole answer head, then the failure line.
        static func refusedConnectLines(_ text: String) -> [String] {
            text.split(whereSeparator: \.isNewline).map(String.init).filter {
                $0.hasPrefix("* Establish HTTP proxy tunnel") || $0.hasPrefix("* Proxy auth using")
                    || $0.hasPrefix("> CONNECT ") || $0.hasPrefix("> Host: ") || $0.hasPrefix("> Proxy-Authorization: ")
                    || $0.hasPrefix("< ") || $0.hasPrefix("* CONNECT tunnel failed")
            }
        }

        @Test func verboseShowsARefusedConnectAsCurlDoes() async throws {
            let scripted = try TestProcess("/usr/bin/env", ["python3", "\(testResources)/connect_proxy.py"])
            defer { scripted.stop() }
            let scriptedPort = try #require(Int(try await scripted.firstLine()))
            // (switches, the status the proxy answers CONNECT with)
            let scriptedCases: [([String], Int)] = [
                // The scripted proxy answers a CONNECT to deny.example with 407, whoever asks.
                (["-p", "-x", "127.0.0.1:\(scriptedPort)", "http://deny.example/"], 407),
                (["-p", "-x", "127.0.0.1:\(scriptedPort)", "-U", "alice:s3cret", "http://deny.example:8080/"], 407),
            ]
            let hasTinyproxy = TestProxy.missing(TestProxy.tinyproxyPath) == nil
            try await Origins.run(seconds: 120) { origins in
                var cases = scriptedCases
                var proxies: [TestProxy] = []
                defer { for proxy in proxies { proxy.stop() } }
                if hasTinyproxy {
                    // CONNECT only to a port nobody uses: 403 for the origin's; and a proxy that wants credentials.
                    let strict = try TestProxy.tinyproxy(connectPorts: [try LoopbackPort.free()])
                    let guarded = try TestProxy.tinyproxy(basicAuth: ("alice", "s3cret"))
                    proxies = [strict, guarded]
                    let secure = "https://localhost:\(origins.securePort)/"
                    cases += [
                        (["-k", "-x", "127.0.0.1:\(strict.port)", secure], 403),
                        (["-k", "-x", "127.0.0.1:\(strict.port)", "-U", "alice:s3cret", secure], 403),
                        (["-k", "-x", "http://127.0.0.1:\(guarded.port)", secure], 407),
                    ]
                } else {
                    print("skipped the tinyproxy cases: \(TestProxy.missing(TestProxy.tinyproxyPath) ?? "")")
                }
                for (words, status) in cases {
                    let runs = try await Self.both(["-sS", "-v", "-o", "/dev/null"] + words)
                    #expect(runs[0].run.status == 56 && runs[1].run.status == 56, "\(words): \(runs.map(\.run.errors))")
                    let curl = Self.refusedConnectLines(runs[0].run.errors)
                    let wire = Self.refusedConnectLines(runs[1].run.errors)
                    #expect(curl.contains("* CONNECT tunnel failed, response \(status)"), "\(words): \(curl)")
                    #expect(wire == curl, "\(words)")
                    #expect(runs[1].run.errors.hasSuffix("wire: (56) CONNECT tunnel failed, response \(status)\n"))
                }
            }
        }

        @Test func exitStatusesAtAProxyMatchCurls() async throws {
            if let reason = TestProxy.missing(TestProxy.tinyproxyPath) { return print("skipped: \(reason)") }
            try await Origins.run(seconds: 120) { origins in
                let guarded = try TestProxy.tinyproxy(connectPorts: [origins.plainPort], basicAuth: ("alice", "s3cret"))
                let socks = try await TestProxy.scriptedSOCKS()
                defer {
                    guarded.stop()
                    socks.stop()
                }
                let closed = try LoopbackPort.free()
                let plain = "http://127.0.0.1:\(origins.plainPort)/"
                let cases: [([String], Int32)] = [
                    (["-x", "127.0.0.1:\(closed)", plain], 7),
                    (["-x", "proxy.invalid:3128", plain], 5),
                    (["-x", "socks6://127.0.0.1:\(closed)", plain], 7),
                    (["-x", "http://[::1", plain], 5),
                    // tinyproxy refuses the CONNECT without credentials (407) and with wrong ones (401).
                    (["-p", "-x", "127.0.0.1:\(guarded.port)", plain], 56),
                    (["-p", "-x", "127.0.0.1:\(guarded.port)", "-U", "alice:wrong", plain], 56),
                    (["-p", "-x", "127.0.0.1:\(guarded.port)", "-U", "alice:s3cret", plain], 0),
                    (["-x", "127.0.0.1:\(guarded.port)", "-U", "alice:s3cret", plain], 0),
                    // The scripted peer answers a port of 50000 + N with the reply code N.
                    (["--socks5", "127.0.0.1:\(socks.port)", "http://127.0.0.1:50001/"], 97),
                    (["--socks5-hostname", "127.0.0.1:\(socks.port)", "http://localhost:50005/"], 97),
                    (["--socks4", "127.0.0.1:\(socks.port)", "http://127.0.0.1:50091/"], 97),
                    (["--socks5-hostname", "127.0.0.1:\(socks.port)", plain], 0),
                ]
                for (words, expected) in cases {
                    let runs = try await Self.both(["-sS", "-o", "/dev/null"] + words)
                    #expect(runs[0].run.status == expected, "curl \(words): \(runs[0].run.errors)")
                    #expect(runs[1].run.status == expected, "wire \(words): \(runs[1].run.errors)")
                }
            }
        }
    }
}
