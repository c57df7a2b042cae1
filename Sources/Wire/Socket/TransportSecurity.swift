/// What a TLS layer negotiated on one connection, as plain data: Wire itself knows nothing of
/// TLS, so this holds strings and DER bytes, and WireTLS adds parsed views of the certificates
/// (`peerChain`, `verifiedChain`) in an extension.
public struct TransportSecurityInfo: Hashable, Sendable {
    /// The protocol version, `TLSv1.2` or `TLSv1.3`.
    public var protocolVersion: String
    /// The cipher suite's standard name, e.g. `TLS_AES_128_GCM_SHA256`.
    public var cipherSuite: String
    /// The protocol chosen by ALPN (`http/1.1`), or nil when the peer chose none.
    public var applicationProtocol: String?
    /// Whether the handshake resumed an earlier session (an abbreviated handshake).
    public var isSessionResumed: Bool
    /// The certificates the peer sent, leaf first, as DER, in the order sent.
    public var peerCertificates: [[UInt8]]
    /// The chain verification built, leaf to trust anchor, as DER; empty when verification did
    /// not build one.
    public var verifiedCertificates: [[UInt8]]

    /// Creates a record of a negotiated connection.
    public init(
        protocolVersion: String, cipherSuite: String, applicationProtocol: String?, isSessionResumed: Bool,
        peerCertificates: [[UInt8]], verifiedCertificates: [[UInt8]]
    ) {
        self.protocolVersion = protocolVersion
        self.cipherSuite = cipherSuite
        self.applicationProtocol = applicationProtocol
        self.isSessionResumed = isSessionResumed
        self.peerCertificates = peerCertificates
        self.verifiedCertificates = verifiedCertificates
    }
}

/// The client's hook for a security layer (WireTLS) between the connected socket and HTTP: the
/// pool calls `secure` on every new connection to an `https` origin, after connecting and
/// before the connection serves any request.
///
/// A class: the layer is a reference in every proxy, pool key and configuration that names it, and a class
/// existential is one pointer, where any other would make those values address-only (every copy, and every test of
/// an enum holding one, a call through the runtime's value witnesses, several per request).
package protocol ClientTransportSecurity: AnyObject, Sendable {
    /// Identifies the settings, so connections made with different settings share no pool.
    var poolKey: String { get }

    /// Wraps a connected stream and completes the handshake by `deadline`; the returned stream
    /// is ready for HTTP bytes. On failure the given stream is closed.
    /// - Parameters:
    ///   - stream: The connected stream, on its loop.
    ///   - host: The host of the URL (a name, or an IP literal without brackets).
    ///   - port: The port of the URL.
    ///   - deadline: When the handshake must have completed (the connect deadline).
    func secure(_ stream: LoopBound<any ByteStream>, host: String, port: Int, deadline: Deadline) async throws
        -> LoopBound<any ByteStream>
}

/// The server's hook for a security layer: every accepted stream is wrapped before the HTTP
/// connection sees it. The wrapped stream handshakes on its own, delivers no byte before the
/// handshake succeeds, and closes itself (with its error) when the handshake fails or takes
/// longer than `handshakeTimeout`, so a peer that stalls cannot hold a connection.
package protocol ServerTransportSecurity: Sendable {
    /// Loads what every connection needs (certificate, key, client CAs), once, before the
    /// server listens.
    /// - Throws: When that cannot be loaded.
    func prepare() throws

    /// Wraps an accepted stream; called on the stream's loop.
    /// - Throws: When the security layer cannot be set up (its certificate cannot be loaded).
    func wrap(_ stream: any ByteStream, handshakeTimeout: Duration) throws -> any ByteStream
}
