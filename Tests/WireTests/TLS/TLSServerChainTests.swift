import Foundation
import Testing
import Wire
import WireTLS

/// The certificates Wire's server sends and how it resumes, seen by OpenSSL's own client (`openssl s_client`): the
/// server completes a leaf-only chain once, when its context is built, instead of on every handshake.
extension IOSuite {
    @Suite struct TLSServerChainTests {
        let pki: TestPKI

        init() throws {
            pki = try TestPKI.shared()
        }

        /// One `s_client` handshake (and a GET read to the close) that prints the certificates the server sent and,
        /// with `verify`, fails unless the chain verifies up to the test root; `extra` adds arguments.
        func handshake(port: Int, version: TLSVersion, verify: Bool = true, _ extra: [String] = []) async throws
            -> WireToolRunner.Run
        {
            let request = "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
            return try await WireToolRunner.run(
                program: URL(fileURLWithPath: "/usr/bin/openssl"),
                [
                    "s_client", "-connect", "127.0.0.1:\(port)", "-servername", "localhost", "-CAfile", pki.rootCertificate,
                    "-showcerts", version == .tls13 ? "-tls1_3" : "-tls1_2", "-ign_eof",
                ] + (verify ? ["-verify_return_error"] : []) + extra,
                input: request, seconds: 10)
        }

        func certificatesSent(_ run: WireToolRunner.Run) -> Int {
            run.text.components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1
        }

