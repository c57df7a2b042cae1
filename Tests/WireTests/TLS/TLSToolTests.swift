import Foundation
import Testing
import Wire
import WireTLS

/// `wire get` over TLS against Wire's server: curl's exit codes (35, 58, 60, 90) with one line
/// naming the cause, the switches that relax verification, pins, and `wire serve --tls-…` with curl.
extension IOSuite {
    @Suite struct TLSToolTests {
        let pki: TestPKI

        init() throws {
            pki = try TestPKI.shared()
        }

        /// One command-line case: the server's certificate, the tool's TLS switches, what it must exit with and say.
        struct Case: Sendable, CustomTestStringConvertible {
            var name: String
            var server: String
            var arguments: [String]
            var status: Int32
            var message: String
            var testDescription: String { name }
        }

        static let cases: [Case] = [
            Case(name: "trusted root", server: "good", arguments: ["--cacert", "{root}"], status: 0, message: ""),
            Case(
                name: "system store does not know the root", server: "good", arguments: [], status: 60, message: "unknown_issuer"),
            Case(name: "expired", server: "expired", arguments: ["--cacert", "{root}"], status: 60, message: "has expired"),
            Case(
                name: "not yet valid", server: "future", arguments: ["--cacert", "{root}"], status: 60, message: "not yet valid"),
            Case(
                name: "wrong host", server: "wronghost", arguments: ["--cacert", "{root}"], status: 60,
                message: "host name localhost"),
            Case(
                name: "wrong host, name check off", server: "wronghost", arguments: ["--cacert", "{root}", "--no-verify-host"],
                status: 0, message: ""),
            Case(
                name: "self-signed", server: "selfsigned", arguments: ["--cacert", "{root}"], status: 60, message: "self_signed"),
            Case(name: "self-signed with -k", server: "selfsigned", arguments: ["-k"], status: 0, message: ""),
            Case(
                name: "untrusted root", server: "untrusted", arguments: ["--cacert", "{root}"], status: 60,
                message: "self_signed_in_chain"),
            Case(
                name: "missing intermediate", server: "leafonly", arguments: ["--cacert", "{root}"], status: 60,
                message: "unknown_issuer"),
            Case(
                name: "leaf pin", server: "good", arguments: ["--cacert", "{root}", "--pin", "{leafpin}"], status: 0, message: ""),
            Case(
                name: "intermediate pin", server: "good", arguments: ["--cacert", "{root}", "--pin", "{intermediatepin}"],
                status: 0, message: ""),
            Case(
                name: "wrong pin", server: "good",
                arguments: ["--cacert", "{root}", "--pin", "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="],
                status: 90, message: "{leafpin}"),
            Case(
                name: "intermediate pin without verification", server: "good", arguments: ["-k", "--pin", "{intermediatepin}"],
                status: 90, message: "{leafpin}"),
            Case(
                name: "certificate pin", server: "good", arguments: ["--cacert", "{root}", "--pin-cert", "{intermediate}"],
                status: 0, message: ""),
            Case(
                name: "DER certificate pin", server: "good",
                arguments: ["--cacert", "{root}", "--pin-cert", "{intermediateder}"],
                status: 0, message: ""),
            Case(
                name: "DER certificate pin of another chain", server: "good",
                arguments: ["--cacert", "{root}", "--pin-cert", "{otherder}"],
                status: 90, message: "{leafpin}"),
            Case(
                name: "PEM pin file whose second certificate matches", server: "good",
                arguments: ["--cacert", "{root}", "--pin-cert", "{otherthenintermediate}"], status: 0, message: ""),
            Case(
                name: "pin file neither PEM nor DER", server: "good",
                arguments: ["--cacert", "{root}", "--pin-cert", "{garbage}"],
                status: 58, message: "{garbage} is neither a PEM certificate"),
            Case(
                name: "unreadable client certificate", server: "good",
                arguments: ["--cacert", "{root}", "--cert", "/nonexistent.pem", "--key", "{clientkey}"],
                status: 58, message: "/nonexistent.pem"),
            Case(
                name: "unreadable pinned certificate", server: "good", arguments: ["--pin-cert", "/nonexistent.pem"], status: 58,
                message: "/nonexistent.pem"),
            Case(
                name: "version floor above the server's ceiling", server: "tls12",
                arguments: ["--cacert", "{root}", "--tlsv1.3"],
                status: 35, message: "protocol_version"),
            Case(
                name: "client certificate accepted", server: "mtls",
                arguments: ["--cacert", "{root}", "--cert", "{clientchain}", "--key", "{clientkey}"], status: 0, message: ""),
        ]

