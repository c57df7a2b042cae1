public import WireTLS

/// What a `SecurityPolicy` makes of one handshake.
public enum TrustOutcome: Sendable, Hashable {
    /// The connection may be used.
    case trusted
    /// The connection may be used, but no pin matched (report-only): the mismatch as it would have refused it.
    case trustedDespitePinMismatch(TLSError)
    /// The connection is refused, with the rule that refused it.
    case refused(TLSError)
}

extension SecurityPolicy {
    /// Decides on a handshake (the certificate's verdict first, then the host name, then the pins), without I/O
    /// beyond reading `sessionRoots` when the chain must be verified again.
    ///
    /// The handshake's own verdict (in `context`) is used when it was computed the way the policy needs (the
    /// session's roots, and the host name exactly when `validatesDomainName`); otherwise the chain the server sent is
    /// verified again with the policy's anchors. Pins are compared with that verified chain, or with the leaf alone
    /// when verification is off; never with the rest of the list the server sent.
    /// - Parameters:
    ///   - context: The handshake: host, the chains, OpenSSL's verdict and how it was computed.
    ///   - sessionRoots: The session's trust anchors (the system's by default).
    public func evaluate(_ context: TrustContext, sessionRoots: TrustRoots) -> TrustOutcome {
        let host = context.host
        func refused(_ detail: String) -> TrustOutcome {
            .refused(TLSError(.trustRefused, detail, subject: context.peerChain.leaf?.subject, host: host))
        }
        if pinningMode == .none && allowInvalidCertificates && validatesDomainName {
            return refused("validating the domain name of an untrusted certificate requires pinning")
        }
        let nameToCheck = validatesDomainName ? host : nil
        switch pinningMode {
        case .none:
            if allowInvalidCertificates { return .trusted }
            // The handshake's verdict suffices when it checked what the policy checks (on a resumed session, the
            // verdict of the stored chain verified again).
            if context.verification == Self.verification(checking: nameToCheck) {
                return context.verdict.map { .refused($0) } ?? .trusted
            }
            do {
                _ = try verifiedChain(context, anchors: sessionRoots, host: nameToCheck)
                return .trusted
            } catch {
                return .refused(error)
            }
        case .certificate:
            guard !pinnedCertificates.isEmpty else { return refused("certificate pinning with no pinned certificate") }
            let anchors = Set(pinnedCertificates.map { [UInt8]($0) })
            let chain: CertificateChain
            do {
                if pinEnforcement == .reportOnly {
                    chain = try verifiedChain(context, anchors: sessionRoots, host: nameToCheck)
                } else {
                    chain = try context.peerChain.verified(
                        anchors: .der(Array(anchors)), host: nameToCheck, acceptsPartialChain: true)
                }
            } catch {
                return .refused(error)
            }
            return pinned(CertificatePinning.certificate(anchors).check(chain.certificates, host: host))
        case .publicKey:
            let pins = pinnedPublicKeys
            guard !pins.isEmpty else { return refused("public-key pinning with no pinned key") }
            let candidates: [Certificate]
            if allowInvalidCertificates {
                // Nothing is verified: the handshake proves the leaf's key, and nothing about the rest of the list.
                guard let leaf = context.peerChain.leaf else {
                    return .refused(TLSError(.noPeerCertificate, "the server sent no certificate", host: host))
                }
                if let nameToCheck, !leaf.isValid(forHost: nameToCheck) {
                    return .refused(
                        TLSError(
                            .hostnameMismatch, "the certificate \(leaf.subject) is not valid for \(nameToCheck)",
                            subject: leaf.subject, host: host))
                }
                candidates = [leaf]
            } else {
                do {
                    candidates = try verifiedChain(context, anchors: sessionRoots, host: nameToCheck).certificates
                } catch {
                    return .refused(error)
                }
            }
            return pinned(CertificatePinning.publicKey(pins).check(candidates, host: host))
        }
    }

    /// The outcome of a pin check: trusted on a match, else refused or reported as `pinEnforcement` says.
    private func pinned(_ mismatch: TLSError?) -> TrustOutcome {
        guard let mismatch else { return .trusted }
        return pinEnforcement == .reportOnly ? .trustedDespitePinMismatch(mismatch) : .refused(mismatch)
    }

    /// The handshake verification that checks the chain, and the host name exactly when one is given.
    private static func verification(checking host: String?) -> CertificateVerification {
        host == nil ? .noHostnameVerification : .full
    }

    /// The chain verified against `anchors`, checking `host` if given: the handshake's when it verified exactly that,
    /// else verified again from the list the server sent.
    private func verifiedChain(_ context: TrustContext, anchors: TrustRoots, host: String?) throws(TLSError) -> CertificateChain {
        if context.verification == Self.verification(checking: host) && !context.verifiedChain.certificates.isEmpty {
            if let verdict = context.verdict { throw verdict }
            return context.verifiedChain
        }
        return try context.peerChain.verified(anchors: anchors, host: host)
    }
}
