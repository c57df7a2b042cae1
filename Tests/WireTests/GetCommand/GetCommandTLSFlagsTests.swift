import Foundation
import Testing
import WireTestSupport

extension IOSuite {
    /// curl's `--capath`, `--tls-max`, `--ciphers`, `--tls13-ciphers` and `--curves` in `wire get`, beside curl 7.88
    /// against `openssl s_server -www`, whose page says what was negotiated (`New, TLSv1.2, Cipher is …`) and which
    /// groups the client offered (`Supported groups: …`).
    @Suite struct GetCommandTLSFlagsTests {
        let pki: TestPKI

        init() throws {
            pki = try TestPKI.shared()
        }

        /// Runs `words` (after `--cacert` with the test root) against a fresh `openssl s_server` with `wire get` and
        /// curl, one at a time (the server takes one connection at a time).
        func both(_ words: [String], cacert: Bool = true) async throws -> (wire: WireToolRunner.Run, curl: WireToolRunner.Run) {
            let server = try TestOpenSSLServer(certificate: pki.goodLeaf, key: pki.goodKey, chain: pki.intermediateCertificate)
            defer { server.stop() }
            let trust = cacert ? ["--cacert", pki.rootCertificate] : []
            let url = "https://localhost:\(server.port)/"
            let wire = try await WireToolRunner.run(["get", "-sS"] + trust + words + [url])
            let curl = try await WireToolRunner.run(program: CurlPeer.curl, ["-sS"] + trust + words + [url])
            return (wire, curl)
        }

        /// The page's `New, TLSv1.x, Cipher is NAME` line.
        static func negotiated(_ run: WireToolRunner.Run) -> String? {
            run.text.split(separator: "\n").first { $0.hasPrefix("New, ") }.map(String.init)
        }

        @Test(arguments: [
            (["--tls-max", "1.2"], "New, TLSv1.2, Cipher is ECDHE-ECDSA-AES256-GCM-SHA384"),
            (
                ["--tls-max", "1.2", "--ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256"],
                "New, TLSv1.2, Cipher is ECDHE-ECDSA-AES128-GCM-SHA256"
            ),
            (
                ["--tls-max", "1.2", "--ciphers", "ECDHE-ECDSA-CHACHA20-POLY1305:BOGUS"],
                "New, TLSv1.2, Cipher is ECDHE-ECDSA-CHACHA20-POLY1305"
            ),
            (["--tls13-ciphers", "TLS_CHACHA20_POLY1305_SHA256"], "New, TLSv1.3, Cipher is TLS_CHACHA20_POLY1305_SHA256"),
            (
                ["--tls-max", "1.3", "--tls13-ciphers", "TLS_AES_128_GCM_SHA256"],
                "New, TLSv1.3, Cipher is TLS_AES_128_GCM_SHA256"
            ),
            (["--tls-max", "default"], "New, TLSv1.3, Cipher is TLS_AES_256_GCM_SHA384"),
        ])
        func versionsAndCiphersAreWhatCurlNegotiates(_ words: [String], _ line: String) async throws {
            let (wire, curl) = try await both(words)
            #expect(wire.status == 0, "\(wire.errors)")
            #expect(Self.negotiated(wire) == line, "\(wire.text.prefix(200))")
            #expect(Self.negotiated(curl) == line)
        }

        @Test func curvesAreTheGroupsOffered() async throws {
            for (curves, offered) in [("P-384", "secp384r1"), ("X25519:P-256", "x25519:secp256r1")] {
                let (wire, curl) = try await both(["--curves", curves])
                #expect(wire.status == 0, "\(wire.errors)")
                #expect(wire.text.contains("Supported groups: \(offered)\n"), "\(wire.text)")
                #expect(curl.text.contains("Supported groups: \(offered)\n"))
            }
        }

        @Test(arguments: [
            (["--ciphers", "BOGUS"], "wire: (59) failed setting cipher list: BOGUS\n"),
            (["--tls13-ciphers", "BOGUS"], "wire: (59) failed setting TLS 1.3 cipher suite: BOGUS\n"),
            (["--curves", "X25519:BOGUS"], "wire: (59) failed setting curves list: 'X25519:BOGUS'\n"),
        ])
        func aListOpenSSLRefusesExits59(_ words: [String], _ line: String) async throws {
            let (wire, curl) = try await both(words)
            #expect(curl.status == 59)
            #expect(wire.status == 59 && wire.errors == line, "\(wire.errors)")
            // Over plain HTTP the lists are never used, as in curl.
            let plain = try await WireToolRunner.run(["get", "-sS"] + words + ["http://127.0.0.1:1/"])
            #expect(plain.status == 7, "\(plain.errors)")
        }

        @Test(arguments: [["--tls-max", "1.1"], ["--tls-max", "1.0"], ["--tlsv1.3", "--tls-max", "1.2"]])
        func aCeilingBelowTheFloorExits35(_ words: [String]) async throws {
            let (wire, curl) = try await both(words)
            #expect(curl.status == 35)
            #expect(wire.status == 35 && wire.errors.hasPrefix("wire: (35) ") && wire.output.isEmpty, "\(wire.errors)")
        }

        @Test func tlsMaxTakesCurlsVersionsOnly() async throws {
            let run = try await WireToolRunner.run(["get", "-sS", "--tls-max", "1.4", "https://localhost:1/"])
            let curl = try await WireToolRunner.run(program: CurlPeer.curl, ["-sS", "--tls-max", "1.4", "https://localhost:1/"])
            #expect(curl.status == 2)
            #expect(run.status == 2 && run.errors.hasPrefix("wire: (2) "), "\(run.errors)")
        }

        @Test func capathTrustsAHashedDirectory() async throws {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let hashed = folder.appendingPathComponent("hashed")
            let empty = folder.appendingPathComponent("empty")
            try FileManager.default.createDirectory(at: hashed, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: pki.rootCertificate, toPath: hashed.appendingPathComponent("root.pem").path)
            let rehash = try await WireToolRunner.run(program: URL(fileURLWithPath: "/usr/bin/openssl"), ["rehash", hashed.path])
            #expect(rehash.status == 0, "\(rehash.errors)")
            for (directory, status) in [
                (hashed.path, Int32(0)), (empty.path, 60), (empty.path + ":" + hashed.path, 0), ("/nonexistent", 60),
            ] {
                let (wire, curl) = try await both(["--capath", directory], cacert: false)
                #expect(curl.status == status, "\(directory)")
                #expect(wire.status == status, "\(directory): \(wire.errors)")
                if status == 0 { #expect(Self.negotiated(wire) != nil) }
            }
        }
    }
}