        func substitute(_ text: String, pins: [String: String]) -> String {
            var text = text
            let values = [
                "{root}": pki.rootCertificate, "{intermediate}": pki.intermediateCertificate, "{clientchain}": pki.clientChain,
                "{clientkey}": pki.clientKey, "{intermediateder}": pki.intermediateDER, "{otherder}": pki.otherRootDER,
                "{otherthenintermediate}": pki.otherRootThenIntermediate,
                "{garbage}": pki.notACertificate,
            ].merging(pins) { a, _ in a }
            for (key, value) in values { text = text.replacingOccurrences(of: key, with: value) }
            return text
        }

        @Test(arguments: cases)
        func exitStatusNamesTheCause(_ testCase: Case) async throws {
            try await TLSHostilePeerTests.warmUpProcessWatching()
            let chain = try Certificate.load(pemFile: pki.goodChain)
            let pins = ["{leafpin}": chain[0].pin, "{intermediatepin}": chain[1].pin]
            let (certificate, key): (String, String) =
                switch testCase.server {
                case "expired": (pki.expiredChain, pki.expiredKey)
                case "future": (pki.notYetValidChain, pki.notYetValidKey)
                case "wronghost": (pki.wrongHostChain, pki.wrongHostKey)
                case "selfsigned": (pki.selfSignedChain, pki.selfSignedKey)
                case "untrusted": (pki.untrustedChain, pki.untrustedKey)
                case "leafonly": (pki.leafOnlyChain, pki.goodKey)
                default: (pki.goodChain, pki.goodKey)
                }
            let clientCAs = pki.clientCAs
            let arguments = testCase.arguments.map { substitute($0, pins: pins) }
            let message = substitute(testCase.message, pins: pins)
            try await ClientServer.run(
                seconds: 30,
                configure: { configuration in
                    var tls = TLSServerConfiguration(certificateChainFile: certificate, privateKeyFile: key)
                    if testCase.server == "tls12" { tls.maximumVersion = .tls12 }
                    if testCase.server == "mtls" { tls.clientCertificates = .required(caFile: clientCAs) }
                    configuration.tls = tls
                },
                handler: { _, response in
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "over tls\n"))
                }
            ) { pair in
                let run = try await WireToolRunner.run(["get", "-sS"] + arguments + ["https://localhost:\(pair.port)/"])
                #expect(run.status == testCase.status, "\(run.errors)")
                if testCase.status == 0 {
                    #expect(run.text == "over tls\n")
                } else {
                    #expect(run.errors.hasPrefix("wire: (\(testCase.status)) "), "\(run.errors)")
                    #expect(run.errors.contains(message), "\(run.errors)")
                    #expect(run.errors.split(separator: "\n").count == 1, "\(run.errors)")
                }
            }
        }

        @Test func verboseShowsTheChainWithPins() async throws {
            try await TLSHostilePeerTests.warmUpProcessWatching()
            let chain = try Certificate.load(pemFile: pki.goodChain)
            let pki = self.pki
            try await ClientServer.run(
                seconds: 30,
                configure: { configuration in
                    configuration.tls = TLSServerConfiguration(certificateChainFile: pki.goodChain, privateKeyFile: pki.goodKey)
                },
                handler: { _, response in
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "v\n"))
                }
            ) { pair in
                let run = try await WireToolRunner.run([
                    "get", "-v", "--cacert", pki.rootCertificate, "https://127.0.0.1:\(pair.port)/",
                ])
                #expect(run.status == 0, "\(run.errors)")
                #expect(run.errors.contains("* TLS: TLSv1.3 "), "\(run.errors)")
                #expect(run.errors.contains("ALPN http/1.1"))
                #expect(run.errors.contains("*  0 subject: CN=localhost"))
                #expect(run.errors.contains("*    pin: \(chain[0].pin)"))
                #expect(run.errors.contains("*    pin: \(chain[1].pin)"))
                #expect(run.errors.contains("*    valid: 2020-01-01 00:00:00Z to 2099-12-31 00:00:00Z"))
                #expect(run.errors.contains("tls_connected="))
            }
        }

        @Test func wireServeOverTLSWithClientCertificatesAgainstCurl() async throws {
            try await TLSHostilePeerTests.warmUpProcessWatching()
            let serve = try TestProcess(
                WireToolRunner.executable.path,
                [
                    "serve", "--hello", "--port", "0", "--loops", "1", "--tls-cert", pki.goodChain, "--tls-key", pki.goodKey,
                    "--client-ca", pki.clientCAs,
                ])
            defer { serve.stop() }
            let line = try await serve.firstLine()
            #expect(line.hasPrefix("listening on https://127.0.0.1:"))
            let port = try #require(line.split(separator: ":").last.flatMap { Int($0) })
            let accepted = try await runCurl([
                "-sS", "--cacert", pki.rootCertificate, "--cert", pki.clientChain, "--key", pki.clientKey,
                "https://localhost:\(port)/",
            ])
            #expect(accepted.status == 0, "\(accepted.stderr)")
            #expect(accepted.stdout == "Hello, World!")
            let refused = try await runCurl(["-sS", "--cacert", pki.rootCertificate, "https://localhost:\(port)/"])
            #expect(refused.status != 0)
            let tool = try await WireToolRunner.run([
                "get", "--cacert", pki.rootCertificate, "--cert", pki.clientChain, "--key", pki.clientKey,
                "https://localhost:\(port)/",
            ])
            #expect(tool.status == 0, "\(tool.errors)")
            #expect(tool.text == "Hello, World!")
        }

        /// `--tls-resumption tickets` issues stateless TLS 1.2 tickets (the default keeps sessions and issues none),
        /// and the flag needs a certificate.
        @Test func wireServeResumesWithTicketsWhenAsked() async throws {
            try await TLSHostilePeerTests.warmUpProcessWatching()
            for (mode, issuesTicket) in [("tickets", true), ("cache", false)] {
                let serve = try TestProcess(
                    WireToolRunner.executable.path,
                    [
                        "serve", "--hello", "--port", "0", "--loops", "1", "--tls-cert", pki.goodChain, "--tls-key",
                        pki.goodKey, "--tls-resumption", mode,
                    ])
                defer { serve.stop() }
                let line = try await serve.firstLine()
                let port = try #require(line.split(separator: ":").last.flatMap { Int($0) })
                let run = try await WireToolRunner.run(
                    program: URL(fileURLWithPath: "/usr/bin/openssl"),
                    ["s_client", "-connect", "127.0.0.1:\(port)", "-tls1_2", "-ign_eof"],
                    input: "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", seconds: 10)
                #expect(run.text.contains("Hello, World!"), "\(run.text)")
                #expect(
                    run.text.contains("TLS session ticket lifetime hint: 300 (seconds)") == issuesTicket, "\(mode): \(run.text)")
            }
            for mode in ["cache", "off"] {
                let refused = try await WireToolRunner.run(["serve", "--hello", "--tls-resumption", mode])
                #expect(refused.status != 0)
                #expect(refused.errors.contains("--tls-resumption needs --tls-cert and --tls-key"), "\(refused.errors)")
            }
        }
    }
}
