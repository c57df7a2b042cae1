import FoundationEssentials
import WireTLS

extension SecurityPolicy {
    /// Checks that the policy can ever be safe and useful; the manager calls it whenever a policy is set.
    /// - Throws: `ClientError` with code `.invalidSecurityPolicy` and a reason naming the rule:
    ///   `allowInvalidCertificates` with `validatesDomainName` and no pinning (AFNetworking's "in order to validate a
    ///   domain name for self signed certificates, you MUST use pinning"), a pinning mode with nothing pinned (every
    ///   connection would be refused), report-only without pinning, report-only public-key pins with
    ///   `allowInvalidCertificates` (nothing would be verified and the pins would not be enforced: any certificate would
    ///   pass), a pinned certificate that is not DER, a public-key hash that is not `sha256/` and 32 bytes of base64, or
    ///   hashes given in certificate mode (they would be ignored).
    public func validate() throws(ClientError) {
        func refuse(_ reason: String) -> ClientError {
            ClientError(.invalidSecurityPolicy, failureReason: "invalid security policy: \(reason)")
        }
        if pinningMode == .none {
            if allowInvalidCertificates && validatesDomainName {
                throw refuse("validating the domain name of an untrusted certificate requires pinning")
            }
            if pinEnforcement == .reportOnly { throw refuse("report-only needs a pinning mode and pins") }
            return
        }
        for der in pinnedCertificates where (try? Certificate(der: Array(der))) == nil {
            throw refuse("a pinned certificate (\(der.count) bytes) is not a DER certificate")
        }
        for hash in pinnedPublicKeyHashes where !Self.isPublicKeyHash(hash) {
            throw refuse("\"\(hash)\" is not a public-key pin (sha256/ and the base64 of 32 bytes)")
        }
        switch pinningMode {
        case .certificate:
            if !pinnedPublicKeyHashes.isEmpty { throw refuse("public-key hashes are not used in certificate mode") }
            if pinnedCertificates.isEmpty {
                throw refuse("certificate pinning with no pinned certificate refuses every connection")
            }
        case .publicKey:
            if pinnedPublicKeys.isEmpty { throw refuse("public-key pinning with no pinned key refuses every connection") }
            if allowInvalidCertificates && pinEnforcement == .reportOnly {
                throw refuse(
                    "with allowInvalidCertificates the public-key pins are the only trust, and report-only would not enforce them"
                )
            }
        case .none:
            break
        }
    }

    /// `sha256/` followed by the base64 of 32 bytes.
    static func isPublicKeyHash(_ text: String) -> Bool {
        guard text.hasPrefix("sha256/"), let bytes = Data(base64Encoded: String(text.dropFirst(7))) else { return false }
        return bytes.count == 32
    }
}
