import Foundation
import Testing
import Wire
import WireTLS

/// OpenSSL's own client (`openssl s_client`) against Wire's HTTPS server: the peer most
/// benchmarks and operators use to check a server's sessions.
extension IOSuite {
    @Suite struct TLSOpenSSLClientTests {
        let pki: TestPKI

        init() throws {
            pki = try TestPKI.shared()
        }

        /// One `s_client` run: a GET with `Connection: close`, read to the server's close
        /// (`-ign_eof`), so the client has read the TLS 1.3 tickets that follow the handshake
        /// before it saves the session to `sessionFile` (or resumes from it).
        func fetch(port: Int, version: TLSVersion, sessionFile: String, resume: Bool) async throws -> WireToolRunner.Run {
            let request = "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
            return try await WireToolRunner.run(
                program: URL(fileURLWithPath: "/usr/bin/openssl"),
                [
                    "s_client", "-connect", "127.0.0.1:\(port)", "-servername", "localhost", "-CAfile", pki.rootCertificate,
                    "-verify_return_error", version == .tls13 ? "-tls1_3" : "-tls1_2", "-ign_eof",
                    resume ? "-sess_in" : "-sess_out", sessionFile,
                ],
                input: request, seconds: 10)
        }

        @Test(arguments: [TLSVersion.tls12, .tls13])
        func openSSLClientResumesItsSession(_ version: TLSVersion) async throws {
            try await TLSHostilePeerTests.warmUpProcessWatching()
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let sessionFile = folder.appendingPathComponent("session.pem").path
            var configuration = HTTPClientConfiguration()
            configuration.connectTimeout = .seconds(5)
            let (chain, key) = (pki.goodChain, pki.goodKey)
            try await ClientServer.run(
                seconds: 30, client: configuration,
                configure: { server in
                    server.tls = TLSServerConfiguration(certificateChainFile: chain, privateKeyFile: key)
                },
                handler: { request, response in
                    // The server's own view of the handshake, for the client to print.
                    let info = request.transportSecurity
                    let text = "resumed=\(info?.isSessionResumed ?? false) version=\(info?.protocolVersion ?? "none")\n"
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: text))
                }
            ) { pair in
                let first = try await fetch(port: pair.port, version: version, sessionFile: sessionFile, resume: false)
                #expect(first.status == 0, "\(first.errors)")
                #expect(first.text.contains("New, \(version),"), "\(first.text)")
                #expect(first.text.contains("resumed=false version=\(version)"), "\(first.text)")
                #expect(FileManager.default.fileExists(atPath: sessionFile), "s_client saved no session: \(first.text)")

                let second = try await fetch(port: pair.port, version: version, sessionFile: sessionFile, resume: true)
                #expect(second.status == 0, "\(second.errors)")
                #expect(second.text.contains("Reused, \(version),"), "\(second.text)")
                #expect(second.text.contains("resumed=true version=\(version)"), "\(second.text)")
            }
        }
    }
}