        func serve(
            chain: String, clientCAs: String?,
            resumption: TLSServerConfiguration.SessionResumption = .serverCache(),
            _ body: @escaping @Sendable (Int) async throws -> Void
        ) async throws {
            try await TLSHostilePeerTests.warmUpProcessWatching()
            var client = HTTPClientConfiguration()
            client.connectTimeout = .seconds(5)
            let key = pki.goodKey
            try await ClientServer.run(
                seconds: 30, client: client,
                configure: { server in
                    var tls = TLSServerConfiguration(certificateChainFile: chain, privateKeyFile: key)
                    if let clientCAs { tls.clientCertificates = .optional(caFile: clientCAs) }
                    tls.sessionResumption = resumption
                    server.tls = tls
                },
                handler: { request, response in
                    let resumed = request.transportSecurity?.isSessionResumed ?? false
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "resumed=\(resumed)\n"))
                }
            ) { pair in try await body(pair.port) }
        }

        /// A certificate file with the leaf alone is completed from the context's store (here the client-CA file,
        /// which holds the intermediate and the root), as OpenSSL's per-handshake chaining did, on every handshake.
        @Test(arguments: [TLSVersion.tls12, .tls13])
        func leafAloneIsCompletedFromTheStore(_ version: TLSVersion) async throws {
            try await serve(chain: pki.leafOnlyChain, clientCAs: pki.clientCAs) { port in
                for _ in 0..<2 {
                    let run = try await handshake(port: port, version: version)
                    #expect(run.status == 0, "\(run.errors)")
                    #expect(run.text.contains("Verify return code: 0 (ok)"), "\(run.text)")
                    // Leaf, intermediate and root, as the chain OpenSSL builds from the store ends.
                    #expect(certificatesSent(run) == 3, "\(run.text)")
                }
            }
        }

        /// A file that holds its intermediates is sent exactly as it is; a leaf alone with nothing to complete it
        /// from is sent alone.
        @Test(arguments: [TLSVersion.tls12, .tls13])
        func fileChainIsSentAsItIs(_ version: TLSVersion) async throws {
            try await serve(chain: pki.goodChain, clientCAs: nil) { port in
                let run = try await handshake(port: port, version: version)
                #expect(run.status == 0, "\(run.errors)")
                #expect(certificatesSent(run) == 2, "\(run.text)")
            }
            try await serve(chain: pki.leafOnlyChain, clientCAs: nil) { port in
                let run = try await handshake(port: port, version: version, verify: false)
                #expect(run.status == 0, "\(run.errors)")
                #expect(!run.text.contains("Verify return code: 0 (ok)"), "a leaf alone cannot verify: \(run.text)")
                #expect(certificatesSent(run) == 1, "\(run.text)")
            }
        }

        /// TLS 1.2 without tickets resumes by session ID, from the server context's own session cache.
        @Test func tls12ResumesBySessionID() async throws {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let session = folder.appendingPathComponent("session.pem").path
            try await serve(chain: pki.goodChain, clientCAs: nil) { port in
                let first = try await handshake(port: port, version: .tls12, ["-no_ticket", "-sess_out", session])
                #expect(first.status == 0, "\(first.errors)")
                #expect(first.text.contains("New, TLSv1.2,"), "\(first.text)")
                #expect(!first.text.contains("TLS session ticket:"), "a ticket was issued: \(first.text)")
                let second = try await handshake(port: port, version: .tls12, ["-no_ticket", "-sess_in", session])
                #expect(second.status == 0, "\(second.errors)")
                #expect(second.text.contains("Reused, TLSv1.2,"), "\(second.text)")
                #expect(second.text.contains("resumed=true"), "\(second.text)")
            }
        }

        /// Two handshakes, the second offering the session the first saved (if it got one it could offer): whether the
        /// server resumed it, and what the first one printed (tickets, their lifetime hints).
        func resumeTwice(port: Int, version: TLSVersion, _ extra: [String] = []) async throws -> (
            first: WireToolRunner.Run, resumed: Bool
        ) {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let session = folder.appendingPathComponent("session.pem").path
            let first = try await handshake(port: port, version: version, extra + ["-sess_out", session])
            #expect(first.status == 0, "\(first.errors)")
            #expect(first.text.contains("resumed=false"), "\(first.text)")
            // s_client saves only a session it could resume: one without an ID or a ticket is not written.
            guard FileManager.default.fileExists(atPath: session) else { return (first, false) }
            let second = try await handshake(port: port, version: version, extra + ["-sess_in", session])
            #expect(second.status == 0, "\(second.errors)")
            let resumed = second.text.contains("resumed=true")
            #expect(resumed == second.text.contains("Reused, TLSv1."), "\(second.text)")
            return (first, resumed)
        }

        /// The default keeps sessions in the server: a TLS 1.2 client that offers tickets gets none and resumes by
        /// session ID; a TLS 1.3 client resumes with a ticket that only names the kept session, whose lifetime is
        /// the cache's five minutes.
        @Test(arguments: [TLSVersion.tls12, .tls13])
        func theDefaultResumesFromTheServersCache(_ version: TLSVersion) async throws {
            try await serve(chain: pki.goodChain, clientCAs: nil) { port in
                let (first, resumed) = try await resumeTwice(port: port, version: version)
                #expect(resumed)
                if version == .tls12 {
                    #expect(!first.text.contains("TLS session ticket:"), "a stateless ticket was issued: \(first.text)")
                } else {
                    #expect(first.text.contains("TLS session ticket lifetime hint: 300 (seconds)"), "\(first.text)")
                    // A stateful ticket is the kept session's 32-byte ID; a stateless one carries the whole session.
                    #expect(first.text.contains("    0010 - ") && !first.text.contains("    0020 - "), "\(first.text)")
                }
            }
        }

        /// A client that closes right after the handshake, without close_notify, can still resume (TLS 1.1 on no
        /// longer forgets such a session): `openssl s_time -reuse`, the handshake benchmark, prints `*` for a full
        /// handshake and `r` for a resumed one.
        @Test func aSessionSurvivesACloseWithoutCloseNotify() async throws {
            try await serve(chain: pki.goodChain, clientCAs: nil) { port in
                let run = try await WireToolRunner.run(
                    program: URL(fileURLWithPath: "/usr/bin/openssl"),
                    ["s_time", "-connect", "127.0.0.1:\(port)", "-reuse", "-tls1_2", "-time", "1"], seconds: 10)
                #expect(run.status == 0, "\(run.errors)")
                let marks = try #require(run.text.components(separatedBy: "starting\n").last?.prefix { $0 == "*" || $0 == "r" })
                // s_time's priming connection comes before "starting": every mark after it is a reuse.
                #expect(marks.count > 2, "\(run.text)")
                #expect(marks.allSatisfy { $0 == "r" }, "a session was not resumed: \(marks)")
            }
        }

        /// A cache with room for one session keeps the newest: a second client's session evicts the first's.
        @Test func theCacheKeepsItsCapacity() async throws {
            try await serve(chain: pki.goodChain, clientCAs: nil, resumption: .serverCache(capacity: 1)) { port in
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let one = folder.appendingPathComponent("one.pem").path
                let two = folder.appendingPathComponent("two.pem").path
                for session in [one, two] {
                    let run = try await handshake(port: port, version: .tls12, ["-sess_out", session])
                    #expect(run.status == 0, "\(run.errors)")
                }
                // The kept one first: the evicted one's full handshake makes a session that evicts it in turn.
                let kept = try await handshake(port: port, version: .tls12, ["-sess_in", two])
                #expect(kept.text.contains("resumed=true"), "\(kept.text)")
                let evicted = try await handshake(port: port, version: .tls12, ["-sess_in", one])
                #expect(evicted.text.contains("resumed=false"), "\(evicted.text)")
            }
        }

        /// Stateless tickets carry the session: TLS 1.2 resumes with one (whose hint is the configured lifetime),
        /// and a client that takes no ticket cannot resume, since nothing is kept.
        @Test func ticketsResumeWithNothingKept() async throws {
            try await serve(chain: pki.goodChain, clientCAs: nil, resumption: .tickets(lifetime: .seconds(600))) { port in
                let (first, resumed) = try await resumeTwice(port: port, version: .tls12)
                #expect(resumed)
                #expect(first.text.contains("TLS session ticket lifetime hint: 600 (seconds)"), "\(first.text)")
                let (_, resumedWithoutTicket) = try await resumeTwice(port: port, version: .tls12, ["-no_ticket"])
                #expect(!resumedWithoutTicket)
            }
        }

        /// With resumption off every handshake is a full one, and no ticket is sent.
        @Test(arguments: [TLSVersion.tls12, .tls13])
        func disabledResumptionHandshakesInFull(_ version: TLSVersion) async throws {
            try await serve(chain: pki.goodChain, clientCAs: nil, resumption: .disabled) { port in
                let (first, resumed) = try await resumeTwice(port: port, version: version)
                #expect(!resumed)
                #expect(!first.text.contains("TLS session ticket"), "\(first.text)")
            }
        }

        /// Settings OpenSSL would misread (a cache size of 0 is "no limit" to it) stop the server at its start.
        @Test(arguments: [
            TLSServerConfiguration.SessionResumption.serverCache(capacity: 0),
            .serverCache(lifetime: .milliseconds(10)), .tickets(lifetime: .zero), .tickets(lifetime: .seconds(604_801)),
        ])
        func outOfRangeSettingsAreRefused(_ resumption: TLSServerConfiguration.SessionResumption) async throws {
            let group = try EventLoopGroup(loopCount: 1, namePrefix: "tls-resumption")
            var configuration = HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0))
            var tls = TLSServerConfiguration(certificateChainFile: pki.goodChain, privateKeyFile: pki.goodKey)
            tls.sessionResumption = resumption
            configuration.tls = tls
            let server = HTTPServer(configuration: configuration, group: group) { _, _ in }
            let error = await #expect(throws: HTTPServerError.self) { _ = try await server.start() }
            #expect(error?.kind == .securityUnavailable, "\(String(describing: error))")
            #expect((error?.underlying as? TLSError)?.reason == .invalidConfiguration, "\(String(describing: error))")
            await server.shutdown()
            await group.shutdownGracefully()
        }
    }
}
