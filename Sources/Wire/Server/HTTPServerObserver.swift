/// Watches the exchanges of an `HTTPServer`: where logs, metrics and traces hook in without the server knowing them.
///
/// Set on `HTTPServerConfiguration.observer`. For each request head the server accepts, it asks the observer for an
/// exchange observer; that object hears the response head and the exchange's end, and reaches the handler as
/// `HTTPServerRequest.exchangeObserver` (so a handler wrapper can run the handler inside the exchange's trace).
/// Without an observer the server pays one branch per request.
///
/// Every call comes on the connection's event loop thread, in order, and must return quickly: it runs on the
/// request path of every connection that loop serves.
public protocol HTTPServerObserver: Sendable {
    /// A request head arrived and is about to be answered (by the handler or an immediate response).
    /// - Parameter exchange: The request's head and the connection's addresses.
    /// - Returns: The observer of this exchange, or nil to watch nothing more of it.
    func exchangeStarted(_ exchange: HTTPServerExchangeStart) -> (any HTTPServerExchangeObserver)?

    /// A connection was accepted; the default (in an extension) watches none of its bytes.
    /// - Parameter connection: The connection's addresses.
    /// - Returns: The observer of the connection's bytes, or nil.
    func connectionOpened(_ connection: HTTPServerConnectionStart) -> (any HTTPServerConnectionObserver)?
}

/// The observer of one exchange, made by `HTTPServerObserver.exchangeStarted(_:)`.
///
/// `responseHeadWritten(_:)` comes at most once, `exchangeEnded(_:)` exactly once, last.
public protocol HTTPServerExchangeObserver: AnyObject, Sendable {
    /// The response's head was queued for writing (the handler's, the server's 500 after a handler that wrote
    /// nothing, or an immediate response).
    /// - Parameter head: The head as the handler gave it (the server's own fields, such as `Date`, are not in it).
    func responseHeadWritten(_ head: HTTPResponseHead)

    /// The exchange is over: its response was queued whole, or it ended without one.
    /// - Parameter outcome: How it ended.
    func exchangeEnded(_ outcome: HTTPServerExchangeOutcome)
}

/// What an `HTTPServerObserver` learns of a request when its exchange starts.
public struct HTTPServerExchangeStart: Sendable {
    /// The request head, as sent.
    public var head: HTTPRequestHead
    /// The client's address.
    public var remoteAddress: SocketAddress?
    /// The address the connection was accepted on.
    public var localAddress: SocketAddress?
    /// Whether the connection is TLS.
    public var isSecure: Bool

    /// Creates the start of an exchange (for tests of observers).
    /// - Parameters:
    ///   - head: The request head.
    ///   - remoteAddress: The client's address.
    ///   - localAddress: The server's address.
    ///   - isSecure: Whether the connection is TLS.
    public init(head: HTTPRequestHead, remoteAddress: SocketAddress?, localAddress: SocketAddress?, isSecure: Bool) {
        self.head = head
        self.remoteAddress = remoteAddress
        self.localAddress = localAddress
        self.isSecure = isSecure
    }
}

/// How an exchange ended.
public enum HTTPServerExchangeOutcome: Sendable {
    /// The whole response was queued for writing.
    case completed
    /// The exchange ended without a whole response: the connection closed or was aborted, a timeout fired, or the
    /// handler failed after part of the response went out.
    case failed(HTTPServerError)
}

extension HTTPServerObserver {
    /// A connection was accepted (over TLS, wrapped; its handshake still to come). The default watches nothing of it.
    /// - Parameter connection: The connection's addresses.
    /// - Returns: The observer of the connection's bytes, or nil (then the connection pays nothing for it).
    public func connectionOpened(_ connection: HTTPServerConnectionStart) -> (any HTTPServerConnectionObserver)? {
        nil
    }
}
