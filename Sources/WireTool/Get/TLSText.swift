import Wire
import WireTLS

/// The `* ` lines of `-v` for an https connection: what was negotiated, then each certificate the
/// server sent with its subject, issuer, validity and public-key pin (the value `--pin` takes).
enum TLSText {
    static func verbose(_ info: TransportSecurityInfo) -> String {
        var text =
            "* TLS: \(info.protocolVersion) \(info.cipherSuite), ALPN \(info.applicationProtocol ?? "none"), "
            + "session \(info.isSessionResumed ? "resumed" : "new")\n"
        let chain = info.peerChain
        text += "* server certificate chain (\(chain.count) sent, \(info.verifiedCertificates.count) verified):\n"
        for (index, certificate) in chain.enumerated() {
            text += "*  \(index) subject: \(certificate.subject)\n"
            text += "*    issuer: \(certificate.issuer)\n"
            text += "*    valid: \(certificate.notBeforeText) to \(certificate.notAfterText)\n"
            if !certificate.dnsNames.isEmpty || !certificate.ipAddresses.isEmpty {
                text += "*    names: \((certificate.dnsNames + certificate.ipAddresses).joined(separator: ", "))\n"
            }
            text += "*    pin: \(certificate.pin)\n"
        }
        return text
    }
}
