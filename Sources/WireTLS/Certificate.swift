import Wire

/// One X.509 certificate, parsed once by OpenSSL into plain Swift data: it holds no OpenSSL
/// object, so it is a `Sendable` value that can be compared, stored and sent anywhere.
public struct Certificate: Hashable, Sendable, CustomStringConvertible {
    /// The certificate's DER encoding.
    public let der: [UInt8]
    /// The subject's distinguished name, RFC 2253 (`CN=localhost,O=Example`).
    public let subject: String
    /// The issuer's distinguished name, RFC 2253.
    public let issuer: String
    /// The start of validity, in seconds since the Unix epoch (UTC).
    public let notBefore: Int64
    /// The end of validity, in seconds since the Unix epoch (UTC).
    public let notAfter: Int64
    /// The DNS names of the subject alternative name extension, as written (wildcards kept).
    public let dnsNames: [String]
    /// The IP addresses of the subject alternative name extension (`127.0.0.1`, `::1`).
    public let ipAddresses: [String]
    /// SHA-256 of the DER SubjectPublicKeyInfo: what public-key pins are made of.
    public let publicKeySHA256: [UInt8]
    /// SHA-256 of the whole DER certificate (the fingerprint).
    public let sha256: [UInt8]
    /// The public-key pin, `sha256/<base64 of publicKeySHA256>`, the form OkHttp and curl's
    /// `--pinnedpubkey` use.
    public let pin: String

    /// Parses a DER certificate.
    /// - Throws: `TLSError` with reason `.localCertificate` when the bytes are not a certificate.
    public init(der: [UInt8]) throws(TLSError) {
        self = try X509Reader.certificate(der: der)
    }

    /// Reads every certificate of a PEM file, in order.
    /// - Throws: `TLSError` with reason `.localCertificate` when the file cannot be read or holds none.
    public static func load(pemFile path: String) throws(TLSError) -> [Certificate] {
        try X509Reader.certificates(pemFile: path)
    }

    /// Reads the certificates of a file in either encoding, told apart by its content: PEM (every
    /// certificate block, in order) or DER (one certificate, like AFNetworking's `.cer` files).
    /// - Throws: `TLSError` with reason `.localCertificate` naming the file and what is wrong: it
    ///   cannot be read, is empty, is neither PEM nor DER, or holds a malformed certificate.
    public static func load(file path: String) throws(TLSError) -> [Certificate] {
        let contents: [UInt8]
        do {
            contents = try LocalFiles.contents(atPath: path)
        } catch {
            throw TLSError(.localCertificate, "cannot read \(path): \(error)")
        }
        return try CertificateFileReader.certificates(contents: contents, source: path)
    }

    /// Parses PEM (every certificate block, in order) or DER (one certificate), told apart by content.
    /// - Throws: `TLSError` with reason `.localCertificate` when the bytes are neither, or malformed.
    public static func decode(_ contents: [UInt8]) throws(TLSError) -> [Certificate] {
        try CertificateFileReader.certificates(contents: contents, source: "the certificate data")
    }

    init(
        der: [UInt8], subject: String, issuer: String, notBefore: Int64, notAfter: Int64, dnsNames: [String],
        ipAddresses: [String], publicKeySHA256: [UInt8], sha256: [UInt8], pin: String
    ) {
        self.der = der
        self.subject = subject
        self.issuer = issuer
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.dnsNames = dnsNames
        self.ipAddresses = ipAddresses
        self.publicKeySHA256 = publicKeySHA256
        self.sha256 = sha256
        self.pin = pin
    }

    /// The validity period as UTC text, `2026-01-31 12:00:00Z`.
    public var notBeforeText: String { Self.utcText(notBefore) }
    /// The end of validity as UTC text.
    public var notAfterText: String { Self.utcText(notAfter) }

    /// `subject (issuer …, pin …)`.
    public var description: String { "\(subject) (issuer \(issuer), pin \(pin))" }

    /// `YYYY-MM-DD hh:mm:ssZ` from Unix seconds, through the calendar arithmetic of Wire's `HTTPFieldDate` (no
    /// Foundation).
    package static func utcText(_ seconds: Int64) -> String {
        let (days, secondOfDay) = HTTPFieldDate.daysAndSecondOfDay(unixSeconds: Int(seconds))
        let (year, month, day) = HTTPFieldDate.civilDate(daysSinceEpoch: days)
        let two = HTTPFieldDate.twoDigits
        return
            "\(year)-\(two(month))-\(two(day)) \(two(secondOfDay / 3600)):\(two(secondOfDay % 3600 / 60)):\(two(secondOfDay % 60))Z"
    }
}

/// A certificate chain, leaf first: either the list the peer sent, or the chain OpenSSL built
/// and verified (leaf to trust anchor).
public struct CertificateChain: Hashable, Sendable, RandomAccessCollection, CustomStringConvertible {
    /// The certificates, leaf first.
    public let certificates: [Certificate]

    /// A chain of `certificates`, leaf first.
    public init(_ certificates: [Certificate]) { self.certificates = certificates }

    /// Parses DER certificates (as `TransportSecurityInfo` carries them); undecodable entries are skipped.
    public init(der: [[UInt8]]) {
        certificates = der.compactMap { try? Certificate(der: $0) }
    }

    /// The leaf (the peer's own certificate), if any.
    public var leaf: Certificate? { certificates.first }
    /// Every certificate's public-key pin, leaf first.
    public var pins: [String] { certificates.map(\.pin) }

    /// The first position.
    public var startIndex: Int { certificates.startIndex }
    /// Past the last position.
    public var endIndex: Int { certificates.endIndex }
    /// The certificate at `position`.
    public subscript(position: Int) -> Certificate { certificates[position] }

    /// One line per certificate.
    public var description: String { certificates.map(\.description).joined(separator: "\n") }
}
