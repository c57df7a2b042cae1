import Foundation
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireTestSupport
import WireTLS

/// Session resumption under pinning and trust hooks, against `openssl s_server`: a resumed connection is judged as a
/// new one is, on the chain its session was made with, verified again for the connection that resumes it.
extension IOSuite {
    @Suite struct TLSResumedTrustTests {
        let pki: TestPKI

        init() throws {
            pki = try TestPKI.shared()
        }

        /// The good leaf and the intermediate, served by `openssl s_server`.
        private func withServer(_ body: (TestOpenSSLServer) async throws -> Void) async throws {
            let server = try TestOpenSSLServer(certificate: pki.goodLeaf, key: pki.goodKey, chain: pki.intermediateCertificate)
            defer { server.stop() }
            try await body(server)
        }

        /// Trusting the test root (or `roots`), TLS up to `version`.
        private func configuration(_ version: TLSVersion = .tls13, roots: TrustRoots? = nil) -> TLSConfiguration {
            var tls = TLSConfiguration()
            tls.trustRoots = roots ?? .pemFile(pki.rootCertificate)
            tls.maximumVersion = version
            return tls
        }

        /// A client with `tls`, for one body.
        private func withClient(_ tls: TLSConfiguration, _ body: (HTTPClient) async throws -> Void) async throws {
            var configuration = HTTPClientConfiguration()
            configuration.tls = tls
            let client = try HTTPClient(configuration: configuration)
            do {
                try await body(client)
            } catch {
                await client.shutdown()
                throw error
            }
            await client.shutdown()
        }

        /// Whether one GET with a new client of `tls` resumed a session.
        private func resumes(_ tls: TLSConfiguration, port: Int, host: String = "localhost") async throws -> Bool {
            var resumed = false
            try await withClient(tls) { client in
                resumed = try await fetch(client, port: port, host: host).info.isSessionResumed
            }
            return resumed
        }

        /// One GET on a new connection: s_server's status page (`New, …` or `Reused, …`) and the TLS record.
        private func fetch(_ client: HTTPClient, port: Int, host: String = "localhost") async throws
            -> (page: String, info: TransportSecurityInfo)
        {
            try await withTimeout {
                let response = try await client.execute(
                    HTTPClientRequest(url: "https://\(host):\(port)/", headers: ["connection": "close"]))
                let body = try await response.body.collect(upTo: 1 << 20)
                let info = try #require(response.metrics.snapshot.transportSecurity)
                return (String(decoding: body.readableBytesArray, as: UTF8.self), info)
            }
        }

        /// The TLS error a GET fails with, or nil (recording an issue) if it does not fail so.
        private func refusal(_ client: HTTPClient, port: Int) async -> TLSError? {
            do {
                let fetched = try await fetch(client, port: port)
                Issue.record("the connection was accepted: \(fetched.info)")
                return nil
            } catch {
                guard let tls = (error as? HTTPClientError)?.securityError as? TLSError else {
                    Issue.record("not a TLS failure: \(error)")
                    return nil
                }
                return tls
            }
        }

        /// The chain's pins: leaf, intermediate, root.
        private func chainPins() throws -> [String] {
            try Certificate.load(pemFile: pki.goodChain).map(\.pin) + [try Certificate.load(pemFile: pki.rootCertificate)[0].pin]
        }

        @Test(arguments: [TLSVersion.tls12, .tls13])
        func aPinnedClientResumesAndTheResumedConnectionIsCheckedAgain(_ version: TLSVersion) async throws {
            let pins = try chainPins()
            let seen = Seen()
            var tls = configuration(version)
            tls.pinning = .publicKey([pins[1]])
            tls.trustEvaluation = { context in
                seen.record(context)
                return .proceed
            }
            try await withServer { server in
                try await withClient(tls) { client in
                    for round in 0..<3 {
                        let (page, info) = try await fetch(client, port: server.port)
                        // Both sides say so: s_server's page, and the connection's record.
                        #expect(
                            page.contains(round == 0 ? "New, \(version)" : "Reused, \(version)"), "\(round): \(page.prefix(200))")
                        #expect(info.isSessionResumed == (round > 0), "\(round)")
                        #expect(info.protocolVersion == version.description)
                        #expect(info.peerChain.pins == Array(pins.prefix(2)), "\(round): the chain the server sent")
                        #expect(info.verifiedChain.pins == pins, "\(round): the chain verified")
                    }
                }
            }
            // The pins and the hook ran on every connection, on the same verified chain.
            let contexts = seen.contexts
            #expect(contexts.map(\.isSessionResumed) == [false, true, true])
            #expect(contexts.allSatisfy { $0.verifiedChain.pins == pins && $0.verdict == nil && $0.host == "localhost" })
        }

