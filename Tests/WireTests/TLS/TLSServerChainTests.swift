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
            chain: String, clientCAs: String?, _ body: @escaping @Sendable (Int) async throws -> Void
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
    }
}
