extension CertificateChain {
    /// Verifies this chain as a peer sent it (leaf first, then intermediates, none of them trusted
    /// for being sent) against `anchors`, as a handshake would, and returns the chain OpenSSL built,
    /// leaf to anchor. For trust decisions made after a handshake with other anchors than the
    /// connection's own, such as pinned certificates as the only anchors.
    ///
    /// - Parameters:
    ///   - anchors: The only certificates that end a path.
    ///   - host: The name or IP literal the leaf must be valid for (no partial wildcards); nil checks none.
    ///   - acceptsPartialChain: Whether a path may end at any anchor rather than only at a self-signed
    ///     root (OpenSSL's `X509_V_FLAG_PARTIAL_CHAIN`): a pinned intermediate, or a pinned leaf, is then
    ///     enough. Dates are checked on every certificate of the path either way.
    /// - Throws: `TLSError` with the verdict (`.unknownIssuer`, `.certificateExpired`, `.hostnameMismatch`, …),
    ///   or `.localCertificate` when the anchors cannot be loaded.
    public func verified(anchors: TrustRoots, host: String?, acceptsPartialChain: Bool = false) throws(TLSError)
        -> CertificateChain
    {
        CertificateChain(
            try ChainVerifier.verify(certificates, anchors: anchors, host: host, partialChain: acceptsPartialChain).get())
    }
}

extension Certificate {
    /// Whether the certificate names `host` in its subject alternative names (RFC 6125 as OpenSSL's
    /// `X509_check_host` applies it, no partial wildcards; an IP literal must be an IP address entry).
    /// Nothing else is checked: not the issuer, not the dates.
    public func isValid(forHost host: String) -> Bool {
        ChainVerifier.matches(self, host: host)
    }
}
