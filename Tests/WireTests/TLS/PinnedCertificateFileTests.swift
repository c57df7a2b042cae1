import Foundation
import Testing
import Wire
import WireTLS

/// Pinned certificates read from files whose encoding is told from their content: DER (`.cer`),
/// PEM with one or several certificates, and files that are neither.
extension IOSuite {
    @Suite struct PinnedCertificateFileTests {
        let pki: TestPKI

        init() throws {
            pki = try TestPKI.shared()
        }
        var harness: TLSClientServerTests { TLSClientServerTests(pki: pki) }

        @Test func derAndPEMFilesReadTheSameCertificate() throws {
            let pem = try Certificate.load(file: pki.intermediateCertificate)
            let der = try Certificate.load(file: pki.intermediateDER)
            #expect(pem.count == 1)
            #expect(der == pem)
            #expect(der == (try Certificate.load(pemFile: pki.intermediateCertificate)))
            let both = try Certificate.load(file: pki.otherRootThenIntermediate)
            #expect(both.count == 2)
            #expect(both[1] == pem[0])
            #expect(both[0].subject.contains("Other Root"))
        }

        @Test(arguments: ["der", "pem", "second of two"])
        func pinnedFilePassesARealHandshake(_ kind: String) async throws {
            let file =
                switch kind {
                case "der": pki.intermediateDER
                case "pem": pki.intermediateCertificate
                default: pki.otherRootThenIntermediate
                }
            var tls = harness.trustingTestRoot()
            tls.pinning = try .certificates(inFiles: [file])
            try await harness.withServer(chain: pki.goodChain, key: pki.goodKey, client: tls) { pair in
                #expect(await TLSClientServerTests.tlsError(pair) == nil)
            }
        }

        @Test func pinnedDERFileOfAnotherChainRefusesTheHandshake() async throws {
            var tls = harness.trustingTestRoot()
            tls.pinning = try .certificates(inFiles: [pki.otherRootDER])
            try await harness.withServer(chain: pki.goodChain, key: pki.goodKey, client: tls) { pair in
                let error = try #require(await TLSClientServerTests.tlsError(pair))
                #expect(error.reason == .pinMismatch)
            }
        }

        /// Contents that are not certificates, and the words the error must contain.
        static let unusable: [(name: String, contents: [UInt8], message: String)] = [
            ("text", Array("a shopping list\n".utf8), "neither a PEM certificate"),
            ("empty", [], "is empty"),
            ("SEQUENCE that is no certificate", [0x30, 0x03, 0x02, 0x01, 0x05], "is not a DER certificate"),
            (
                "PEM with broken base64", Array("-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n".utf8),
                "PEM certificate 1 of"
            ),
            (
                "PEM with only a key block", Array("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8),
                "holds no CERTIFICATE block"
            ),
        ]

        @Test func unusableContentsAreTypedErrorsNamingTheFile() throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wire-pins-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            var files = Self.unusable.enumerated().map { index, entry in
                (path: "\(folder)/\(index).bin", entry.contents, entry.message)
            }
            // A DER certificate followed by stray bytes.
            let der = try Data(contentsOf: URL(fileURLWithPath: pki.intermediateDER))
            files.append(("\(folder)/trailing.cer", Array(der) + [0x0A], "1 bytes after its DER certificate"))
            // The second certificate of a PEM file is cut short.
            let pem = try String(contentsOfFile: pki.otherRootThenIntermediate, encoding: .utf8)
            files.append(("\(folder)/cut.pem", Array(pem.utf8.dropLast(40)), "PEM certificate 2 of"))
            for file in files {
                try Data(file.1).write(to: URL(fileURLWithPath: file.path))
                #expect(throws: TLSError.self) { try Certificate.load(file: file.path) }
                do {
                    _ = try CertificatePinning.certificates(inFiles: [pki.intermediateDER, file.path])
                    Issue.record("\(file.path) was accepted")
                } catch {
                    #expect(error.reason == .localCertificate)
                    #expect(error.detail.contains(file.path), "\(error)")
                    #expect(error.detail.contains(file.2), "\(error)")
                }
            }
            do {
                _ = try Certificate.load(file: "\(folder)/missing.cer")
                Issue.record("a missing file was accepted")
            } catch {
                #expect(error.detail.contains("cannot read \(folder)/missing.cer"), "\(error)")
            }
            #expect(try Certificate.decode(Array(der)).count == 1)
        }
    }
}
