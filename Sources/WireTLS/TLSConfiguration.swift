/// A TLS protocol version.
public enum TLSVersion: Int, Comparable, Hashable, Sendable, CustomStringConvertible {
    /// TLS 1.2 (RFC 5246).
    case tls12 = 0x0303
    /// TLS 1.3 (RFC 8446).
    case tls13 = 0x0304

    /// Ordered by protocol version.
    public static func < (lhs: TLSVersion, rhs: TLSVersion) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `TLSv1.2` or `TLSv1.3`, as OpenSSL and curl write them.
    public var description: String { self == .tls12 ? "TLSv1.2" : "TLSv1.3" }
}

/// Where the certificates that anchor trust come from.
public enum TrustRoots: Hashable, Sendable {
    /// The system's store (Debian: `/etc/ssl/certs`, OpenSSL's default verify paths).
    case system
    /// Every certificate of a PEM file.
    case pemFile(String)
    /// These DER certificates.
    case der([[UInt8]])
}

/// How much of the peer's certificate is checked.
public enum CertificateVerification: Hashable, Sendable {
    /// Chain to a trusted root, validity dates, and the host name or IP address.
    case full
    /// The chain and dates, but not the host name or IP address (the `--no-verify-host` switch).
    case noHostnameVerification
    /// Nothing is enforced (curl's `-k`); OpenSSL's verdict is still reported to the trust hook,
    /// and pinning then trusts only the leaf, whose key the handshake proves.
    case none
}

/// Certificate pinning checked after the handshake, with `AFSecurityPolicy`'s modes but safe:
/// pins are matched against the chain OpenSSL verified, never the list the peer sent (a peer can
/// append any certificate it likes), and with verification off only the leaf counts.
public enum CertificatePinning: Hashable, Sendable {
    /// Passes when a certificate of the verified chain has one of these public-key pins
    /// (`sha256/<base64 of SHA-256(SubjectPublicKeyInfo)>`).
    case publicKey(Set<String>)
    /// Passes when a certificate of the verified chain is byte-for-byte one of these (DER).
    case certificate(Set<[UInt8]>)

    /// Certificate pins read from files, PEM or DER told apart by content; every certificate of a
    /// PEM file is pinned (`--pin-cert`, AFNetworking's pinned `.cer` files).
    /// - Throws: `TLSError` with reason `.localCertificate` naming the file that cannot be used and why.
    public static func certificates(inFiles paths: [String]) throws(TLSError) -> CertificatePinning {
        var pinned: Set<[UInt8]> = []
        for path in paths {
            for certificate in try Certificate.load(file: path) { pinned.insert(certificate.der) }
        }
        return .certificate(pinned)
    }
}

/// What a trust-evaluation hook sees, after the handshake and before any HTTP byte is sent.
public struct TrustContext: Sendable {
    /// The host the connection is for (a name, or an IP literal).
    public let host: String
    /// The port.
    public let port: Int
    /// The chain OpenSSL built and verified, leaf to anchor (built as far as it could when
    /// verification is off and failed).
    public let verifiedChain: CertificateChain
    /// The certificates the peer sent, in its order.
    public let peerChain: CertificateChain
    /// OpenSSL's verdict: nil when the chain verified (with the name check, unless it was
    /// switched off), otherwise the reason it did not. Only seen non-nil with `.none`.
    public let verdict: TLSError?
    /// The verification mode the connection used.
    public let verification: CertificateVerification
    /// Whether the handshake resumed an earlier session. The chains are then the ones the session's first
    /// handshake received, verified again for this connection (its roots, host name and mode), and `verdict` is
    /// that verification's: a resumed connection is judged as a new one would be.
    public let isSessionResumed: Bool

    /// A context as a handshake would make it (for evaluators tested without a connection).
    public init(
        host: String, port: Int, verifiedChain: CertificateChain, peerChain: CertificateChain, verdict: TLSError?,
        verification: CertificateVerification, isSessionResumed: Bool = false
    ) {
        self.host = host
        self.port = port
        self.verifiedChain = verifiedChain
        self.peerChain = peerChain
        self.verdict = verdict
        self.verification = verification
        self.isSessionResumed = isSessionResumed
    }
}

