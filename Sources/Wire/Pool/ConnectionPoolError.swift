/// Why a pool could not hand a request a connection, with the error underneath kept whole (the
/// connect attempts, the system call and errno, the security layer's reason). The pool's user
/// (Client/) maps each case to its own public error.
package enum ConnectionPoolError: Error, Sendable {
    /// Resolving the name or connecting failed or timed out; `ConnectError` says which, with
    /// every address tried.
    case connectFailed(ConnectError)
    /// A system call failed while the connected socket was being set up as a stream.
    case setupFailed(IOError)
    /// The event loop closed while the connection was being set up.
    case loopClosed(EventLoopClosedError)
    /// The security layer (WireTLS) refused the connection: the handshake, the peer's certificate,
    /// a pin or the trust hook; the layer's own error.
    case securityFailed(any Error)
    /// The new connection's stream closed before its first request, with the error it closed
    /// with (nil for a clean close).
    case closedBeforeFirstRequest((any Error)?)
    /// A connection opened for the request was lost before it was established, with no error of
    /// its own to report.
    case connectionLost(origin: ConnectionPool.Key)
    /// The new connection failed the requests' admission check (`ConnectionRequirements.admission`) and was closed.
    case notAdmitted(reason: String, local: SocketAddress, remote: SocketAddress)
    /// The failure happened at `proxy`: connecting to it, securing the connection to it, or its handshake.
    indirect case atProxy(Proxy, ConnectionPoolError)
    /// The HTTP proxy answered `CONNECT` with this head, not a 2xx; `request` is the `CONNECT` head as written.
    case proxyRefused(HTTPResponseHead, request: [UInt8])
    /// The `CONNECT` exchange with the proxy failed (the connection closed, the answer was malformed or late).
    case proxyExchangeFailed(HTTPClientError)
    /// A SOCKS handshake failed, or a proxy sent bytes of the tunnel before the client's first.
    case proxyHandshakeFailed(ProxyHandshakeFailure)
    /// An `https` proxy has no TLS layer to reach it with.
    case proxyNeedsTLS
    /// The pool is shut down.
    case shutDown
    /// The request stopped waiting (its `cancel` was called: a deadline, a cancelled task).
    case abandoned
    /// As many requests waited as the pool allows (`Configuration.maxWaiters`): refused at once, with the pool's state.
    case waiterLimit(HTTPClientPoolSnapshot)
    /// No connection came within `Configuration.acquireTimeout`, with the pool's state when the wait ended.
    case acquireTimedOut(HTTPClientPoolSnapshot, after: Duration)
}
