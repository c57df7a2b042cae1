import Foundation
import Testing
import Wire
import WireTLS

/// Wire's HTTPS client against Wire's HTTPS server in one process, with certificates made by the
/// `openssl` tool for each verification case.
extension IOSuite {
    @Suite struct TLSClientServerTests {
        let pki: TestPKI

        init() throws {
            pki = try TestPKI.shared()
        }

        /// A harness for other suites that already hold the PKI.
        init(pki: TestPKI) {
            self.pki = pki
        }

        /// A client configuration trusting the test root.
        func trustingTestRoot() -> TLSConfiguration {
            var tls = TLSConfiguration()
            tls.trustRoots = .pemFile(pki.rootCertificate)
            return tls
        }

        /// Runs `body` against a server presenting `chain`/`key`, with a client using `tls`.
        func withServer(
            chain: String, key: String, client tls: TLSConfiguration,
            configureServer: @escaping @Sendable (inout TLSServerConfiguration) -> Void = { _ in },
            _ body: @escaping @Sendable (ClientServer) async throws -> Void
        ) async throws {
            var clientConfiguration = HTTPClientConfiguration()
            clientConfiguration.tls = tls
            clientConfiguration.connectTimeout = .seconds(5)
            try await ClientServer.run(
                seconds: 20, client: clientConfiguration,
                configure: { configuration in
                    var serverTLS = TLSServerConfiguration(certificateChainFile: chain, privateKeyFile: key)
                    configureServer(&serverTLS)
                    configuration.tls = serverTLS
                },
                handler: { request, response in
                    // The handler sees the client's certificate under mutual TLS; /client insists on one.
                    let clientSubject = request.transportSecurity?.peerChain.leaf?.subject
                    if request.head.target == "/client" && clientSubject != "CN=Wire Test Client" {
                        try await response.respond(HTTPResponseHead(status: HTTPStatus(code: 403)))
                        return
                    }
                    try await response.respond(
                        HTTPResponseHead(status: .ok), body: ByteBuffer(string: "secure \(request.head.target)\n"))
                }, body)
        }

        /// The TLS error a GET of `url` fails with, or nil when it succeeds.
        static func tlsError(_ pair: ClientServer, host: String = "localhost", path: String = "/") async -> TLSError? {
            do {
                let response = try await pair.client.execute(HTTPClientRequest(url: "https://\(host):\(pair.port)\(path)"))
                _ = try await response.body.collect(upTo: 1 << 20)
                #expect(response.status.code == 200)
                return nil
            } catch {
                guard let tlsError = (error as? HTTPClientError)?.securityError as? TLSError else {
                    Issue.record("not a TLS failure: \(error)")
                    return nil
                }
                return tlsError
            }
        }

        @Test func getOverTLSReportsVersionALPNAndChains() async throws {
            try await withServer(chain: pki.goodChain, key: pki.goodKey, client: trustingTestRoot()) { pair in
                let response = try await pair.client.execute(HTTPClientRequest(url: "https://localhost:\(pair.port)/hello"))
                let body = try await response.body.collect(upTo: 1 << 20)
                #expect(response.status.code == 200)
                #expect(String(decoding: body.readableBytesArray, as: UTF8.self) == "secure /hello\n")
                let info = try #require(response.metrics.snapshot.transportSecurity)
                #expect(info.protocolVersion == "TLSv1.3")
                #expect(info.applicationProtocol == "http/1.1")
                #expect(!info.cipherSuite.isEmpty)
                #expect(info.peerChain.map(\.subject) == ["CN=localhost", "O=Wire Tests,CN=Wire Test Intermediate"])
                #expect(info.verifiedChain.count == 3)
                #expect(info.verifiedChain.last?.subject == "CN=Wire Test Root,O=Wire Tests")
                let leaf = try #require(info.peerChain.leaf)
                #expect(leaf.dnsNames == ["localhost"])
                #expect(leaf.ipAddresses == ["127.0.0.1", "::1"])
                #expect(leaf.pin.hasPrefix("sha256/") && leaf.pin.count == 51)
                #expect(response.metrics.snapshot.timings.secureConnected != nil)
            }
        }

        @Test func ipAddressIsVerifiedAgainstIPSubjectAltName() async throws {
            try await withServer(chain: pki.goodChain, key: pki.goodKey, client: trustingTestRoot()) { pair in
                #expect(await Self.tlsError(pair, host: "127.0.0.1") == nil)
            }
            try await withServer(chain: pki.wrongHostChain, key: pki.wrongHostKey, client: trustingTestRoot()) { pair in
                let error = await Self.tlsError(pair, host: "127.0.0.1")
                #expect(error?.reason == .ipAddressMismatch)
                #expect(error?.description.contains("127.0.0.1") == true)
            }
        }

        @Test(arguments: [
            ("expired", TLSError.Reason.certificateExpired, "CN=expired.localhost"),
            ("future", .certificateNotYetValid, "CN=future.localhost"),
            ("wronghost", .hostnameMismatch, "CN=wrong.example"),
            ("selfsigned", .selfSigned, "O=Self Signed,CN=localhost"),
            ("untrusted", .selfSignedInChain, "CN=Wire Test Other Root"),
            ("leafonly", .unknownIssuer, "CN=localhost"),
        ])
        func verificationFailuresAreDistinct(_ name: String, _ reason: TLSError.Reason, _ subject: String) async throws {
            let (chain, key) =
                switch name {
                case "expired": (pki.expiredChain, pki.expiredKey)
                case "future": (pki.notYetValidChain, pki.notYetValidKey)
                case "wronghost": (pki.wrongHostChain, pki.wrongHostKey)
                case "selfsigned": (pki.selfSignedChain, pki.selfSignedKey)
                case "untrusted": (pki.untrustedChain, pki.untrustedKey)
                default: (pki.leafOnlyChain, pki.goodKey)
                }
            try await withServer(chain: chain, key: key, client: trustingTestRoot()) { pair in
                let error = try #require(await Self.tlsError(pair))
                #expect(error.reason == reason, "\(error)")
                #expect(error.subject?.contains(subject) == true, "\(error)")
                if reason == .hostnameMismatch { #expect(error.detail.contains("localhost")) }
            }
        }

        @Test func verificationSwitches() async throws {
            var noHost = trustingTestRoot()
            noHost.certificateVerification = .noHostnameVerification
            try await withServer(chain: pki.wrongHostChain, key: pki.wrongHostKey, client: noHost) { pair in
                #expect(await Self.tlsError(pair) == nil)
            }
            // Skipping the name check does not skip the chain.
            try await withServer(chain: pki.selfSignedChain, key: pki.selfSignedKey, client: noHost) { pair in
                #expect(await Self.tlsError(pair)?.reason == .selfSigned)
            }
            var none = trustingTestRoot()
            none.certificateVerification = .none
            try await withServer(chain: pki.expiredChain, key: pki.expiredKey, client: none) { pair in
                #expect(await Self.tlsError(pair) == nil)
            }
        }

        @Test func trustRootsAsDERBytesAndSystemStore() async throws {
            let root = try #require(try Certificate.load(pemFile: pki.rootCertificate).first)
            var tls = TLSConfiguration()
            tls.trustRoots = .der([root.der])
            try await withServer(chain: pki.goodChain, key: pki.goodKey, client: tls) { pair in
                #expect(await Self.tlsError(pair) == nil)
            }
            // The system store does not know the test root.
            try await withServer(chain: pki.goodChain, key: pki.goodKey, client: TLSConfiguration()) { pair in
                #expect(await Self.tlsError(pair)?.reason == .unknownIssuer)
            }
        }
    }
}