/// A trust hook's answer.
public enum TrustDecision: Hashable, Sendable {
    /// Use the connection.
    case proceed
    /// Close it; the request fails with `TLSError.Reason.trustRefused` and this reason.
    case refuse(String)
}

/// How an HTTPS client connects: versions, trust, verification, client certificate, pinning.
///
/// ```swift
/// import WireTLS
/// var configuration = HTTPClientConfiguration()
/// var tls = TLSConfiguration()
/// tls.trustRoots = .pemFile("/etc/myapp/ca.pem")
/// tls.pinning = .publicKey(["sha256/AAAA…="])
/// configuration.tls = tls
/// let client = try HTTPClient(configuration: configuration)
/// ```
public struct TLSConfiguration: Sendable {
    /// The lowest version offered. Default TLS 1.2.
    public var minimumVersion = TLSVersion.tls12
    /// The highest version offered. Default TLS 1.3.
    public var maximumVersion = TLSVersion.tls13
    /// The trust anchors. Default: the system store.
    public var trustRoots = TrustRoots.system
    /// Directories of trusted certificates in OpenSSL's hashed layout (`openssl rehash`), several separated by `:`,
    /// trusted besides `trustRoots` (curl's `--capath`). With `.system` roots they replace the system's directory and
    /// keep its bundle file, as curl does. Default nil.
    public var trustDirectory: String?
    /// OpenSSL's cipher list for TLS 1.2 (`ECDHE-ECDSA-AES128-GCM-SHA256:...`, curl's `--ciphers`); nil for
    /// OpenSSL's default. A list naming no cipher OpenSSL knows fails every connection with `.cipherList`.
    public var cipherList: String?
    /// OpenSSL's TLS 1.3 cipher suites (`TLS_AES_128_GCM_SHA256:...`, curl's `--tls13-ciphers`); nil for the
    /// default. A list OpenSSL refuses fails every connection with `.cipherList`.
    public var tls13CipherSuites: String?
    /// The key-exchange groups offered, in order (`X25519:P-256`, curl's `--curves`); nil for the default. A list
    /// with a name OpenSSL does not know fails every connection with `.cipherList`.
    public var groups: String?
    /// What is verified. Default: everything.
    public var certificateVerification = CertificateVerification.full
    /// A PEM file with this side's certificate (and intermediates), for mutual TLS.
    public var certificateChainFile: String?
    /// The PEM private key of `certificateChainFile`.
    public var privateKeyFile: String?
    /// Pins checked after the handshake; nil for none.
    public var pinning: CertificatePinning?
    /// A hook that sees the chains and OpenSSL's verdict after the handshake and may refuse the
    /// connection; it runs after pinning, on the connection's event loop, so it must not block.
    public var trustEvaluation: (@Sendable (TrustContext) -> TrustDecision)?
    /// An evaluator that makes the trust decision itself, for callers that must not run on an event loop
    /// (user hooks) or that decide with other anchors than `trustRoots` (pinned certificates).
    ///
    /// When set, OpenSSL's verdict no longer stops the handshake by itself: it is handed over in
    /// `TrustContext.verdict` (computed as `certificateVerification` says, the host name included unless it is
    /// `.noHostnameVerification`), and the evaluator decides: nil uses the connection, an error closes it and
    /// fails the request with that error. It runs after the handshake, after `pinning` and `trustEvaluation`,
    /// off the event loop, and before the connection carries any HTTP byte or enters a pool.
    public var deferredTrustEvaluation: (@Sendable (TrustContext) async -> TLSError?)?
    /// Whether sessions are resumed on later connections to the same host and port. Default on.
    ///
    /// A session is resumed only under the settings it was made with (host, port, server name, trust roots,
    /// verification mode, versions, client certificate), and a resumed connection is checked as a new one is before
    /// it carries any byte: the chain the session's first handshake received is verified again with this
    /// configuration's roots and host name, then `pinning`, `trustEvaluation` and `deferredTrustEvaluation` run on it.
    public var resumesSessions = true
    /// The cache sessions are kept in and resumed from; nil gives each TLS layer (each assignment to
    /// `HTTPClientConfiguration.tls`) a cache of its own. Layers that share one resume each other's sessions when
    /// their keys match (see `resumesSessions`): a WireClient session shares one between the clients it makes for
    /// successive security policies.
    package var sessionCache: TLSSessionCache?

