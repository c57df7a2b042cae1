import Foundation
import Synchronization
import Testing
import WireTestSupport
@_spi(Locking) import Wire
import WireClient
import WireTLS

/// The security policy and the server-trust hook on real TLS connections: Wire's TLS server on loopback serving
/// chains made with the openssl tool, a manager whose session trusts the test roots.
@Suite(.sharedIO(minutes: 1))
struct SecurityPolicySessionTests {
    /// A manager trusting the test roots (the system's roots would trust none of the test certificates).
    private func manager(_ pki: TestCertificates, policy: SecurityPolicy? = nil) throws -> SessionManager {
        var configuration = SessionConfiguration()
        var tls = TLSConfiguration()
        tls.trustRoots = .pemFile(pki.roots)
        configuration.tls = tls
        configuration.timeoutIntervalForRequest = .seconds(10)
        let manager = SessionManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        if let policy { try manager.setSecurityPolicy(policy) }
        return manager
    }

    /// The body on success, or the error.
    private func fetch(_ manager: SessionManager, _ url: URL) async -> Result<String, ClientError> {
        do throws(ClientError) {
            let result = try await manager.data(for: ClientRequest(url: url))
            return .success(String(decoding: result.data ?? Data(), as: UTF8.self))
        } catch {
            return .failure(error)
        }
    }

    /// The TLS error of a trust refusal, after checking it is one (−1202 with the URL).
    private func refusal(_ result: Result<String, ClientError>, _ url: URL, sourceLocation: SourceLocation = #_sourceLocation)
        -> TLSError?
    {
        guard case .failure(let error) = result else {
            Issue.record("the connection was accepted", sourceLocation: sourceLocation)
            return nil
        }
        #expect(
            error.code == .serverCertificateUntrusted && error.urlErrorCode == -1202, "\(error)", sourceLocation: sourceLocation)
        #expect(error.failingURL == url, sourceLocation: sourceLocation)
        guard let tls = error.underlying as? TLSError else {
            Issue.record("no TLSError under \(error)", sourceLocation: sourceLocation)
            return nil
        }
        return tls
    }

