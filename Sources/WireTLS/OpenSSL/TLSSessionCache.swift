import CWireOpenSSL
import Synchronization

/// What a client session may be resumed for: the origin, the server name it was sent with, and every setting of the
/// TLS layer that decides what a handshake proves or presents (the trust roots, the verification mode, the versions,
/// the client certificate). Pins and trust hooks are not part of it: they are evaluated again on every connection,
/// resumed or not.
struct TLSSessionKey: Hashable, Sendable {
    /// The settings of one TLS layer that a session key includes.
    struct Settings: Hashable, Sendable {
        let trustRoots: TrustRoots
        let verification: CertificateVerification
        let minimumVersion: TLSVersion
        let maximumVersion: TLSVersion
        let certificateChainFile: String?
        let privateKeyFile: String?

        /// The settings of `configuration` that a session key includes.
        init(_ configuration: TLSConfiguration) {
            trustRoots = configuration.trustRoots
            verification = configuration.certificateVerification
            minimumVersion = configuration.minimumVersion
            maximumVersion = configuration.maximumVersion
            certificateChainFile = configuration.certificateChainFile
            privateKeyFile = configuration.privateKeyFile
        }
    }

    let host: String
    let port: Int
    /// The SNI sent (none for an IP literal).
    let serverName: String?
    let settings: Settings
}

/// The client's resumable sessions, one per `TLSSessionKey` (the newest ticket wins), shared by the connections of
/// one TLS layer across loops, or by several layers (a WireClient session's clients under successive security
/// policies).
///
/// Sessions are kept serialized (`i2d_SSL_SESSION`), so the cache holds plain bytes and no OpenSSL object crosses
/// threads; each new connection decodes its own copy. A serialized session keeps the peer's leaf and nothing else of
/// its chain, so each entry keeps the chain the peer sent beside it, for the resumed connection to verify again.
package final class TLSSessionCache: Sendable {
    private struct Entry {
        let session: [UInt8]
        let peerChain: [[UInt8]]
    }

    private struct Entries {
        var sessions: [TLSSessionKey: Entry] = [:]
        /// Keys, least recently stored first, for eviction.
        var order: [TLSSessionKey] = []
    }

    private let entries = Mutex(Entries())
    /// Keys remembered at most; the oldest is dropped beyond it.
    let capacity: Int

    /// An empty cache of `capacity` keys.
    package init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// Stores a session for `key` with the chain its peer sent (DER, leaf first), releasing the caller's reference
    /// to the session.
    func store(_ session: OpaquePointer, peerChain: [[UInt8]], for key: TLSSessionKey) {
        defer { SSL_SESSION_free(session) }
        // Only sessions that can be resumed are worth keeping, and only with a chain to verify again.
        guard SSL_SESSION_is_resumable(session) == 1, !peerChain.isEmpty else { return }
        let length = i2d_SSL_SESSION(session, nil)
        guard length > 0 else { return }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_SSL_SESSION(session, &cursor)
        }
        guard written == length else { return }
        let capacity = self.capacity
        let entry = Entry(session: bytes, peerChain: peerChain)
        entries.withLock { entries in
            if entries.sessions.updateValue(entry, forKey: key) != nil { entries.order.removeAll { $0 == key } }
            entries.order.append(key)
            if entries.order.count > capacity {
                entries.sessions[entries.order.removeFirst()] = nil
            }
        }
    }

    /// Offers the session stored for `key`, if any, to `connection`, with its chain.
    func resume(_ connection: SSLConnection, key: TLSSessionKey) {
        guard let entry = entries.withLock({ $0.sessions[key] }) else { return }
        let session = entry.session.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_SSL_SESSION(nil, &cursor, buffer.count)
        }
        guard let session else {
            OpenSSLErrorQueue.clear()
            return
        }
        connection.resume(session, peerChain: entry.peerChain)
        SSL_SESSION_free(session)
    }

    /// The number of keys with a session.
    var count: Int { entries.withLock { $0.sessions.count } }
}