    /// The default: TLS 1.2–1.3, the system's roots, full verification.
    public init() {}
}

/// How an HTTPS server handshakes: its certificate and key, versions, and client certificates.
public struct TLSServerConfiguration: Sendable {
    /// Whether clients must present a certificate.
    public enum ClientCertificateRequirement: Hashable, Sendable {
        /// Clients are not asked for one.
        case none
        /// Clients are asked; one that sends none is still served, one that sends an
        /// unverifiable one is refused.
        case optional(caFile: String)
        /// Clients must send a certificate issued under the CAs of `caFile` (PEM).
        case required(caFile: String)
    }

    /// The PEM file with the server's certificate followed by its intermediates.
    public var certificateChainFile: String
    /// The PEM private key.
    public var privateKeyFile: String
    /// The lowest version accepted. Default TLS 1.2.
    public var minimumVersion = TLSVersion.tls12
    /// The highest version accepted. Default TLS 1.3.
    public var maximumVersion = TLSVersion.tls13
    /// Client certificates. Default: not asked.
    public var clientCertificates = ClientCertificateRequirement.none
    /// How returning clients skip the full handshake. Default: `.serverCache()`.
    public var sessionResumption = SessionResumption.serverCache()

    /// How a returning client resumes its session: an abbreviated handshake with no key exchange and no signature.
    /// A `lifetime` is between 1 second and 7 days (RFC 8446 §4.6.1's bound for a ticket).
    public enum SessionResumption: Hashable, Sendable {
        /// Sessions are kept in the server's memory, at most `capacity` of them (the oldest go first), each for
        /// `lifetime`: a TLS 1.2 client resumes by session ID, a TLS 1.3 client with a ticket that only names a kept
        /// session (OpenSSL's stateful tickets). A session's keys stay in this process only: once it has expired and
        /// been dropped (when a client asks for it, when the cache evicts it, or at OpenSSL's sweep every 255 new
        /// sessions), nothing the server holds can decrypt the traffic it protected, where a stateless ticket stays
        /// decryptable under keys that live as long as the process. A resumed handshake costs a lookup instead of a
        /// ticket's decryption. A session takes about 1 KiB without client certificates (a full default cache about
        /// 10 MiB), more with them (it keeps the client's chain); a new TLS 1.3 connection makes two, one per
        /// ticket, and a resumed one another. Needs OpenSSL 3.0.14 or later, or a build with CVE-2024-2511's fix
        /// (unbounded growth of this cache under TLS 1.3), as every supported distribution ships.
        case serverCache(capacity: Int = 10_240, lifetime: Duration = .seconds(300))
        /// Stateless tickets: each session is encrypted into the ticket the client keeps, under keys OpenSSL makes
        /// when the server starts and never rotates. Nothing is kept per session, but whoever reads those keys can
        /// decrypt every ticket issued since the start, and with it the traffic of each session (RFC 8446 §8, RFC
        /// 5077 §5.5). Tickets are valid for `lifetime`.
        case tickets(lifetime: Duration = .seconds(300))
        /// Every handshake is a full one: no session is kept and no ticket is issued.
        case disabled
    }

    /// A configuration serving `certificateChainFile` with `privateKeyFile`.
    public init(certificateChainFile: String, privateKeyFile: String) {
        self.certificateChainFile = certificateChainFile
        self.privateKeyFile = privateKeyFile
    }
}
