import Foundation
import Testing
import Wire
import WireTLS

/// `SSLKEYLOGFILE`: the `wire` tool as client and as server writes its TLS secrets in the NSS key log format, and
/// `tshark` from Debian decrypts a live loopback capture of the exchange with them. The variable is read once per
/// process, so each case runs the tool as a child with the variable set.
extension IOSuite {
    @Suite struct TLSKeyLogTests {
        let pki: TestPKI

        init() throws {
            pki = try TestPKI.shared()
        }

        /// Runs `command` while tshark captures loopback traffic to `port` and decrypts it with `keyLog`
        /// (`Resources/tls_capture.py`); returns the command's status and the first decrypted request's target ("" when
        /// tshark decrypted none within 30 s).
        func captured(port: Int, keyLog: String, _ command: [String], environment: [String: String] = [:]) async throws
            -> (status: Int32, target: String, errors: String)
        {
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark") else {
                Issue.record("tshark is not installed (apt-get install tshark): the key log cannot be checked")
                return (-1, "", "")
            }
            let run = try await WireToolRunner.run(
                program: URL(fileURLWithPath: "/usr/bin/python3"),
                ["\(testResources)/tls_capture.py", String(port), keyLog, "--"] + command, seconds: 60,
                environment: environment)
            return (run.status, run.text.trimmingCharacters(in: .newlines), run.errors)
        }

        /// The labels of the key log's lines; every line but a comment must be `LABEL <64 hex> <hex>`.
        func labels(in keyLog: String) throws -> Set<String> {
            let text = try String(contentsOfFile: keyLog, encoding: .utf8)
            var labels: Set<String> = []
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                let parts = line.split(separator: " ")
                #expect(parts.count == 3, "\(line)")
                #expect(parts.count == 3 && parts[1].count == 64 && parts[1].allSatisfy(\.isHexDigit), "\(line)")
                if let label = parts.first { labels.insert(String(label)) }
            }
            return labels
        }

        func mode(of path: String) throws -> Int {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            return (attributes[.posixPermissions] as? Int) ?? -1
        }

        @Test func wireGetLogsTheSecretsTsharkDecryptsWith() async throws {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let keyLog = folder.appendingPathComponent("keys.log").path
            let pki = self.pki
            try await ClientServer.run(
                seconds: 60,
                configure: { configuration in
                    configuration.tls = TLSServerConfiguration(certificateChainFile: pki.goodChain, privateKeyFile: pki.goodKey)
                },
                handler: { _, response in
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "secret\n"))
                }
            ) { pair in
                let (status, target, errors) = try await captured(
                    port: pair.port, keyLog: keyLog,
                    [
                        WireToolRunner.executable.path, "get", "-s", "--cacert", pki.rootCertificate,
                        "https://localhost:\(pair.port)/client-side-key-log",
                    ],
                    environment: ["SSLKEYLOGFILE": keyLog])
                #expect(status == 0, "\(errors)")
                #expect(target == "/client-side-key-log")
            }
            #expect(try mode(of: keyLog) == 0o600)
            let labels = try labels(in: keyLog)
            let expected: Set = ["CLIENT_HANDSHAKE_TRAFFIC_SECRET", "CLIENT_TRAFFIC_SECRET_0", "SERVER_TRAFFIC_SECRET_0"]
            #expect(labels.isSuperset(of: expected))
        }

        @Test func wireServeLogsTheSecretsOfWhatItAccepts() async throws {
            let folder = try WireToolRunner.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let keyLog = folder.appendingPathComponent("server-keys.log").path
            // A file that exists keeps its contents and its mode: lines are appended.
            try Data("# kept\n".utf8).write(to: URL(fileURLWithPath: keyLog))
            try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: keyLog)
            let serve = try TestProcess(
                WireToolRunner.executable.path,
                [
                    "serve", "--hello", "--port", "0", "--loops", "1", "--tls-cert", pki.goodChain, "--tls-key", pki.goodKey,
                ],
                environment: ["SSLKEYLOGFILE": keyLog])
            defer { serve.stop() }
            let line = try await serve.firstLine()
            let port = try #require(line.split(separator: ":").last.flatMap { Int($0) })
            // TLS 1.3, then 1.2, whose secret is one CLIENT_RANDOM line.
            for (name, versions) in [("tls13", ["--tlsv1.3"]), ("tls12", ["--tls-max", "1.2"])] {
                let (status, target, errors) = try await captured(
                    port: port, keyLog: keyLog,
                    ["/usr/bin/curl", "-sS", "--max-time", "20", "--cacert", pki.rootCertificate] + versions + [
                        "https://localhost:\(port)/server-side-\(name)"
                    ])
                #expect(status == 0, "\(errors)")
                #expect(target == "/server-side-\(name)")
            }
            #expect(try mode(of: keyLog) == 0o640)
            let text = try String(contentsOfFile: keyLog, encoding: .utf8)
            #expect(text.hasPrefix("# kept\n"))
            let labels = try labels(in: keyLog)
            #expect(labels.isSuperset(of: ["SERVER_HANDSHAKE_TRAFFIC_SECRET", "SERVER_TRAFFIC_SECRET_0", "CLIENT_RANDOM"]))
        }

        @Test func aKeyLogThatCannotBeOpenedIsReportedAndTheRequestGoesOn() async throws {
            let pki = self.pki
            try await ClientServer.run(
                seconds: 30,
                configure: { configuration in
                    configuration.tls = TLSServerConfiguration(certificateChainFile: pki.goodChain, privateKeyFile: pki.goodKey)
                },
                handler: { _, response in
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "fine\n"))
                }
            ) { pair in
                let run = try await WireToolRunner.run(
                    ["get", "-s", "--cacert", pki.rootCertificate, "https://localhost:\(pair.port)/"],
                    environment: ["SSLKEYLOGFILE": "/nonexistent-directory/keys.log"])
                #expect(run.status == 0, "\(run.errors)")
                #expect(run.text == "fine\n")
                #expect(run.errors.contains("SSLKEYLOGFILE: cannot open /nonexistent-directory/keys.log"), "\(run.errors)")
            }
        }
    }
}
