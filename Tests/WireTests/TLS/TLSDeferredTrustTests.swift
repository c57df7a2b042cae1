import Foundation
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireTLS

/// The deferred trust evaluator (OpenSSL's verdict handed over instead of enforced) and chain verification with
/// anchors of the caller's choosing, the seams WireClient's security policy is built on.
extension IOSuite {
    @Suite struct TLSDeferredTrustTests {
        let pki: TestPKI

        init() throws {
            pki = try TestPKI.shared()
        }
        var harness: TLSClientServerTests { TLSClientServerTests(pki: pki) }

        @Test func theDeferredEvaluatorGetsTheVerdictInsteadOfTheHandshakeFailing() async throws {
            let seen = Lock<[TrustContext]>([])
            var tls = harness.trustingTestRoot()
            tls.deferredTrustEvaluation = { context in
                seen.withLock { $0.append(context) }
                return nil
            }
            // Untrusted: full verification would fail the handshake; the evaluator accepts it.
            try await harness.withServer(chain: pki.selfSignedChain, key: pki.selfSignedKey, client: tls) { pair in
                #expect(await TLSClientServerTests.tlsError(pair) == nil)
            }
            let context = try #require(seen.withLock { $0.first })
            #expect(context.verdict?.reason == .selfSigned && context.verification == .full && context.peerChain.count == 1)
            // Its error refuses the connection, as it is.
            tls.deferredTrustEvaluation = { context in
                context.verdict == nil ? TLSError(.trustRefused, "refused by the evaluator", host: context.host) : nil
            }
            try await harness.withServer(chain: pki.goodChain, key: pki.goodKey, client: tls) { pair in
                let error = try #require(await TLSClientServerTests.tlsError(pair))
                #expect(error.reason == .trustRefused && error.detail == "refused by the evaluator")
            }
        }

        @Test func chainsVerifyAgainstTheGivenAnchorsWithPartialChainsOnRequest() throws {
            let sent = CertificateChain(try Certificate.load(pemFile: pki.goodChain))
            let intermediate = try Certificate.load(pemFile: pki.intermediateCertificate)[0]
            let root = TrustRoots.pemFile(pki.rootCertificate)
            #expect(try sent.verified(anchors: root, host: "localhost").count == 3)
            #expect(throws: TLSError.self) { try sent.verified(anchors: root, host: "wrong.example") }
            #expect(throws: TLSError.self) { try sent.verified(anchors: .der([intermediate.der]), host: "localhost") }
            let partial = try sent.verified(anchors: .der([intermediate.der]), host: "localhost", acceptsPartialChain: true)
            #expect(partial.certificates == Array(sent.certificates))
            let selfSigned = CertificateChain(try Certificate.load(pemFile: pki.selfSignedChain))
            #expect(
                try selfSigned.verified(anchors: .der([selfSigned[0].der]), host: "127.0.0.1", acceptsPartialChain: true).count
                    == 1)
            let expired = CertificateChain(try Certificate.load(pemFile: pki.expiredChain))
            do {
                _ = try expired.verified(anchors: root, host: nil)
                Issue.record("an expired leaf verified")
            } catch {
                #expect(error.reason == .certificateExpired)
            }
            #expect(
                sent[0].isValid(forHost: "localhost") && sent[0].isValid(forHost: "::1")
                    && !sent[0].isValid(forHost: "wrong.example"))
        }
    }
}
