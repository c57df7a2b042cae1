import Foundation
import Glibc
import Testing
import Wire
import WireFaults
import WireTLS
import WireTestSupport

/// Peers that stall mid-handshake or speak no TLS, on both sides, and curl as a client of Wire's
/// TLS server. Every case checks that no descriptor stays open.
extension IOSuite {
    @Suite(.exclusiveIO) struct TLSHostilePeerTests {
        let pki: TestPKI

        init() throws {
            pki = try TestPKI.shared()
        }

        func client(connectTimeout: Duration = .seconds(5), group: EventLoopGroup) throws -> HTTPClient {
            var configuration = HTTPClientConfiguration()
            var tls = TLSConfiguration()
            tls.trustRoots = .pemFile(pki.rootCertificate)
            configuration.tls = tls
            configuration.connectTimeout = connectTimeout
            return try HTTPClient(configuration: configuration, group: group)
        }

        @Test func clientHandshakeAgainstAStallingPeerTimesOut() async throws {
            let before = await descriptorBaseline()
            let group = try EventLoopGroup(loopCount: 1, namePrefix: "tls-stall")
            // Accepts, reads the ClientHello, never answers.
            let peer = try await ScriptedServer.start(on: group.next()) { _, _, _ in .silence }
            let client = try client(connectTimeout: .milliseconds(500), group: group)
            let started = ContinuousClock.now
            do {
                _ = try await withTimeout(seconds: 10) {
                    try await client.execute(HTTPClientRequest(url: "https://127.0.0.1:\(peer.address.port!)/"))
                }
                Issue.record("a stalled handshake succeeded")
            } catch let error as HTTPClientError {
                #expect(error.code == .tlsFailed)
                #expect((error.securityError as? TLSError)?.reason == .handshakeTimeout, "\(error)")
            }
            // Grows with a sanitizer's slowdown; the reason above already names the handshake timer.
            #expect(ContinuousClock.now - started < .seconds(5) * Sanitizer.timeScale)
            await client.shutdown()
            try await peer.close()
            await group.shutdownGracefully()
            #expect(await before.newlyOpenedOnceSettled() == [])
        }

        @Test func clientAgainstAPeerThatDoesNotSpeakTLSFailsCleanly() async throws {
            // A plain HTTP server answers the ClientHello with a 400.
            try await ClientServer.run(
                seconds: 20,
                client: {
                    var configuration = HTTPClientConfiguration()
                    configuration.tls = TLSConfiguration()
                    return configuration
                }(),
                handler: { _, response in
                    try await response.respond(HTTPResponseHead(status: .ok))
                }
            ) { pair in
                do {
                    _ = try await pair.client.execute(HTTPClientRequest(url: "https://127.0.0.1:\(pair.port)/"))
                    Issue.record("TLS against plain HTTP succeeded")
                } catch let error as HTTPClientError {
                    let tlsError = try #require(error.securityError as? TLSError, "\(error)")
                    #expect(tlsError.reason == .handshakeFailed)
                    #expect(tlsError.detail.contains("does not speak TLS"), "\(tlsError)")
                }
            }
        }

        /// Runs a TLS server with a short handshake timeout and hands `body` its port.
        func withTLSServer(_ body: @escaping @Sendable (Int) async throws -> Void) async throws {
            try await ClientServer.run(
                seconds: 20,
                configure: { configuration in
                    configuration.tls = TLSServerConfiguration(
                        certificateChainFile: pki.goodChain,
                        privateKeyFile: pki.goodKey)
                    // Grows with a sanitizer's slowdown.
                    configuration.handshakeTimeout = .milliseconds(300) * Sanitizer.timeScale
                },
                handler: { request, response in
                    try await response.respond(
                        HTTPResponseHead(status: .ok), body: ByteBuffer(string: "tls \(request.head.target)\n"))
                }
            ) { pair in
                try await body(pair.port)
            }
        }

        @Test func serverClosesAClientThatStallsMidHandshake() async throws {
            try await withTLSServer { port in
                try await withLoop { loop in
                    let raw = try await RawClient.connect(port: port, loop: loop)
                    // Half a ClientHello's record header, then nothing.
                    try await raw.send([0x16, 0x03, 0x01])
                    let started = ContinuousClock.now
                    let reply = try await withTimeout(seconds: 5) { await raw.readUntilClosed() }
                    #expect(reply.isEmpty)
                    // Grows with a sanitizer's slowdown, but stays below the 10 s header timeout, which would also
                    // close the connection.
                    #expect(ContinuousClock.now - started < min(Duration.seconds(3) * Sanitizer.timeScale, .seconds(8)))
                    await raw.close()
                }
            }
        }

        @Test func serverClosesAClientThatSendsGarbage() async throws {
            try await withTLSServer { port in
                try await withLoop { loop in
                    let raw = try await RawClient.connect(port: port, loop: loop)
                    try await raw.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                    let reply = try await withTimeout(seconds: 5) { await raw.readUntilClosed() }
                    // At most a TLS alert record, never an HTTP response.
                    #expect(reply.first != UInt8(ascii: "H"))
                    await raw.close()
                }
            }
        }