        @Test(arguments: [TLSVersion.tls12, .tls13])
        func aPinSetChangedSinceTheSessionWasMadeRefusesTheResumedConnection(_ version: TLSVersion) async throws {
            let pins = try chainPins()
            let otherPin = try Certificate.load(file: pki.otherRootDER)[0].pin
            let sessions = TLSSessionCache()
            var pinned = configuration(version)
            pinned.pinning = .publicKey([pins[1]])
            pinned.sessionCache = sessions
            var changed = pinned
            changed.pinning = .publicKey([otherPin])
            try await withServer { server in
                let first = try await resumes(pinned, port: server.port)
                #expect(!first)
                // The session is offered (pins are not part of its key), and the pins are checked again on the chain
                // verified for this connection.
                try await withClient(changed) { client in
                    let error = await refusal(client, port: server.port)
                    #expect(error?.reason == .pinMismatch, "\(String(describing: error))")
                    #expect(error?.pins == pins, "the mismatch lists the verified chain")
                }
                // The same session resumes again under the first pins.
                let again = try await resumes(pinned, port: server.port)
                #expect(again)
            }
        }

        @Test func aResumedSessionIsVerifiedAgainstTheRootsOfTheConnectionResumingIt() async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wire-roots-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let roots = folder + "/roots.pem"
            try FileManager.default.copyItem(atPath: pki.rootCertificate, toPath: roots)
            let sessions = TLSSessionCache()
            var tls = configuration(roots: .pemFile(roots))
            tls.sessionCache = sessions
            let seen = Seen()
            var deferred = tls
            // Deferred: the verdict reaches the evaluator, which shows what the resumed connection was judged on.
            deferred.deferredTrustEvaluation = { context in
                seen.record(context)
                return context.verdict
            }
            try await withServer { server in
                let first = try await resumes(tls, port: server.port)
                #expect(!first)
                // Same settings, so the same key; but the file now holds another root, and the session's chain no
                // longer verifies.
                try Data(contentsOf: URL(fileURLWithPath: pki.path("other.pem"))).write(to: URL(fileURLWithPath: roots))
                try await withClient(deferred) { client in
                    let error = await refusal(client, port: server.port)
                    #expect(error?.reason == .unknownIssuer, "\(String(describing: error))")
                }
                #expect(seen.contexts.map(\.isSessionResumed) == [true])
                #expect(seen.contexts.first?.peerChain.count == 2)
                // Enforced (not deferred), the resumed handshake itself fails with the verdict.
                try await withClient(tls) { client in
                    let error = await refusal(client, port: server.port)
                    #expect(error?.reason == .unknownIssuer, "\(String(describing: error))")
                }
            }
        }

        @Test func aSessionIsResumedOnlyUnderTheSettingsItWasMadeWith() async throws {
            let sessions = TLSSessionCache()
            var base = configuration()
            base.sessionCache = sessions
            let rootDER = try Certificate.load(pemFile: pki.rootCertificate)[0].der
            var otherRoots = base
            otherRoots.trustRoots = .der([rootDER])
            var unverifiedNames = base
            unverifiedNames.certificateVerification = .noHostnameVerification
            var withCertificate = base
            withCertificate.certificateChainFile = pki.clientChain
            withCertificate.privateKeyFile = pki.clientKey
            try await withServer { server in
                let first = try await resumes(base, port: server.port)
                #expect(!first)
                for (name, tls) in [
                    ("other roots", otherRoots), ("no host name check", unverifiedNames),
                    ("a client certificate", withCertificate),
                ] {
                    let resumed = try await resumes(tls, port: server.port)
                    #expect(!resumed, "\(name)")
                }
                // Another host name for the same server (no SNI): another key.
                let byAddress = try await resumes(base, port: server.port, host: "127.0.0.1")
                #expect(!byAddress)
                let again = try await resumes(base, port: server.port)
                #expect(again)
            }
        }
    }
}

/// The trust contexts an evaluator saw, in order.
private final class Seen: Sendable {
    private let recorded = Lock<[TrustContext]>([])

    func record(_ context: TrustContext) { recorded.withLock { $0.append(context) } }

    var contexts: [TrustContext] { recorded.withLock { $0 } }
}
