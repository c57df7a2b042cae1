public import FoundationEssentials

/// Whom an `https` connection trusts (AFSecurityPolicy), decided after the TLS handshake and before any HTTP
/// byte is sent.
///
/// ```swift
/// // Trust only the server's own (self-signed) certificate, shipped with the program:
/// let pins = try SecurityPolicy.certificates(in: Data(contentsOf: URL(fileURLWithPath: "/etc/myapp/server.pem")))
/// var policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: Set(pins))
/// policy.validatesDomainName = false
/// try manager.setSecurityPolicy(policy)
/// ```
///
/// Stricter than AFNetworking where AFNetworking was unsafe:
/// - Public-key pins are matched against the chain that was **verified** (leaf to trust anchor), or against the
///   leaf alone when `allowInvalidCertificates` switches verification off (the handshake proves the leaf's key
///   and nothing else), never against the list the server sent: a server cannot pass by appending a copy of the
///   pinned CA certificate (public data) to an untrusted chain (the bug class of OkHttp's CVE-2016-2402).
/// - Certificate mode makes the pinned certificates the **only** trust anchors and accepts a path ending at any
///   of them (partial-chain verification), so a pinned intermediate or a pinned self-signed leaf is enough, and
///   the path must still be valid (dates, signatures, and the host name when `validatesDomainName`).
///   `allowInvalidCertificates` changes nothing in this mode; an expired pinned certificate fails.
/// - With `allowInvalidCertificates` in public-key mode the host name is still checked on the leaf when
///   `validatesDomainName` (AFNetworking skips it).
/// - Combinations that cannot work are refused when the policy is set (`ClientError.Code.invalidSecurityPolicy`,
///   `validate()`): `allowInvalidCertificates` with `validatesDomainName` but no pinning, a pinning mode with
///   nothing pinned, report-only without pinning, report-only public-key pins with `allowInvalidCertificates` (the
///   pins are then the only trust), pins that are not certificates or `sha256/` hashes.
///
/// Public-key pins are SHA-256 over the DER SubjectPublicKeyInfo (`sha256/<base64>`, WireTLS's
/// `Certificate.pin`), not raw keys. TLS sessions are resumed under every policy, and a resumed connection is
/// evaluated as a new one is: the chain the session's first handshake received is verified again and the policy
/// runs on it, so a policy changed since the session was made applies to it.
public struct SecurityPolicy: Sendable, Hashable, Codable {
    /// What is pinned (AFSSLPinningMode).
    public enum PinningMode: String, Sendable, Hashable, Codable {
        /// Nothing: the chain is verified against the session's trust roots (the system's by default).
        case none
        /// A certificate of the verified chain must have the public key of a pinned certificate, or one of
        /// `pinnedPublicKeyHashes`.
        case publicKey
        /// The pinned certificates are the only trust anchors; the verified chain must end at one of them.
        case certificate
    }

    /// What a pin mismatch does.
    public enum PinEnforcement: String, Sendable, Hashable, Codable {
        /// The connection is refused (the default).
        case enforced
        /// The mismatch is reported to the manager's event monitors (`manager(_:didRecordPinMismatch:)`) and the
        /// connection goes on, so that a pin rotation can be tried in production before it is enforced. The chain
        /// must still be trusted the normal way: in certificate mode the session's trust roots are then the anchors
        /// and the pins are only compared, so a self-signed pinned certificate needs enforcement to be trusted; in
        /// public-key mode `allowInvalidCertificates` is refused with it (nothing would be verified).
        case reportOnly
    }

    /// What is pinned. Default `.none`.
    public var pinningMode: PinningMode
    /// The pinned certificates, DER.
    public var pinnedCertificates: Set<Data>
    /// Public-key pins given as strings (`sha256/<base64 of SHA-256(SubjectPublicKeyInfo)>`), beside the keys of
    /// `pinnedCertificates`; public-key mode only.
    public var pinnedPublicKeyHashes: Set<String> = []
    /// Whether a certificate that does not verify is accepted: with `.none` anything is (curl's `-k`); with
    /// `.publicKey` only the leaf is then pinned. Default false.
    public var allowInvalidCertificates = false
    /// Whether the certificate must be valid for the host name (or IP address) of the URL. Default true.
    public var validatesDomainName = true
    /// Whether a pin mismatch refuses the connection or is only reported. Default `.enforced`.
    public var pinEnforcement = PinEnforcement.enforced

    /// AFNetworking's `defaultPolicy`: no pinning, invalid certificates refused, the domain name validated.
    public static var `default`: SecurityPolicy { SecurityPolicy(pinningMode: .none, pinnedCertificates: []) }

    /// A policy pinning every certificate file of the executable's directory (`certificates(inDirectory:)`; the
    /// Linux counterpart of AFNetworking's main-bundle lookup).
    public init(pinningMode: PinningMode) {
        self.init(pinningMode: pinningMode, pinnedCertificates: Self.certificates(inDirectory: Self.executableDirectory))
    }

    /// A policy pinning `pinnedCertificates` (DER).
    public init(pinningMode: PinningMode, pinnedCertificates: Set<Data>) {
        self.pinningMode = pinningMode
        self.pinnedCertificates = pinnedCertificates
    }

    /// The directory of the running executable (`/proc/self/exe`), or the current directory if it cannot be told.
    static var executableDirectory: String {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? ProcessInfo.processInfo.arguments.first ?? "./x"
        guard let slash = executable.lastIndex(of: "/") else { return "." }
        return slash == executable.startIndex ? "/" : String(executable[..<slash])
    }
}
