import FoundationEssentials
import WireClient
import WireTLS

/// The pins of `wire get`'s TLS switches: certificates from `--pin-cert FILE` and `--pinned-cert-dir DIR`, and
/// `--pin-report-only`, which turns a mismatch into a warning.
enum PinnedCertificates {
    /// Certificate pinning for a file, a directory, or both (the union); nil when neither is given.
    /// - Throws: a failure with curl's 58 (local certificate problem) when the file cannot be used, or the directory
    ///   cannot be read or holds no certificate: a directory that pins nothing would let every peer through.
    static func pinning(file: String?, directory: String?) throws(TransferFailure) -> CertificatePinning? {
        guard file != nil || directory != nil else { return nil }
        var pinned: Set<[UInt8]> = []
        if let file {
            do {
                if case .certificate(let certificates) = try CertificatePinning.certificates(inFiles: [file]) {
                    pinned.formUnion(certificates)
                }
            } catch {
                throw TransferFailure(
                    status: ExitStatus.localCertificate, message: "problem with the pinned certificate: \(error.detail)")
            }
        }
        if let directory {
            // `certificates(inDirectory:)` reads an unreadable directory as an empty one: told apart here for the message.
            guard (try? FileManager.default.contentsOfDirectory(atPath: directory)) != nil else {
                throw TransferFailure(
                    status: ExitStatus.localCertificate,
                    message: "problem with the pinned certificate directory: cannot read \(directory)")
            }
            let found = SecurityPolicy.certificates(inDirectory: directory)
            guard !found.isEmpty else {
                throw TransferFailure(
                    status: ExitStatus.localCertificate,
                    message: "problem with the pinned certificate directory: \(directory) holds no "
                        + "readable certificate in a .cer, .der or .pem file")
            }
            for certificate in found { pinned.insert(Array(certificate)) }
        }
        return .certificate(pinned)
    }

    /// A trust hook that checks `pinning` as WireTLS does (against the verified chain, or the leaf alone when nothing
    /// was verified) but only reports a mismatch, as one line on standard error, and lets the connection through.
    /// Verification itself is unchanged: the hook runs only after OpenSSL accepted the chain (or `-k` waived it).
    static func reportOnly(_ pinning: CertificatePinning) -> @Sendable (TrustContext) -> TrustDecision {
        { context in
            let candidates =
                context.verification == .none || context.verdict != nil
                ? Array(context.peerChain.prefix(1)) : context.verifiedChain.certificates
            if let mismatch = pinning.check(candidates, host: context.host) {
                // One short line, written straight through: the hook runs on an event loop and must not wait long.
                StandardStreams.error("wire: pin mismatch (report-only): \(mismatch.detail)\n")
            }
            return .proceed
        }
    }
}
