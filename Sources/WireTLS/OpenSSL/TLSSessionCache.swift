import CWireOpenSSL
import Synchronization
@_spi(Locking) import Wire

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
        let trustDirectory: String?
        let cipherList: String?
        let tls13CipherSuites: String?
        let groups: String?

        /// The settings of `configuration` that a session key includes.
        init(_ configuration: TLSConfiguration) {
            trustRoots = configuration.trustRoots
            verification = configuration.certificateVerification
            minimumVersion = configuration.minimumVersion
            maximumVersion = configuration.maximumVersion
            certificateChainFile = configuration.certificateChainFile
            privateKeyFile = configuration.privateKeyFile
            trustDirectory = configuration.trustDirectory
            cipherList = configuration.cipherList
            tls13CipherSuites = configuration.tls13CipherSuites
            groups = configuration.groups
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
/// Sessions are kept in memory as OpenSSL objects: such a session keeps the chain its first handshake received,
/// decoded, which a resumed connection verifies again (a session read back from `i2d_SSL_SESSION` bytes keeps the
/// leaf alone, and decoding certificates costs OpenSSL 3.0 as much as verifying them). The cache holds copies that
/// no connection ever uses: OpenSSL changes a connection's session (it marks it not resumable when the connection
/// ends without close_notify), so a stored session is copied from the connection's, and each resumption is offered
/// a copy of the stored one (`SSL_SESSION_dup`, which shares the decoded certificates by reference count).
package final class TLSSessionCache: Sendable {
    private struct Entries {
        var sessions: [TLSSessionKey: TLSSession] = [:]
        /// Keys, least recently stored first, for eviction.
        var order: [TLSSessionKey] = []
    }

    private let entries = Lock(Entries())
    /// Keys remembered at most; the oldest is dropped beyond it.
    let capacity: Int

    /// An empty cache of `capacity` keys.
    package init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// Stores a session for `key`, taking the caller's reference to it.
    func store(_ session: OpaquePointer, for key: TLSSessionKey) {
        // Only sessions that can be resumed, with a certificate to verify again, are worth keeping.
        guard SSL_SESSION_is_resumable(session) == 1, SSL_SESSION_get0_peer(session) != nil else {
            SSL_SESSION_free(session)
            return
        }
        let copy = SSL_SESSION_dup(session)
        SSL_SESSION_free(session)
        guard let copy else {
            OpenSSLErrorQueue.clear()
            return
        }
        let held = TLSSession(taking: copy)
        let capacity = self.capacity
        entries.withLock { entries in
            if entries.sessions.updateValue(held, forKey: key) != nil { entries.order.removeAll { $0 == key } }
            entries.order.append(key)
            if entries.order.count > capacity {
                entries.sessions[entries.order.removeFirst()] = nil
            }
        }
    }

    /// Offers the session stored for `key`, if any, to `connection`.
    func resume(_ connection: SSLConnection, key: TLSSessionKey) {
        entries.withLock { $0.sessions[key] }?.offer(to: connection)
    }

    /// The number of keys with a session.
    var count: Int { entries.withLock { $0.sessions.count } }
}

/// One `SSL_SESSION` that no connection uses, freed once when the last holder lets go.
final class TLSSession: Sendable {
    // Sharing the pointer across threads is safe because it never changes after init, and neither does the session:
    // no connection is given it, only copies of it (`SSL_SESSION_dup` reads it; OpenSSL's certificates are shared by
    // atomic reference counts, and made for use from many threads). That is the whole contract.
    private nonisolated(unsafe) let session: OpaquePointer

    /// Holds `session`, taking the caller's reference.
    init(taking session: OpaquePointer) {
        self.session = session
    }

    deinit {
        SSL_SESSION_free(session)
    }

    /// Offers a copy of the session to `connection`.
    func offer(to connection: SSLConnection) {
        guard let copy = SSL_SESSION_dup(session) else {
            OpenSSLErrorQueue.clear()
            return
        }
        connection.resume(copy)
        SSL_SESSION_free(copy)
    }
}
