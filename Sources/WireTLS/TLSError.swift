/// Why a TLS connection failed or was refused.
///
/// A struct over a private code, so reasons can be added without breaking anyone's `switch`:
/// compare `error.reason == .certificateExpired` and read `description` for one line naming the
/// cause, the certificate (its subject) and the host. `openSSLErrors` keeps what OpenSSL's error
/// queue said, for the rare case the reason alone does not explain it.
public struct TLSError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Reason: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Value: String, Hashable, Sendable {
            case certificateExpired = "certificate_expired"
            case certificateNotYetValid = "certificate_not_yet_valid"
            case unknownIssuer = "unknown_issuer"
            case selfSigned = "self_signed"
            case selfSignedInChain = "self_signed_in_chain"
            case hostnameMismatch = "hostname_mismatch"
            case ipAddressMismatch = "ip_address_mismatch"
            case certificateInvalid = "certificate_invalid"
            case noPeerCertificate = "no_peer_certificate"
            case alertReceived = "alert_received"
            case protocolVersion = "protocol_version"
            case handshakeFailed = "handshake_failed"
            case handshakeTimeout = "handshake_timeout"
            case truncatedStream = "truncated_stream"
            case localCertificate = "local_certificate"
            case pinMismatch = "pin_mismatch"
            case trustRefused = "trust_refused"
            case protocolError = "protocol_error"
            case cipherList = "cipher_list"
            case invalidConfiguration = "invalid_configuration"
        }
        fileprivate let value: Value

        /// The peer's certificate (or one in its chain) is past its `notAfter`.
        public static let certificateExpired = Reason(value: .certificateExpired)
        /// A certificate's `notBefore` is in the future.
        public static let certificateNotYetValid = Reason(value: .certificateNotYetValid)
        /// No trusted root issued the chain (OpenSSL: unable to get local issuer certificate),
        /// which is also what a missing intermediate looks like.
        public static let unknownIssuer = Reason(value: .unknownIssuer)
        /// The peer sent a single self-signed certificate that is not trusted.
        public static let selfSigned = Reason(value: .selfSigned)
        /// The chain ends in a self-signed root that is not trusted.
        public static let selfSignedInChain = Reason(value: .selfSignedInChain)
        /// The certificate is not valid for the host name that was asked for.
        public static let hostnameMismatch = Reason(value: .hostnameMismatch)
        /// The certificate is not valid for the IP address that was asked for.
        public static let ipAddressMismatch = Reason(value: .ipAddressMismatch)
        /// Another verification failure (bad signature, revoked, wrong purpose...); the detail names it.
        public static let certificateInvalid = Reason(value: .certificateInvalid)
        /// The peer sent no certificate where one is required (a server requiring client certificates).
        public static let noPeerCertificate = Reason(value: .noPeerCertificate)
        /// The peer ended the handshake with an alert; `alert` names it.
        public static let alertReceived = Reason(value: .alertReceived)
        /// No protocol version both sides allow.
        public static let protocolVersion = Reason(value: .protocolVersion)
        /// The handshake failed for another reason (no shared cipher, a malformed message).
        public static let handshakeFailed = Reason(value: .handshakeFailed)
        /// The handshake did not complete in time.
        public static let handshakeTimeout = Reason(value: .handshakeTimeout)
        /// The connection ended without the peer's close_notify: the data may have been cut short.
        public static let truncatedStream = Reason(value: .truncatedStream)
        /// This side's certificate, key or trust file cannot be loaded or do not match.
        public static let localCertificate = Reason(value: .localCertificate)
        /// No certificate of the verified chain matches a configured pin; `pins` lists the chain's.
        public static let pinMismatch = Reason(value: .pinMismatch)
        /// The trust-evaluation hook refused the peer.
        public static let trustRefused = Reason(value: .trustRefused)
        /// The peer broke the protocol after the handshake (a bad record, renegotiation).
        public static let protocolError = Reason(value: .protocolError)
        /// This side's cipher list, TLS 1.3 cipher suites or groups cannot be set (curl's exit 59).
        public static let cipherList = Reason(value: .cipherList)
        /// A setting of this side's configuration is out of range (a session cache with room for none); the detail
        /// names it.
        public static let invalidConfiguration = Reason(value: .invalidConfiguration)

        /// A stable snake_case name for logs and metrics.
        public var description: String { value.rawValue }

        /// Whether the reason is a verdict on the peer's certificate (curl's exit 60).
        public var isCertificateVerdict: Bool {
            switch value {
            case .certificateExpired, .certificateNotYetValid, .unknownIssuer, .selfSigned, .selfSignedInChain,
                .hostnameMismatch, .ipAddressMismatch, .certificateInvalid, .trustRefused:
                true
            case .noPeerCertificate, .alertReceived, .protocolVersion, .handshakeFailed, .handshakeTimeout,
                .truncatedStream, .localCertificate, .pinMismatch, .protocolError, .cipherList, .invalidConfiguration:
                false
            }
        }
    }

    /// The kind of failure.
    public let reason: Reason
    /// What the failure concerns, in words.
    public let detail: String
    /// The subject (RFC 2253) of the certificate that failed, when OpenSSL names one.
    public let subject: String?
    /// The host the connection was for (the client's side), if known.
    public let host: String?
    /// The alert's description (`handshake failure`, `unknown CA`), for `.alertReceived`.
    public let alert: String?
    /// The `sha256/<base64>` pins of the verified chain (the leaf only when verification is off), for `.pinMismatch`.
    public let pins: [String]
    /// The entries OpenSSL's error queue held when the failure happened, oldest first.
    public let openSSLErrors: [String]

    /// Creates an error.
    public init(
        _ reason: Reason, _ detail: String, subject: String? = nil, host: String? = nil, alert: String? = nil,
        pins: [String] = [], openSSLErrors: [String] = []
    ) {
        self.reason = reason
        self.detail = detail
        self.subject = subject
        self.host = host
        self.alert = alert
        self.pins = pins
        self.openSSLErrors = openSSLErrors
    }

    /// `reason: detail (certificate subject) [OpenSSL: …]`.
    public var description: String {
        var text = "\(reason): \(detail)"
        if let subject, !detail.contains(subject) { text += " (certificate \(subject))" }
        if !openSSLErrors.isEmpty { text += " [OpenSSL: \(openSSLErrors.joined(separator: "; "))]" }
        return text
    }

    func adding(host: String) -> TLSError {
        TLSError(reason, detail, subject: subject, host: host, alert: alert, pins: pins, openSSLErrors: openSSLErrors)
    }
}
