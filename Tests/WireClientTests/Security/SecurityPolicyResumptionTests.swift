import Foundation
import Synchronization
import Testing
import WireTestSupport
@_spi(Locking) import Wire
import WireClient
import WireTLS

/// TLS session resumption under a pinned security policy, against `openssl s_server` (a real peer that says on its
/// status page whether it resumed): the session resumes, and a resumed connection is evaluated under the policy in
/// force as a new one is, so a pin set changed since the session was made refuses it.
@Suite(.sharedIO(minutes: 1))
struct SecurityPolicyResumptionTests {
    /// The body and the connection's TLS record, or the error.
    private func fetch(_ manager: SessionManager, _ url: URL) async -> Result<
        (page: String, info: TransportSecurityInfo?), ClientError
    > {
        do throws(ClientError) {
            let result = try await manager.data(for: ClientRequest(url: url))
            return .success((String(decoding: result.data ?? Data(), as: UTF8.self), result.response?.metrics?.transportSecurity))
        } catch {
            return .failure(error)
        }
    }

    @Test(arguments: [TLSVersion.tls12, .tls13])
    func aPinnedSessionResumesAndAChangedPinSetRefusesTheResumedConnection(_ version: TLSVersion) async throws {
        let pki = try TestCertificates.shared()
        let server = try TestOpenSSLServer(certificate: pki.path("good.pem"), key: pki.goodKey, chain: pki.intermediate)
        defer { server.stop() }
        let url = URL(string: "https://localhost:\(server.port)/")!

        var configuration = SessionConfiguration()
        var tls = TLSConfiguration()
        tls.trustRoots = .pemFile(pki.roots)
        tls.maximumVersion = version
        configuration.tls = tls
        configuration.timeoutIntervalForRequest = .seconds(10)
        let manager = SessionManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        let pinned = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try pki.der(pki.intermediate)])
        try manager.setSecurityPolicy(pinned)
        // The hook sees every connection first (and leaves the decision to the policy).
        let resumed = Lock<[Bool]>([])
        manager.sessionDidReceiveServerTrustChallenge = { context in
            resumed.withLock { $0.append(context.isSessionResumed) }
            return .performDefaultHandling
        }

        // s_server closes each connection after its page: every request is a new connection.
        for round in 0..<2 {
            let (page, info) = try await fetch(manager, url).get()
            #expect(page.contains(round == 0 ? "New, \(version)" : "Reused, \(version)"), "\(round): \(page.prefix(200))")
            #expect(info?.isSessionResumed == (round == 1))
            #expect(info?.protocolVersion == version.description)
            #expect(info?.verifiedChain.count == 3, "\(round): the chain verified (again, when resumed)")
        }

        // Other pins: the session is resumed, and refused by the new pins on its verified chain.
        try manager.setSecurityPolicy(SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try pki.der(pki.otherRoot)]))
        guard case .failure(let error) = await fetch(manager, url) else {
            Issue.record("the resumed connection was accepted under pins that match nothing of its chain")
            return
        }
        #expect(error.code == .serverCertificateUntrusted, "\(error)")
        let refusal = error.underlying as? TLSError
        #expect(refusal?.reason == .pinMismatch && refusal?.pins.count == 3, "\(String(describing: refusal))")

        // The first pins again: it resumes and passes.
        try manager.setSecurityPolicy(pinned)
        let (page, info) = try await fetch(manager, url).get()
        #expect(page.contains("Reused, \(version)") && info?.isSessionResumed == true)
        #expect(resumed.withLock { $0 } == [false, true, true, true])
        manager.invalidateSession(cancelingTasks: true)
    }
}
