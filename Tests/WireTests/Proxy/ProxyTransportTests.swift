import Foundation
import Testing
import Wire
import WireTLS

/// Wire's client through real proxies on loopback (tinyproxy, danted, microsocks, and scripted Python peers for what
/// those cannot do), to Wire's own servers: forwarding, CONNECT tunnels to a TLS origin, a 407, SOCKS 4, 4a, 5 and 5h
/// with and without authentication, every SOCKS reply code, an HTTPS proxy, and the pool's reuse of tunnels.
extension IOSuite {
    @Suite struct ProxyTransportTests {
        /// A plain and a TLS origin (Wire's server, the test PKI's `localhost` certificate) on one group, and a
        /// client configured by the test; each origin answers `origin <target> <Proxy-Authorization or ->`.
        struct Origins: Sendable {
            let group: EventLoopGroup
            let plain: HTTPServer
            let secure: HTTPServer
            let plainPort: Int
            let securePort: Int
            let pki: TestPKI

            static func run(
                seconds: Double = 60, _ body: @escaping @Sendable (Origins) async throws -> Void
            ) async throws {
                let pki = try TestPKI.shared()
                let group = try EventLoopGroup(loopCount: 2, namePrefix: "proxy-origins")
                let handler: @Sendable (HTTPServerRequest, HTTPResponseWriter) async throws -> Void = { request, response in
                    let seen = request.headers.first(name: "proxy-authorization") ?? "-"
                    try await response.respond(
                        HTTPResponseHead(status: .ok), body: ByteBuffer(string: "origin \(request.target) \(seen)"))
                }
                let plain = HTTPServer(
                    configuration: HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0)),
                    group: group, handler: handler)
                var secureConfiguration = HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0))
                secureConfiguration.tls = TLSServerConfiguration(certificateChainFile: pki.goodChain, privateKeyFile: pki.goodKey)
                let secure = HTTPServer(configuration: secureConfiguration, group: group, handler: handler)
                let outcome: Result<Void, any Error>
                do {
                    let plainPort = try await plain.start().port!
                    let securePort = try await secure.start().port!
                    let origins = Origins(
                        group: group, plain: plain, secure: secure, plainPort: plainPort, securePort: securePort, pki: pki)
                    do {
                        try await withTimeout(seconds: seconds) { try await body(origins) }
                        outcome = .success(())
                    } catch {
                        outcome = .failure(error)
                    }
                } catch {
                    outcome = .failure(error)
                }
                await plain.shutdown(gracePeriod: .seconds(1))
                await secure.shutdown(gracePeriod: .seconds(1))
                await group.shutdownGracefully()
                try outcome.get()
            }

            /// A client on the origins' group trusting the test root for origins, through `proxy`.
            func client(_ proxy: ProxyConfiguration, configure: (inout HTTPClientConfiguration) -> Void = { _ in }) throws
                -> HTTPClient
            {
                var configuration = HTTPClientConfiguration()
                var tls = TLSConfiguration()
                tls.trustRoots = .pemFile(pki.rootCertificate)
                configuration.tls = tls
                configuration.proxy = proxy
                configuration.connectTimeout = .seconds(10)
                configure(&configuration)
                return try HTTPClient(configuration: configuration, group: group)
            }
        }

        /// GETs `url` and returns the status and body.
        static func get(_ client: HTTPClient, _ url: String) async throws -> (Int, String, HTTPClientMetrics.Snapshot) {
            let response = try await client.execute(HTTPClientRequest(url: url))
            let body = try await response.body.collect(upTo: 1 << 20)
            return (response.status.code, String(decoding: body.readableBytesArray, as: UTF8.self), response.metrics.snapshot)
        }

        /// The error a GET of `url` fails with.
        static func failure(_ client: HTTPClient, _ url: String) async -> HTTPClientError? {
            do {
                _ = try await get(client, url)
                return nil
            } catch {
                return error as? HTTPClientError
            }
        }

        // MARK: tinyproxy

        @Test func httpURLsAreForwardedInAbsoluteFormWithBasicCredentials() async throws {
            if let reason = TestProxy.missing(TestProxy.tinyproxyPath) { return print("skipped: \(reason)") }
            let proxy = try TestProxy.tinyproxy(basicAuth: ("alice", "s3cret"))
            defer { proxy.stop() }
            try await Origins.run { origins in
                let withCredentials = Proxy(
                    kind: .http, host: "127.0.0.1", port: proxy.port,
                    credentials: ProxyCredentials(user: "alice", password: "s3cret"))
                let client = try origins.client(.proxy(withCredentials))
                // Two origins (one server under two names) through one proxy.
                for host in ["127.0.0.1", "localhost"] {
                    let (status, body, metrics) = try await Self.get(client, "http://\(host):\(origins.plainPort)/a?b=c")
                    #expect(status == 200)
                    // tinyproxy took the absolute form and passed the origin form on, keeping the credentials to itself.
                    #expect(body == "origin /a?b=c -")
                    #expect(metrics.proxy == withCredentials)
                    #expect(metrics.proxyHandshake == nil)
                    let head = String(decoding: metrics.requestHead, as: UTF8.self)
                    #expect(head.hasPrefix("GET http://\(host):\(origins.plainPort)/a?b=c HTTP/1.1\r\n"))
                    #expect(head.contains("\r\nProxy-Authorization: Basic YWxpY2U6czNjcmV0\r\n"))
                    #expect(head.contains("\r\nHost: \(host):\(origins.plainPort)\r\n"))
                }
                #expect(proxy.log.contains("Request (file descriptor"))
                #expect(proxy.connectCount == 0)
                // Without credentials the proxy's 407 is an ordinary response of a forwarded request.
                let anonymous = try origins.client(.proxy(Proxy(kind: .http, host: "127.0.0.1", port: proxy.port)))
                let (status, _, _) = try await Self.get(anonymous, "http://127.0.0.1:\(origins.plainPort)/")
                #expect(status == 407)
                await client.shutdown()
                await anonymous.shutdown()
            }
        }

        /// tinyproxy answers forwarded requests in HTTP/1.1 without `Connection: close`, then closes the connection:
        /// under load, request after request finds its pooled connection closed, and one retry (on another pooled
        /// connection just as closed) was not enough.
        @Test func forwardingSurvivesAProxyThatClosesEveryConnectionUnannounced() async throws {
            if let reason = TestProxy.missing(TestProxy.tinyproxyPath) { return print("skipped: \(reason)") }
            let proxy = try TestProxy.tinyproxy()
            defer { proxy.stop() }
            try await Origins.run { origins in
                let client = try origins.client(.proxy(Proxy(kind: .http, host: "127.0.0.1", port: proxy.port)))
                let url = "http://127.0.0.1:\(origins.plainPort)/busy"
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            for _ in 0..<100 {
                                let (status, body, _) = try await Self.get(client, url)
                                guard status == 200, body == "origin /busy -" else { throw UnexpectedStatus(status: status) }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                await client.shutdown()
            }
        }

        @Test func httpsGoesThroughAReusedConnectTunnelVerifiedAgainstTheOrigin() async throws {
            if let reason = TestProxy.missing(TestProxy.tinyproxyPath) { return print("skipped: \(reason)") }
            try await Origins.run { origins in
                let proxy = try TestProxy.tinyproxy(connectPorts: [origins.securePort])
                defer { proxy.stop() }
                let client = try origins.client(.proxy(Proxy(kind: .http, host: "127.0.0.1", port: proxy.port)))
                let (status, body, first) = try await Self.get(client, "https://localhost:\(origins.securePort)/one")
                #expect(status == 200)
                #expect(body == "origin /one -")
                #expect(first.proxy?.port == proxy.port)
                #expect(first.proxyHandshake != nil)
                #expect(first.isReusedConnection == false)
                // The TLS peer is the origin, with its chain verified: the proxy only relays.
                #expect(first.transportSecurity?.verifiedCertificates.isEmpty == false)
                #expect(String(decoding: first.requestHead, as: UTF8.self).hasPrefix("GET /one HTTP/1.1\r\n"))
                let (_, _, second) = try await Self.get(client, "https://localhost:\(origins.securePort)/two")
                #expect(second.isReusedConnection == true)
                #expect(second.proxyHandshake == nil)
                #expect(proxy.connectCount == 1)
                #expect(proxy.log.contains("CONNECT localhost:\(origins.securePort) HTTP/1.1"))
                await client.shutdown()
            }
        }

        @Test func a407AnsweringConnectIsATypedErrorCarryingTheChallenge() async throws {
            if let reason = TestProxy.missing(TestProxy.tinyproxyPath) { return print("skipped: \(reason)") }
            try await Origins.run { origins in
                let proxy = try TestProxy.tinyproxy(connectPorts: [origins.securePort], basicAuth: ("alice", "s3cret"))
                defer { proxy.stop() }
                let anonymous = Proxy(kind: .http, host: "127.0.0.1", port: proxy.port)
                let client = try origins.client(.proxy(anonymous))
                let error = try #require(await Self.failure(client, "https://localhost:\(origins.securePort)/"))
                #expect(error.code == .proxyRefused, "\(error)")
                #expect(error.proxy == anonymous)
                #expect(error.proxyResponse?.status.code == 407)
                #expect(error.proxyResponse?.headers.first(name: "proxy-authenticate")?.hasPrefix("Basic") == true)
                // The same request with the proxy's credentials goes through.
                var request = HTTPClientRequest(url: "https://localhost:\(origins.securePort)/in")
                request.proxy = .proxy(
                    Proxy(
                        kind: .http, host: "127.0.0.1", port: proxy.port,
                        credentials: ProxyCredentials(user: "alice", password: "s3cret")))
                let response = try await client.execute(request)
                #expect(response.status.code == 200)
                _ = try await response.body.collect(upTo: 1024)
                await client.shutdown()
            }
        }

        @Test func httpIsTunnelledWhenAskedLikeCurlsProxytunnel() async throws {
            if let reason = TestProxy.missing(TestProxy.tinyproxyPath) { return print("skipped: \(reason)") }
            try await Origins.run { origins in
                let proxy = try TestProxy.tinyproxy(connectPorts: [origins.plainPort])
                defer { proxy.stop() }
                let client = try origins.client(.proxy(Proxy(kind: .http, host: "127.0.0.1", port: proxy.port))) {
                    $0.tunnelsThroughHTTPProxy = true
                }
                let (status, body, metrics) = try await Self.get(client, "http://127.0.0.1:\(origins.plainPort)/p")
                #expect(status == 200)
                #expect(body == "origin /p -")
                #expect(metrics.proxyHandshake != nil)
                #expect(String(decoding: metrics.requestHead, as: UTF8.self).hasPrefix("GET /p HTTP/1.1\r\n"))
                #expect(proxy.connectCount == 1)
                await client.shutdown()
            }
        }

        @Test func anHTTPSProxyIsReachedWithItsOwnTrustAndCarriesTLSToTheOrigin() async throws {
            if let reason = TestProxy.missing(TestProxy.tinyproxyPath) { return print("skipped: \(reason)") }
            try await Origins.run { origins in
                let plain = try TestProxy.tinyproxy(connectPorts: [origins.securePort])
                defer { plain.stop() }
                // The proxy's certificate is the self-signed one, trusted for the proxy only; the origins' root is not.
                let front = try await TestProxy.tlsFront(
                    chain: origins.pki.selfSignedChain, key: origins.pki.selfSignedKey, target: plain.port)
                defer { front.stop() }
                var proxy = Proxy(kind: .https, host: "localhost", port: front.port)
                var proxyTrust = TLSConfiguration()
                proxyTrust.trustRoots = .pemFile(origins.pki.selfSignedChain)
                proxy.tls = proxyTrust
                let client = try origins.client(.proxy(proxy))
                let (status, body, metrics) = try await Self.get(client, "https://localhost:\(origins.securePort)/tls")
                #expect(status == 200)
                #expect(body == "origin /tls -")
                #expect(metrics.proxyHandshake != nil)
                let (forwarded, forwardedBody, _) = try await Self.get(client, "http://127.0.0.1:\(origins.plainPort)/f")
                #expect(forwarded == 200)
                #expect(forwardedBody == "origin /f -")
                // Trusting the origins' root for the proxy fails at the proxy, as a TLS failure that names it.
                var wrongTrust = proxy
                var rootOnly = TLSConfiguration()
                rootOnly.trustRoots = .pemFile(origins.pki.rootCertificate)
                wrongTrust.tls = rootOnly
                let refusing = try origins.client(.proxy(wrongTrust))
                let error = try #require(await Self.failure(refusing, "https://localhost:\(origins.securePort)/"))
                #expect(error.code == .tlsFailed, "\(error)")
                #expect(error.proxy == wrongTrust)
                // Without TLS settings for it, an https proxy is refused before anything is sent.
                let bare = try origins.client(.proxy(Proxy(kind: .https, host: "localhost", port: front.port)))
                #expect(await Self.failure(bare, "http://127.0.0.1:\(origins.plainPort)/")?.code == .invalidProxy)
                await client.shutdown()
                await refusing.shutdown()
                await bare.shutdown()
            }
        }

        // MARK: SOCKS 5: microsocks and danted

        @Test func socks5WithoutAuthenticationThroughMicrosocksAndDanted() async throws {
            for path in [TestProxy.microsocksPath, TestProxy.dantedPath] {
                if let reason = TestProxy.missing(path) { return print("skipped: \(reason)") }
            }
            try await Origins.run { origins in
                for proxy in [try TestProxy.microsocks(), try TestProxy.danted()] {
                    defer { proxy.stop() }
                    for kind in [Proxy.Kind.socks5, .socks5h] {
                        let client = try origins.client(.proxy(Proxy(kind: kind, host: "127.0.0.1", port: proxy.port)))
                        let (status, body, metrics) = try await Self.get(client, "http://localhost:\(origins.plainPort)/s")
                        #expect(status == 200)
                        #expect(body == "origin /s -")
                        #expect(metrics.proxyHandshake != nil)
                        let (secure, secureBody, _) = try await Self.get(client, "https://localhost:\(origins.securePort)/t")
                        #expect(secure == 200)
                        #expect(secureBody == "origin /t -")
                        await client.shutdown()
                    }
                }
            }
        }

        @Test func socks5WithAUserAndPasswordThroughMicrosocks() async throws {
            if let reason = TestProxy.missing(TestProxy.microsocksPath) { return print("skipped: \(reason)") }
            let proxy = try TestProxy.microsocks(user: "bob", password: "pw")
            defer { proxy.stop() }
            try await Origins.run { origins in
                func client(_ credentials: ProxyCredentials?) throws -> HTTPClient {
                    try origins.client(
                        .proxy(Proxy(kind: .socks5h, host: "127.0.0.1", port: proxy.port, credentials: credentials)))
                }
                let good = try client(ProxyCredentials(user: "bob", password: "pw"))
                let (status, _, _) = try await Self.get(good, "https://localhost:\(origins.securePort)/")
                #expect(status == 200)
                let wrong = try client(ProxyCredentials(user: "bob", password: "nope"))
                let refused = try #require(await Self.failure(wrong, "http://localhost:\(origins.plainPort)/"))
                #expect(refused.code == .proxyHandshakeFailed, "\(refused)")
                if case .authenticationFailed = refused.socksError {} else { Issue.record("\(refused)") }
                let none = try client(nil)
                let noMethod = try #require(await Self.failure(none, "http://localhost:\(origins.plainPort)/"))
                #expect(noMethod.socksError == .noAcceptableAuthenticationMethod, "\(noMethod)")
                for client in [good, wrong, none] { await client.shutdown() }
            }
        }

        // MARK: Scripted SOCKS peer

        @Test func socks4And4aAndWhatEachKindSends() async throws {
            let peer = try await TestProxy.scriptedSOCKS()
            defer { peer.stop() }
            try await Origins.run { origins in
                let cases: [(Proxy.Kind, String)] = [
                    (.socks4, "v4 127.0.0.1 \(origins.plainPort) carol"),
                    (.socks4a, "v4 localhost \(origins.plainPort) carol"),
                    (.socks5, "v5 1 127.0.0.1 \(origins.plainPort)"),
                    (.socks5h, "v5 3 localhost \(origins.plainPort)"),
                ]
                for (kind, expected) in cases {
                    let client = try origins.client(
                        .proxy(
                            Proxy(
                                kind: kind, host: "127.0.0.1", port: peer.port,
                                credentials: kind.rawValue.hasPrefix("socks4")
                                    ? ProxyCredentials(user: "carol", password: "") : nil)))
                    let (status, body, _) = try await Self.get(client, "http://localhost:\(origins.plainPort)/k")
                    #expect(status == 200, "\(kind)")
                    #expect(body == "origin /k -")
                    // SOCKS 4 and 5 resolved `localhost` here and sent an address; 4a and 5h sent the name.
                    #expect(peer.records.last == expected, "\(kind)")
                    await client.shutdown()
                }
            }
        }

        @Test func everySOCKSReplyCodeIsATypedError() async throws {
            let peer = try await TestProxy.scriptedSOCKS()
            defer { peer.stop() }
            try await Origins.run { origins in
                let socks5 = try origins.client(.proxy(Proxy(kind: .socks5h, host: "127.0.0.1", port: peer.port)))
                let expected5: [(UInt8, SOCKSError)] = [
                    (1, .generalServerFailure), (2, .connectionNotAllowed), (3, .networkUnreachable), (4, .hostUnreachable),
                    (5, .connectionRefused), (6, .ttlExpired), (7, .commandNotSupported), (8, .addressTypeNotSupported),
                    (9, .unassignedReply(9)), (255, .unassignedReply(255)),
                ]
                for (code, error) in expected5 {
                    let failure = try #require(await Self.failure(socks5, "http://refused.example:\(50000 + Int(code))/"))
                    #expect(failure.code == .proxyHandshakeFailed)
                    #expect(failure.socksError == error, "\(failure)")
                    #expect(failure.proxy?.port == peer.port)
                }
                let socks4 = try origins.client(.proxy(Proxy(kind: .socks4a, host: "127.0.0.1", port: peer.port)))
                let expected4: [(UInt8, SOCKSError)] = [
                    (91, .requestRejected), (92, .identdUnreachable), (93, .identdMismatch), (94, .unknownSOCKS4Reply(94)),
                ]
                for (code, error) in expected4 {
                    let failure = try #require(await Self.failure(socks4, "http://refused.example:\(50000 + Int(code))/"))
                    #expect(failure.socksError == error, "\(failure)")
                }
                await socks5.shutdown()
                await socks4.shutdown()
            }
        }

        @Test func aRefusedSOCKSPasswordIsTypedAndAGoodOnePasses() async throws {
            let peer = try await TestProxy.scriptedSOCKS(credentials: "dave:pw")
            defer { peer.stop() }
            try await Origins.run { origins in
                let good = try origins.client(
                    .proxy(
                        Proxy(
                            kind: .socks5, host: "127.0.0.1", port: peer.port,
                            credentials: ProxyCredentials(user: "dave", password: "pw"))))
                #expect(try await Self.get(good, "http://127.0.0.1:\(origins.plainPort)/").0 == 200)
                let bad = try origins.client(
                    .proxy(
                        Proxy(
                            kind: .socks5, host: "127.0.0.1", port: peer.port,
                            credentials: ProxyCredentials(user: "dave", password: "no"))))
                let failure = try #require(await Self.failure(bad, "http://127.0.0.1:\(origins.plainPort)/"))
                #expect(failure.socksError == .authenticationFailed(status: 1), "\(failure)")
                await good.shutdown()
                await bad.shutdown()
            }
        }

        @Test func tlsThroughASOCKSTunnelVerifiesTheOriginsNameNotTheProxys() async throws {
            let peer = try await TestProxy.scriptedSOCKS()
            defer { peer.stop() }
            try await Origins.run { origins in
                // An origin whose certificate names wrong.example only; the client resolves that name to loopback.
                var configuration = HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0))
                configuration.tls = TLSServerConfiguration(
                    certificateChainFile: origins.pki.wrongHostChain, privateKeyFile: origins.pki.wrongHostKey)
                let server = HTTPServer(configuration: configuration, group: origins.group) { _, response in
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "named"))
                }
                let port = try await server.start().port!
                let client = try origins.client(.proxy(Proxy(kind: .socks5, host: "127.0.0.1", port: peer.port))) {
                    $0.resolver = LoopbackResolver()
                }
                let (status, body, _) = try await Self.get(client, "https://wrong.example:\(port)/")
                #expect(status == 200)
                #expect(body == "named")
                #expect(peer.records.last == "v5 1 127.0.0.1 \(port)")
                // The same origin under the proxy's name fails verification: the name checked is the URL's.
                let error = try #require(await Self.failure(client, "https://127.0.0.1:\(port)/"))
                #expect(error.code == .tlsFailed, "\(error)")
                #expect(error.proxy == nil)
                await client.shutdown()
                await server.shutdown(gracePeriod: .seconds(1))
            }
        }

        @Test func aProxyThatIsNotListeningFailsAtTheProxy() async throws {
            try await Origins.run { origins in
                let port = try LoopbackPort.free()
                for kind in [Proxy.Kind.http, .socks5] {
                    let proxy = Proxy(kind: kind, host: "127.0.0.1", port: port)
                    let client = try origins.client(.proxy(proxy))
                    let error = try #require(await Self.failure(client, "https://localhost:\(origins.securePort)/"))
                    #expect(error.code == .connectFailed, "\(error)")
                    #expect(error.connectError?.reason == .refused)
                    #expect(error.proxy == proxy)
                    await client.shutdown()
                }
            }
        }

        @Test func noProxyAndTheRequestsOwnSettingSendItDirect() async throws {
            try await Origins.run { origins in
                // A proxy that does not listen: any request that used it would fail.
                let unused = Proxy(kind: .http, host: "127.0.0.1", port: try LoopbackPort.free())
                let client = try origins.client(.proxy(unused, noProxy: NoProxyList("localhost")))
                let (status, _, metrics) = try await Self.get(client, "http://localhost:\(origins.plainPort)/")
                #expect(status == 200)
                #expect(metrics.proxy == nil)
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(origins.plainPort)/")
                request.proxy = ProxyConfiguration.none
                let response = try await client.execute(request)
                #expect(response.status.code == 200)
                _ = try await response.body.collect(upTo: 1024)
                // The environment's proxy variables, read per request.
                let environment = try origins.client(
                    .environment(ProxyEnvironment(["http_proxy": "http://127.0.0.1:\(unused.port)", "no_proxy": "127.0.0.1"])))
                #expect(try await Self.get(environment, "http://127.0.0.1:\(origins.plainPort)/").0 == 200)
                let viaEnvironment = try #require(await Self.failure(environment, "http://localhost:\(origins.plainPort)/"))
                #expect(viaEnvironment.proxy?.port == unused.port, "\(viaEnvironment)")
                let broken = try origins.client(.environment(ProxyEnvironment(["http_proxy": "gopher://proxy"])))
                let invalid = try #require(await Self.failure(broken, "http://localhost:\(origins.plainPort)/"))
                #expect(invalid.code == .invalidProxy)
                #expect(invalid.proxyURLError == .unsupportedScheme("gopher"))
                for client in [client, environment, broken] { await client.shutdown() }
            }
        }

        // MARK: Figures

        /// Issue 29's figure: 10,000 HTTPS requests through tinyproxy with 8 connections at most open no more than 8
        /// tunnels (8 CONNECTs, counted in the proxy's log).
        @Test func tenThousandHTTPSRequestsThroughTinyproxyOpenAtMostEightTunnels() async throws {
            if let reason = TestProxy.missing(TestProxy.tinyproxyPath) { return print("skipped: \(reason)") }
            try await Origins.run(seconds: 110) { origins in
                let proxy = try TestProxy.tinyproxy(connectPorts: [origins.securePort])
                defer { proxy.stop() }
                let client = try origins.client(.proxy(Proxy(kind: .http, host: "127.0.0.1", port: proxy.port))) {
                    $0.maxConnectionsPerHost = 8
                }
                let total = 10_000
                let handshakes = try await withThrowingTaskGroup(of: Int.self) { group in
                    for worker in 0..<16 {
                        group.addTask {
                            var handshakes = 0
                            for index in stride(from: worker, to: total, by: 16) {
                                let (status, _, metrics) = try await Self.get(
                                    client, "https://localhost:\(origins.securePort)/\(index)")
                                guard status == 200 else { throw UnexpectedStatus(status: status) }
                                if metrics.proxyHandshake != nil { handshakes += 1 }
                            }
                            return handshakes
                        }
                    }
                    return try await group.reduce(0, +)
                }
                print("\(total) HTTPS requests through tinyproxy, 8 connections at most: \(proxy.connectCount) CONNECTs")
                #expect(handshakes <= 8)
                #expect(proxy.connectCount <= 8)
                #expect(proxy.connectCount == handshakes)
                await client.shutdown()
            }
        }
    }
}

/// A response that should have been a 200.
private struct UnexpectedStatus: Error {
    let status: Int
}

/// Resolves every name to 127.0.0.1, for an origin named by a certificate rather than by the system's resolver.
private struct LoopbackResolver: Resolver {
    func resolve(host: String, port: Int) async throws -> [SocketAddress] {
        [try SocketAddress(ipAddress: "127.0.0.1", port: port)]
    }
}