        /// Runs curl twice (and the tool once) before a test's descriptor baseline: the second process watched by a
        /// termination handler makes Foundation open descriptors of its own (an epoll, an
        /// eventfd, a timerfd) that stay open and would otherwise count as a leak.
        static func warmUpProcessWatching() async throws {
            for _ in 0..<2 { _ = try await runCurl(["--version"]) }
            // And the tool runner's first run opens one more of Foundation's, once.
            _ = try await WireToolRunner.run(["--help"])
        }

        @Test func curlGetsFromWiresTLSServer() async throws {
            try await Self.warmUpProcessWatching()
            try await withTLSServer { port in
                let result = try await runCurl(["-sS", "--cacert", pki.rootCertificate, "https://localhost:\(port)/curl"])
                #expect(result.status == 0, "\(result.stderr)")
                #expect(result.stdout == "tls /curl\n")
                let verbose = try await runCurl([
                    "-sSv", "--tlsv1.2", "--tls-max", "1.2", "--cacert", pki.rootCertificate,
                    "https://127.0.0.1:\(port)/v",
                ])
                #expect(verbose.status == 0, "\(verbose.stderr)")
                #expect(
                    verbose.stderr.contains("ALPN: server accepted http/1.1")
                        || verbose.stderr.contains("ALPN, server accepted to use http/1.1"),
                    "\(verbose.stderr)")
                #expect(verbose.stderr.contains("TLSv1.2"))
                // curl without the root refuses Wire's certificate.
                let refused = try await runCurl(["-sS", "https://localhost:\(port)/"])
                #expect(refused.status == 60, "\(refused.stderr)")
            }
        }

        @Test func curlWithAndWithoutAClientCertificate() async throws {
            try await Self.warmUpProcessWatching()
            let pki = self.pki
            try await ClientServer.run(
                seconds: 20,
                configure: { configuration in
                    var tls = TLSServerConfiguration(certificateChainFile: pki.goodChain, privateKeyFile: pki.goodKey)
                    tls.clientCertificates = .required(caFile: pki.clientCAs)
                    configuration.tls = tls
                },
                handler: { _, response in
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "hello client\n"))
                }
            ) { pair in
                let accepted = try await runCurl([
                    "-sS", "--cacert", pki.rootCertificate, "--cert", pki.clientChain, "--key", pki.clientKey,
                    "https://localhost:\(pair.port)/",
                ])
                #expect(accepted.status == 0, "\(accepted.stderr)")
                #expect(accepted.stdout == "hello client\n")
                let refused = try await runCurl(["-sS", "--cacert", pki.rootCertificate, "https://localhost:\(pair.port)/"])
                #expect(refused.status != 0)
            }
        }
    }
}

/// A fault scenario (`wire serve --faults`, here over TLS in process) that answers each request with a body
/// delimited by the connection's end, then either closes properly (`fin`: close_notify, then the TCP FIN) or drops the
/// TCP connection without close_notify (`fin-without-close-notify`): the two cases a client must tell apart.
let closeDelimitedTLSScenario = """
    {"rules": [
      {"path": "/complete", "actions": [
        {"do": "head", "status": 200, "fields": [["Connection", "close"]]}, {"do": "body", "size": 5000},
        {"do": "close", "how": "fin"}]},
      {"path": "/truncate", "actions": [
        {"do": "head", "status": 200, "fields": [["Connection", "close"]]}, {"do": "body", "size": 5000},
        {"do": "close", "how": "fin-without-close-notify"}]}
    ]}
    """

extension IOSuite.TLSHostilePeerTests {
    @Test func closeNotifyEndsABodyAndItsAbsenceIsTruncation() async throws {
        let pki = try TestPKI.shared()
        var configuration = HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0))
        configuration.tls = TLSServerConfiguration(certificateChainFile: pki.goodChain, privateKeyFile: pki.goodKey)
        let serverLoop = try EventLoop(name: "tls-truncation-peer")
        let peer = try await FaultServer.start(
            try FaultScenario.parse(Array(closeDelimitedTLSScenario.utf8)), on: serverLoop, address: configuration.address,
            security: configuration.transportSecurity)
        let port = try #require(peer.address.port)
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "tls-truncation")
        let client = try client(group: group)
        let complete = try await withTimeout(seconds: 10) {
            let response = try await client.execute(HTTPClientRequest(url: "https://localhost:\(port)/complete"))
            return try await response.body.collect(upTo: 1 << 20).readableBytes
        }
        #expect(complete == 5000)
        do {
            _ = try await withTimeout(seconds: 10) {
                let response = try await client.execute(HTTPClientRequest(url: "https://localhost:\(port)/truncate"))
                return try await response.body.collect(upTo: 1 << 20).readableBytes
            }
            Issue.record("a body cut short without close_notify was accepted")
        } catch let error as HTTPClientError {
            #expect((error.securityError as? TLSError)?.reason == .truncatedStream, "\(error)")
        }
        await client.shutdown()
        await group.shutdownGracefully()
        try await peer.close()
        await serverLoop.shutdownGracefully()
    }
}