    @Test func aVerifiedChainWithAMatchingKeyPinPassesAndAWrongPinIsRefusedBeforeAnyRequest() async throws {
        let pki = try TestCertificates.shared()
        try await TLSLoopbackServer.with(chain: pki.goodChain, key: pki.goodKey) { server in
            let pinned = try manager(
                pki, policy: SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try pki.der(pki.intermediate)]))
            #expect(try await fetch(pinned, server.url()).get() == "ok")
            let wrong = try manager(
                pki, policy: SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try pki.der(pki.otherRoot)]))
            let tls = refusal(await fetch(wrong, server.url()), server.url())
            #expect(tls?.reason == .pinMismatch && tls?.pins.count == 3, "the verified chain's pins: leaf, intermediate, root")
            #expect(server.served == 1, "the refused connection carried no request")
        }
    }

    @Test func anUntrustedLeafWithThePinnedCAAppendedIsRefusedInPublicKeyMode() async throws {
        let pki = try TestCertificates.shared()
        let pin = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try pki.der(pki.intermediate)])
        // A leaf the session trusts through the other root, the pinned intermediate appended to what is sent.
        try await TLSLoopbackServer.with(chain: pki.forgedTrustedChain, key: pki.otherLeafKey) { server in
            let tls = refusal(await fetch(try manager(pki, policy: pin), server.url()), server.url())
            #expect(tls?.reason == .pinMismatch)
            #expect(server.served == 0)
        }
        // A self-signed leaf with the pinned intermediate and its root appended, verification off.
        var unverified = pin
        unverified.allowInvalidCertificates = true
        unverified.validatesDomainName = false
        try await TLSLoopbackServer.with(chain: pki.forgedSelfSignedChain, key: pki.selfSignedKey) { server in
            let tls = refusal(await fetch(try manager(pki, policy: unverified), server.url()), server.url())
            #expect(tls?.reason == .pinMismatch && tls?.pins.count == 1, "only the leaf is compared")
            #expect(server.served == 0)
        }
    }

    @Test func certificateModeTrustsThePinnedSelfSignedCertificateAndNoOther() async throws {
        let pki = try TestCertificates.shared()
        try await TLSLoopbackServer.with(chain: pki.selfSigned, key: pki.selfSignedKey) { server in
            let plain = try manager(pki)
            let untrusted = await fetch(plain, server.url())
            #expect(refusal(untrusted, server.url())?.reason == .selfSigned)
            let sentPin = try Certificate.load(file: pki.selfSigned)[0].pin
            if case .failure(let error) = untrusted {
                #expect(error.failureReason?.contains(sentPin) == true, "the error names the refused certificate: \(error)")
            }
            let pinned = try manager(
                pki, policy: SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [try pki.der(pki.selfSigned)]))
            #expect(try await fetch(pinned, server.url()).get() == "ok")
            let other = try manager(
                pki,
                policy: SecurityPolicy(
                    pinningMode: .certificate,
                    pinnedCertificates: [try pki.der(pki.otherSelfSigned)]))
            #expect(refusal(await fetch(other, server.url()), server.url())?.reason.isCertificateVerdict == true)
            #expect(server.served == 1)
        }
        // The session's roots are no anchors in certificate mode: the good chain fails unless it leads to a pin.
        try await TLSLoopbackServer.with(chain: pki.goodChain, key: pki.goodKey) { server in
            let selfPinned = try manager(
                pki, policy: SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [try pki.der(pki.selfSigned)]))
            #expect(refusal(await fetch(selfPinned, server.url()), server.url()) != nil)
            let intermediate = try manager(
                pki,
                policy: SecurityPolicy(
                    pinningMode: .certificate,
                    pinnedCertificates: [try pki.der(pki.intermediate)]))
            #expect(try await fetch(intermediate, server.url()).get() == "ok")
        }
    }

    @Test func reportOnlyRecordsTheMismatchAndUsesTheConnection() async throws {
        let pki = try TestCertificates.shared()
        try await TLSLoopbackServer.with(chain: pki.goodChain, key: pki.goodKey) { server in
            var policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try pki.der(pki.otherRoot)])
            policy.pinEnforcement = .reportOnly
            let reports = ReportRecorder()
            let manager = try manager(pki, policy: policy)
            manager.eventMonitors = [reports]
            #expect(try await fetch(manager, server.url()).get() == "ok")
            #expect(await eventually(within: .seconds(10)) { !reports.all.isEmpty })
            let report = try #require(reports.all.first)
            #expect(report.host == "127.0.0.1" && report.port == server.port && report.policy == policy)
            #expect(report.mismatch.reason == .pinMismatch && report.mismatch.pins.count == 3)
            #expect(reports.all.count == 1 && server.served == 1)
        }
    }

    @Test func theTrustHookIsAskedFirst() async throws {
        let pki = try TestCertificates.shared()
        try await TLSLoopbackServer.with(chain: pki.selfSigned, key: pki.selfSignedKey) { server in
            let manager = try manager(pki)
            let asked = Lock<[String]>([])
            manager.sessionDidReceiveServerTrustChallenge = { context in
                asked.withLock {
                    $0.append(
                        "\(context.host) \(context.peerChain.leaf?.subject ?? "-") \(context.verdict?.reason.description ?? "ok")"
                    )
                }
                return .proceed
            }
            #expect(try await fetch(manager, server.url()).get() == "ok", "the hook's .proceed overrides the policy")
            #expect(
                asked.withLock { $0 } == ["127.0.0.1 O=Self Signed,CN=localhost self_signed"]
                    || asked.withLock { $0 } == ["127.0.0.1 CN=localhost,O=Self Signed self_signed"])
            // With the default answer the policy decides (a fresh manager: the first connection is pooled).
            let defaulted = try self.manager(pki)
            defaulted.sessionDidReceiveServerTrustChallenge = { _ in .performDefaultHandling }
            #expect(refusal(await fetch(defaulted, server.url()), server.url())?.reason == .selfSigned)
        }
        try await TLSLoopbackServer.with(chain: pki.goodChain, key: pki.goodKey) { server in
            let manager = try manager(pki)
            manager.sessionDidReceiveServerTrustChallenge = { _ in .refuse("not this one") }
            let tls = refusal(await fetch(manager, server.url()), server.url())
            #expect(tls?.reason == .trustRefused && tls?.detail.contains("not this one") == true)
            #expect(server.served == 0)
        }
    }

    @Test func eachHostGetsItsOwnPolicy() async throws {
        let pki = try TestCertificates.shared()
        try await TLSLoopbackServer.with(chain: pki.selfSigned, key: pki.selfSignedKey) { server in
            let manager = try manager(pki)
            let pinned = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [try pki.der(pki.selfSigned)])
            try manager.setSecurityPolicies(try HostSecurityPolicies(policies: ["127.0.0.1": pinned]))
            #expect(try await fetch(manager, server.url(host: "127.0.0.1")).get() == "ok")
            let other = server.url(host: "localhost")
            #expect(refusal(await fetch(manager, other), other)?.reason == .selfSigned, "localhost falls to the default policy")
            try manager.setSecurityPolicies(try HostSecurityPolicies(policies: ["localhost": pinned]))
            #expect(try await fetch(manager, other).get() == "ok")
        }
    }

    @Test func aPolicyChangeNeverReusesAConnectionEvaluatedUnderTheOldOne() async throws {
        let pki = try TestCertificates.shared()
        try await TLSLoopbackServer.with(chain: pki.goodChain, key: pki.goodKey) { server in
            let manager = try manager(pki)
            #expect(try await fetch(manager, server.url()).get() == "ok")
            try manager.setSecurityPolicy(
                SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try pki.der(pki.otherRoot)]))
            #expect(refusal(await fetch(manager, server.url()), server.url())?.reason == .pinMismatch)
            try manager.setSecurityPolicy(.default)
            #expect(try await fetch(manager, server.url()).get() == "ok")
            #expect(server.served == 2)
        }
    }
}

/// Keeps the pin-mismatch reports a manager's monitors are told.
final class ReportRecorder: SessionEventMonitor {
    private let reports = Lock<[PinMismatchReport]>([])

    var all: [PinMismatchReport] { reports.withLock { $0 } }

    func manager(_ manager: SessionManager, didEmit event: TaskEvent) {}

    func manager(_ manager: SessionManager, didRecordPinMismatch report: PinMismatchReport) {
        reports.withLock { $0.append(report) }
    }
}
