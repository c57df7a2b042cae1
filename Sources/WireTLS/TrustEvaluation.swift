import Wire

/// What runs after a client handshake and before the connection carries any HTTP byte: the
/// pins, then the user's trust hook. A resumed handshake gets the same checks, on the chain its
/// session was made with, verified again by the connection.
enum TrustEvaluation {
    /// Nil to proceed; otherwise the error that refuses the peer.
    static func evaluate(_ connection: SSLConnection, host: String, port: Int, configuration: TLSConfiguration) -> TLSError? {
        guard configuration.pinning != nil || configuration.trustEvaluation != nil else { return nil }
        let verified = CertificateChain(connection.verifiedChain())
        let sent = CertificateChain(connection.peerChain())
        let verdict = connection.verdict
        if let pinning = configuration.pinning {
            // Without verification the handshake proves possession of the leaf's key and
            // nothing else: the rest of any chain could be made up.
            let candidates: [Certificate]
            if configuration.certificateVerification == .none || verdict != nil {
                candidates = Array(sent.prefix(1))
            } else {
                candidates = verified.certificates
            }
            if let error = pinning.check(candidates, host: host) { return error }
        }
        if let hook = configuration.trustEvaluation {
            let context = TrustContext(
                host: host, port: port, verifiedChain: verified, peerChain: sent, verdict: verdict,
                verification: configuration.certificateVerification,
                isSessionResumed: connection.isSessionResumed)
            if case .refuse(let reason) = hook(context) {
                return TLSError(
                    .trustRefused, "the trust hook refused \(host): \(reason)", subject: sent.leaf?.subject, host: host)
            }
        }
        return nil
    }
}

extension CertificatePinning {
    /// Nil when a certificate of `chain` matches; otherwise the `.pinMismatch` error, listing the chain's pins.
    /// Give it the verified chain, or the leaf alone when nothing was verified: never the list a peer sent.
    package func check(_ chain: [Certificate], host: String) -> TLSError? {
        let matches =
            switch self {
            case .publicKey(let pins): chain.contains { pins.contains($0.pin) }
            case .certificate(let certificates): chain.contains { certificates.contains($0.der) }
            }
        guard !matches else { return nil }
        let pins = chain.map(\.pin)
        let listed = chain.map { "\($0.pin) (\($0.subject))" }.joined(separator: ", ")
        let what = if case .publicKey = self { "public key" } else { "certificate" }
        return TLSError(
            .pinMismatch, "no \(what) of the chain for \(host) matches a pin; the chain's pins: \(listed)",
            subject: chain.first?.subject, host: host, pins: pins)
    }
}

extension TransportSecurityInfo {
    /// The certificates the peer sent, parsed.
    public var peerChain: CertificateChain { CertificateChain(der: peerCertificates) }
    /// The chain OpenSSL verified, parsed.
    public var verifiedChain: CertificateChain { CertificateChain(der: verifiedCertificates) }
}
