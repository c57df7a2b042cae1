import Foundation
import Testing
import WireClient
import WireTLS

/// The security policy's decisions without sockets: validation, host patterns, loading pins, and evaluation of
/// handshakes described by `TrustContext`s built from the test certificates.
@Suite(.timeLimit(.minutes(1)))
struct SecurityPolicyTests {
    private func chain(_ files: String...) throws -> CertificateChain {
        CertificateChain(try files.flatMap { try Certificate.load(file: $0) })
    }

    /// A context as the handshake reports it when its verification is off (only the list the server sent is known).
    private func unverified(_ sent: CertificateChain, host: String = "127.0.0.1") -> TrustContext {
        TrustContext(
            host: host, port: 443, verifiedChain: CertificateChain([]), peerChain: sent,
            verdict: TLSError(.unknownIssuer, "not verified"), verification: .none)
    }

    @Test func theDefaultsAreAFNetworkings() {
        let policy = SecurityPolicy.default
        #expect(policy.pinningMode == .none && policy.pinnedCertificates.isEmpty)
        #expect(!policy.allowInvalidCertificates && policy.validatesDomainName && policy.pinEnforcement == .enforced)
        #expect(SessionManager().securityPolicy == .default)
    }

    @Test func combinationsThatCannotWorkAreRefusedWhenSet() throws {
        let pki = try TestCertificates.shared()
        var invalid = SecurityPolicy.default
        invalid.allowInvalidCertificates = true  // with validatesDomainName and no pinning: AF step 1
        var noPins = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [])
        var reportWithoutPins = SecurityPolicy.default
        reportWithoutPins.pinEnforcement = .reportOnly
        let notDER = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [Data("not a certificate".utf8)])
        var badHash = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [])
        badHash.pinnedPublicKeyHashes = ["sha1/AAAA"]
        // Nothing verified and the key pins only reported: any certificate would pass.
        var reportUnverified = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try pki.der(pki.intermediate)])
        reportUnverified.allowInvalidCertificates = true
        reportUnverified.validatesDomainName = false
        reportUnverified.pinEnforcement = .reportOnly
        let manager = SessionManager()
        for policy in [
            invalid, noPins, SecurityPolicy(pinningMode: .certificate, pinnedCertificates: []), reportWithoutPins, notDER,
            badHash,
            reportUnverified,
        ] {
            #expect(throws: ClientError.self) { try manager.setSecurityPolicy(policy) }
            do throws(ClientError) { try policy.validate() } catch {
                #expect(error.code == .invalidSecurityPolicy && error.urlErrorCode == -1)
            }
            #expect(manager.securityPolicy == .default, "the policy in force is unchanged after a refusal")
        }
        // curl's -k is allowed (the domain is not validated), and so is a key pin given as a hash.
        invalid.validatesDomainName = false
        try manager.setSecurityPolicy(invalid)
        noPins.pinnedPublicKeyHashes = [try Certificate.load(file: pki.intermediate)[0].pin]
        try manager.setSecurityPolicy(noPins)
        #expect(manager.securityPolicy == noPins)
    }

    @Test func theHTTPManagerRefusesPinningWithoutAnHTTPSBase() throws {
        let pki = try TestCertificates.shared()
        let pinned = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try pki.der(pki.intermediate)])
        for base in [nil, "http://example.com/v1"] {
            let manager = try HTTPSessionManager(baseURL: base)
            #expect(throws: ClientError.self) { try manager.setSecurityPolicy(pinned) }
            #expect(manager.session.securityPolicy == .default)
        }
        let secure = try HTTPSessionManager(baseURL: "https://example.com/v1")
        try secure.setSecurityPolicy(pinned)
        #expect(secure.session.securityPolicy == pinned)
    }

    @Test func hostPatternsPickExactThenLongestWildcardThenDefault() throws {
        let a = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [])
        var exact = a, wide = a, narrow = a, fallback = SecurityPolicy.default
        exact.pinnedPublicKeyHashes = ["sha256/" + Data(repeating: 1, count: 32).base64EncodedString()]
        wide.pinnedPublicKeyHashes = ["sha256/" + Data(repeating: 2, count: 32).base64EncodedString()]
        narrow.pinnedPublicKeyHashes = ["sha256/" + Data(repeating: 3, count: 32).base64EncodedString()]
        fallback.validatesDomainName = false
        let map = try HostSecurityPolicies(
            defaultPolicy: fallback,
            policies: [
                "API.example.com.": exact, "*.example.com": wide, "*.eu.example.com": narrow,
            ])
        #expect(map.policy(forHost: "api.example.com") == exact)
        #expect(map.policy(forHost: "www.example.com") == wide)
        #expect(map.policy(forHost: "a.b.example.com") == wide)
        #expect(map.policy(forHost: "x.eu.example.com") == narrow)
        #expect(map.policy(forHost: "eu.example.com") == wide)
        #expect(map.policy(forHost: "example.com") == fallback, "a wildcard does not cover its own domain")
        #expect(map.policy(forHost: "badexample.com") == fallback)
        #expect(map.policy(forHost: "127.0.0.1") == fallback)
        for pattern in ["*", "*.com", "a.*.example.com", "*.example..com", "", "ex ample.com"] {
            #expect(throws: ClientError.self, "\(pattern)") { try HostSecurityPolicies(policies: [pattern: exact]) }
        }
        #expect(throws: ClientError.self) {
            try HostSecurityPolicies(policies: [
                "a.example.com": SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [])
            ])
        }
    }

    @Test func pinsLoadFromPEMDERAndEveryCertificateFileOfADirectory() throws {
        let pki = try TestCertificates.shared()
        let intermediate = try pki.der(pki.intermediate)
        #expect(
            try SecurityPolicy.certificates(in: Data(contentsOf: URL(fileURLWithPath: pki.intermediateDER))) == [intermediate])
        let twoPEM = try SecurityPolicy.certificates(in: Data(contentsOf: URL(fileURLWithPath: pki.goodChain)))
        #expect(twoPEM.count == 2 && twoPEM[1] == intermediate)
        #expect(throws: TLSError.self) { try SecurityPolicy.certificates(in: Data("shopping list".utf8)) }

        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let files = FileManager.default
        try files.copyItem(atPath: pki.intermediateDER, toPath: folder + "/ca.cer")  // DER
        try files.copyItem(atPath: pki.selfSigned, toPath: folder + "/server.cer")  // PEM named .cer
        try files.copyItem(atPath: pki.otherRoot, toPath: folder + "/other.pem")
        try files.copyItem(atPath: pki.otherSelfSigned, toPath: folder + "/ignored.CER")  // case-sensitive
        try files.copyItem(atPath: pki.goodKey, toPath: folder + "/key.pem")  // not a certificate
        try Data("junk".utf8).write(to: URL(fileURLWithPath: folder + "/junk.der"))
        try files.createDirectory(atPath: folder + "/nested.cer", withIntermediateDirectories: true)
        try files.copyItem(atPath: pki.goodChain, toPath: folder + "/nested.cer/deeper.pem")  // not recursive
        let found = SecurityPolicy.certificates(inDirectory: folder)
        #expect(found == [intermediate, try pki.der(pki.selfSigned), try pki.der(pki.otherRoot)])
        #expect(SecurityPolicy.certificates(inDirectory: folder + "/missing").isEmpty)
    }

    @Test func policiesAreCodable() throws {
        let pki = try TestCertificates.shared()
        var policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [try pki.der(pki.selfSigned)])
        policy.validatesDomainName = false
        policy.pinEnforcement = .reportOnly
        let map = try HostSecurityPolicies(policies: ["*.example.com": policy])
        let decoded = try JSONDecoder().decode(HostSecurityPolicies.self, from: JSONEncoder().encode(map))
        #expect(decoded == map && decoded.policy(forHost: "a.example.com") == policy)
        // Decoding does not validate; setting does.
        let forged = Data(
            #"{"defaultPolicy":{"pinningMode":"none","pinnedCertificates":[],"pinnedPublicKeyHashes":[],"allowInvalidCertificates":true,"validatesDomainName":true,"pinEnforcement":"enforced"},"policies":{}}"#
                .utf8)
        let unsafe = try JSONDecoder().decode(HostSecurityPolicies.self, from: forged)
        let manager = SessionManager()
        #expect(throws: ClientError.self) { try manager.setSecurityPolicies(unsafe) }
        #expect(manager.securityPolicies == HostSecurityPolicies())
    }

    @Test func publicKeyPinsAreMatchedAgainstTheVerifiedChainNeverTheSentList() throws {
        let pki = try TestCertificates.shared()
        let roots = TrustRoots.pemFile(pki.roots)
        let policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try pki.der(pki.intermediate)])
        // The trusted leaf of the other root, with the pinned intermediate appended: it verifies, but not through the pin.
        let forged = try chain(pki.forgedTrustedChain)
        let verified = try forged.verified(anchors: roots, host: "127.0.0.1")
        let intermediatePin = try Certificate.load(file: pki.intermediate)[0].pin
        #expect(verified.count == 2 && !verified.pins.contains(intermediatePin))
        let context = TrustContext(
            host: "127.0.0.1", port: 443, verifiedChain: verified, peerChain: forged, verdict: nil,
            verification: .full)
        guard case .refused(let error) = policy.evaluate(context, sessionRoots: roots) else {
            Issue.record("a pin present only in the sent list was accepted")
            return
        }
        #expect(error.reason == .pinMismatch && error.pins == verified.pins)
        // The good chain verifies through the pinned intermediate.
        let good = try chain(pki.goodChain)
        let goodContext = TrustContext(
            host: "127.0.0.1", port: 443, verifiedChain: try good.verified(anchors: roots, host: "127.0.0.1"),
            peerChain: good, verdict: nil, verification: .full)
        #expect(policy.evaluate(goodContext, sessionRoots: roots) == .trusted)
    }

    @Test func withVerificationOffOnlyTheLeafIsPinnedAndTheHostStillChecked() throws {
        let pki = try TestCertificates.shared()
        var policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try pki.der(pki.intermediate)])
        policy.allowInvalidCertificates = true
        policy.validatesDomainName = false
        // A self-signed leaf with the pinned intermediate and root appended.
        let forged = unverified(try chain(pki.forgedSelfSignedChain))
        guard case .refused(let error) = policy.evaluate(forged, sessionRoots: .system) else {
            Issue.record("an appended pinned CA let an untrusted leaf through")
            return
        }
        #expect(error.reason == .pinMismatch && error.pins.count == 1)
        // Pinning the self-signed leaf's own key passes without verification; with the domain checked, only for its names.
        policy.pinnedCertificates = [try pki.der(pki.selfSigned)]
        #expect(policy.evaluate(forged, sessionRoots: .system) == .trusted)
        policy.validatesDomainName = true
        #expect(policy.evaluate(forged, sessionRoots: .system) == .trusted)
        if case .refused(let error) = policy.evaluate(
            unverified(try chain(pki.selfSigned), host: "wrong.example"), sessionRoots: .system)
        {
            #expect(error.reason == .hostnameMismatch)
        } else {
            Issue.record("a leaf for other names passed validatesDomainName")
        }
    }

    @Test func certificateModeMakesThePinsTheOnlyAnchors() throws {
        let pki = try TestCertificates.shared()
        let roots = TrustRoots.pemFile(pki.roots)
        let selfSigned = unverified(try chain(pki.selfSigned))
        let policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [try pki.der(pki.selfSigned)])
        #expect(policy.evaluate(selfSigned, sessionRoots: roots) == .trusted, "a pinned self-signed leaf is its own anchor")
        let other = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [try pki.der(pki.otherSelfSigned)])
        if case .refused(let error) = other.evaluate(selfSigned, sessionRoots: roots) {
            #expect(error.reason.isCertificateVerdict)
        } else {
            Issue.record("a certificate other than the pinned one was accepted")
        }
        // A chain the session trusts is refused when it does not lead to the pinned certificate...
        let good = try chain(pki.goodChain)
        let goodContext = TrustContext(
            host: "127.0.0.1", port: 443, verifiedChain: try good.verified(anchors: roots, host: "127.0.0.1"),
            peerChain: good, verdict: nil, verification: .full)
        #expect(policy.evaluate(goodContext, sessionRoots: roots) != .trusted)
        // ...and accepted through a pinned intermediate alone (partial chain), with the system's roots.
        let intermediate = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [try pki.der(pki.intermediate)])
        #expect(intermediate.evaluate(goodContext, sessionRoots: .system) == .trusted)
        #expect(intermediate.evaluate(unverified(try chain(pki.forgedSelfSignedChain)), sessionRoots: roots) != .trusted)
    }

    @Test func reportOnlyLetsAMismatchThroughButNotAnUntrustedChain() throws {
        let pki = try TestCertificates.shared()
        let roots = TrustRoots.pemFile(pki.roots)
        var policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try pki.der(pki.otherRoot)])
        policy.pinEnforcement = .reportOnly
        let good = try chain(pki.goodChain)
        let context = TrustContext(
            host: "127.0.0.1", port: 443, verifiedChain: try good.verified(anchors: roots, host: "127.0.0.1"),
            peerChain: good, verdict: nil, verification: .full)
        guard case .trustedDespitePinMismatch(let mismatch) = policy.evaluate(context, sessionRoots: roots) else {
            Issue.record("report-only refused or ignored a mismatch")
            return
        }
        #expect(mismatch.reason == .pinMismatch)
        let untrusted = unverified(try chain(pki.selfSigned))
        guard case .refused = policy.evaluate(untrusted, sessionRoots: roots) else {
            Issue.record("report-only let an untrusted chain through")
            return
        }
    }

    @Test func noPinningFollowsTheHandshakeVerdict() throws {
        let pki = try TestCertificates.shared()
        let selfSigned = unverified(try chain(pki.selfSigned))
        #expect(SecurityPolicy.default.evaluate(selfSigned, sessionRoots: .pemFile(pki.roots)) != .trusted)
        var anything = SecurityPolicy.default
        anything.allowInvalidCertificates = true
        anything.validatesDomainName = false
        #expect(anything.evaluate(selfSigned, sessionRoots: .pemFile(pki.roots)) == .trusted)
        var both = anything
        both.validatesDomainName = true
        if case .refused(let error) = both.evaluate(selfSigned, sessionRoots: .system) {
            #expect(error.reason == .trustRefused && error.detail.contains("requires pinning"))
        } else {
            Issue.record("allowInvalidCertificates with validatesDomainName and no pinning was accepted")
        }
    }
}
