import CWireOpenSSL
import Synchronization

/// The client's resumable sessions, one per `host:port` (the newest ticket wins), shared by the
/// connections of one configuration across loops.
///
/// Sessions are kept serialized (`i2d_SSL_SESSION`), so the cache holds plain bytes and no
/// OpenSSL object crosses threads; each new connection decodes its own copy.
final class TLSSessionCache: Sendable {
    private struct Entries {
        var sessions: [String: [UInt8]] = [:]
        /// Keys, least recently stored first, for eviction.
        var order: [String] = []
    }

    private let entries = Mutex(Entries())
    /// Hosts remembered at most; the oldest is dropped beyond it.
    let capacity: Int

    init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// Stores a session for `key`, releasing the caller's reference to it.
    func store(_ session: OpaquePointer, for key: String) {
        defer { SSL_SESSION_free(session) }
        // Only sessions that can be resumed are worth keeping.
        guard SSL_SESSION_is_resumable(session) == 1 else { return }
        let length = i2d_SSL_SESSION(session, nil)
        guard length > 0 else { return }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_SSL_SESSION(session, &cursor)
        }
        guard written == length else { return }
        let capacity = self.capacity
        entries.withLock { entries in
            if entries.sessions.updateValue(bytes, forKey: key) != nil { entries.order.removeAll { $0 == key } }
            entries.order.append(key)
            if entries.order.count > capacity {
                entries.sessions[entries.order.removeFirst()] = nil
            }
        }
    }

    /// Offers the session stored for `key`, if any, to `connection`.
    func resume(_ connection: SSLConnection, key: String) {
        guard let bytes = entries.withLock({ $0.sessions[key] }) else { return }
        let session = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_SSL_SESSION(nil, &cursor, buffer.count)
        }
        guard let session else {
            OpenSSLErrorQueue.clear()
            return
        }
        connection.resume(session)
        SSL_SESSION_free(session)
    }

    /// The number of hosts with a session.
    var count: Int { entries.withLock { $0.sessions.count } }
}
