import Foundation
import Testing
import Wire
import WireTLS

/// `wire get --pinned-cert-dir DIR` (every certificate of a directory pinned) and `--pin-report-only` (a mismatch
/// warns on standard error and the transfer goes on) against Wire's TLS server, with the exit codes curl would give.
extension IOSuite {
    @Suite struct TLSToolPinTests {
        let pki: TestPKI

        init() throws {
            pki = try TestPKI.shared()
        }

        /// Pin directories made for one test: `root` (the test root as PEM and an unrelated root as DER, beside a
        /// text file that is skipped), `other` (the unrelated root only), `empty`, and `missing` (never made).
        struct Directories {
            let folder: String
            var root: String { folder + "/root" }
            var other: String { folder + "/other" }
            var empty: String { folder + "/empty" }
            var missing: String { folder + "/missing" }

            init(pki: TestPKI) throws {
                folder = FileManager.default.temporaryDirectory.appendingPathComponent("wire-pin-dirs-\(UUID().uuidString)").path
                let files = FileManager.default
                for directory in [folder + "/root", folder + "/other", folder + "/empty"] {
                    try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
                }
                try files.copyItem(atPath: pki.rootCertificate, toPath: folder + "/root/root.pem")
                try files.copyItem(atPath: pki.otherRootDER, toPath: folder + "/root/other.cer")
                try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: folder + "/root/README.txt"))
                try files.copyItem(atPath: pki.otherRootDER, toPath: folder + "/other/other.der")
            }

            func remove() { try? FileManager.default.removeItem(atPath: folder) }
        }

        /// Runs `wire get -s arguments https://localhost:PORT/` against a server with the good chain, for each list of
        /// arguments in turn, and hands each run to `check` with its arguments.
        func get(_ runs: [[String]], check: @escaping @Sendable ([String], WireToolRunner.Run) throws -> Void) async throws {
            try await TLSHostilePeerTests.warmUpProcessWatching()
            let pki = self.pki
            try await ClientServer.run(
                seconds: 30,
                configure: { configuration in
                    configuration.tls = TLSServerConfiguration(certificateChainFile: pki.goodChain, privateKeyFile: pki.goodKey)
                },
                handler: { _, response in
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "pinned body\n"))
                }
            ) { pair in
                for arguments in runs {
                    try check(
                        arguments, try await WireToolRunner.run(["get", "-sS"] + arguments + ["https://localhost:\(pair.port)/"]))
                }
            }
        }

        @Test func aDirectoryHoldingTheRootPinsIt() async throws {
            let directories = try Directories(pki: pki)
            defer { directories.remove() }
            try await get([["--cacert", pki.rootCertificate, "--pinned-cert-dir", directories.root]]) { _, run in
                #expect(run.status == 0 && run.text == "pinned body\n", "\(run.errors)")
                #expect(run.errors.isEmpty, "\(run.errors)")
            }
        }

        @Test func aDirectoryOfAnUnrelatedCertificateIsAPinMismatch() async throws {
            let directories = try Directories(pki: pki)
            defer { directories.remove() }
            let leafPin = try Certificate.load(pemFile: pki.goodChain)[0].pin
            try await get([["--cacert", pki.rootCertificate, "--pinned-cert-dir", directories.other]]) { _, run in
                #expect(run.status == 90 && run.text.isEmpty, "\(run.errors)")
                #expect(run.errors.hasPrefix("wire: (90) ") && run.errors.contains(leafPin), "\(run.errors)")
            }
        }

        @Test func anEmptyOrMissingDirectoryIsALocalCertificateProblem() async throws {
            let directories = try Directories(pki: pki)
            defer { directories.remove() }
            let (empty, missing) = (directories.empty, directories.missing)
            try await get([["--pinned-cert-dir", empty], ["--pinned-cert-dir", missing]]) { arguments, run in
                #expect(run.status == 58 && run.text.isEmpty, "\(arguments): \(run.errors)")
                let message = arguments[1] == empty ? "\(empty) holds no readable certificate" : "cannot read \(missing)"
                #expect(run.errors.hasPrefix("wire: (58) ") && run.errors.contains(message), "\(arguments): \(run.errors)")
            }
        }

        @Test func aDirectoryAndAFileArePinnedTogether() async throws {
            let directories = try Directories(pki: pki)
            defer { directories.remove() }
            // The directory alone does not match; the file does.
            try await get([
                ["--cacert", pki.rootCertificate, "--pinned-cert-dir", directories.other, "--pin-cert", pki.intermediateDER]
            ]) { _, run in
                #expect(run.status == 0 && run.text == "pinned body\n", "\(run.errors)")
            }
        }

        @Test func reportOnlyWarnsOnAMismatchAndTheTransferGoesOn() async throws {
            let directories = try Directories(pki: pki)
            defer { directories.remove() }
            let leafPin = try Certificate.load(pemFile: pki.goodChain)[0].pin
            let pins = [
                ["--pin", "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="], ["--pinned-cert-dir", directories.other],
                ["--pin-cert", pki.otherRootDER],
            ]
            try await get(pins.map { ["--cacert", pki.rootCertificate, "--pin-report-only"] + $0 }) { arguments, run in
                #expect(run.status == 0 && run.text == "pinned body\n", "\(arguments): \(run.errors)")
                let lines = run.errors.split(separator: "\n")
                #expect(
                    lines.count == 1 && lines[0].hasPrefix("wire: pin mismatch (report-only): ") && lines[0].contains(leafPin),
                    "\(arguments): \(run.errors)")
            }
        }

        @Test func reportOnlyIsSilentWhenThePinMatches() async throws {
            let directories = try Directories(pki: pki)
            defer { directories.remove() }
            try await get([["--cacert", pki.rootCertificate, "--pin-report-only", "--pinned-cert-dir", directories.root]]) {
                _, run in
                #expect(run.status == 0 && run.text == "pinned body\n" && run.errors.isEmpty, "\(run.errors)")
            }
        }

        @Test func reportOnlyStillVerifiesTheChain() async throws {
            // Without --cacert the test root is unknown: report-only relaxes the pins, never the verification.
            let leafPin = try Certificate.load(pemFile: pki.goodChain)[0].pin
            try await get([["--pin-report-only", "--pin", leafPin]]) { _, run in
                #expect(run.status == 60 && run.errors.contains("unknown_issuer"), "\(run.errors)")
            }
        }

        @Test func reportOnlyNeedsAPin() async throws {
            let run = try await WireToolRunner.run(["get", "--pin-report-only", "https://localhost:1/"])
            #expect(run.status == 2 && run.errors.contains("--pin-report-only needs"), "\(run.errors)")
            let insecure = try await WireToolRunner.run([
                "get", "-k", "--pin-report-only", "--pin", "sha256/" + String(repeating: "A", count: 43) + "=",
                "https://localhost:1/",
            ])
            #expect(insecure.status == 2 && insecure.errors.contains("cannot be combined with -k"), "\(insecure.errors)")
        }
    }
}
