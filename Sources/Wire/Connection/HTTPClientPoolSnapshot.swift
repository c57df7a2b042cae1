/// The state of one of an `HTTPClient`'s connection pools (one per origin, and per proxy route) at one moment:
/// what `HTTPClient.poolSnapshots()` returns, and what a `.poolWaiterLimit` or `.connectionAcquireTimeout` error
/// carries (`HTTPClientError.poolSnapshot`).
public struct HTTPClientPoolSnapshot: Hashable, Sendable, CustomStringConvertible {
    /// The origin the pool serves (`http://example.com:80`, `https://host:443 via http://proxy:3128`,
    /// `http+unix:///path`).
    public var origin: String
    /// Connections established and not closed: `idle` plus `leased`.
    public var open: Int
    /// Open connections parked, waiting for a request.
    public var idle: Int
    /// Open connections carrying at least one request.
    public var leased: Int
    /// Connections being opened (resolving, connecting, TLS, a proxy's handshake).
    public var connecting: Int
    /// Requests waiting for a connection.
    public var waiters: Int
    /// How long the request that has waited longest has waited; nil when none waits.
    public var oldestWaiterAge: Duration?
    /// Connections established over the pool's life.
    public var connectionsOpened: Int
    /// Established connections closed over the pool's life (by either side, on error or idle).
    public var connectionsClosed: Int

    /// A snapshot with these values.
    public init(
        origin: String, open: Int, idle: Int, leased: Int, connecting: Int, waiters: Int, oldestWaiterAge: Duration?,
        connectionsOpened: Int, connectionsClosed: Int
    ) {
        self.origin = origin
        self.open = open
        self.idle = idle
        self.leased = leased
        self.connecting = connecting
        self.waiters = waiters
        self.oldestWaiterAge = oldestWaiterAge
        self.connectionsOpened = connectionsOpened
        self.connectionsClosed = connectionsClosed
    }

    /// One line: the origin and the counts.
    public var description: String {
        let age = oldestWaiterAge.map { ", oldest waiting \($0)" } ?? ""
        return "\(origin): \(open) open (\(idle) idle, \(leased) leased), \(connecting) connecting, \(waiters) waiting\(age); "
            + "\(connectionsOpened) opened, \(connectionsClosed) closed"
    }
}
