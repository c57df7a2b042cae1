/// A request as a handler sees it: the parsed head, and the body as a stream read on demand.
public struct HTTPServerRequest: Sendable {
    /// The request line and fields, exactly as sent.
    public var head: HTTPRequestHead
    /// The body, read as it arrives, with back-pressure; empty when the request has none.
    ///
    /// For a request with `Expect: 100-continue`, `100 Continue` is sent when iteration starts.
    public var body: HTTPBody
    /// The client's address.
    public var remoteAddress: SocketAddress?
    /// The address the connection was accepted on.
    public var localAddress: SocketAddress?
    /// What TLS negotiated on the connection (with the client's certificates under mutual TLS);
    /// nil for plain HTTP.
    public var transportSecurity: TransportSecurityInfo?
    /// The observer `HTTPServerConfiguration.observer` made for this exchange, if any: a handler wrapper finds its
    /// own state here (the exchange's trace, say).
    public var exchangeObserver: (any HTTPServerExchangeObserver)?

    /// Creates a request (for tests of handlers).
    /// - Parameters:
    ///   - head: The head.
    ///   - body: The body.
    ///   - remoteAddress: The client's address.
    ///   - localAddress: The server's address.
    ///   - transportSecurity: What TLS negotiated, if the connection is secured.
    ///   - exchangeObserver: The exchange's observer.
    public init(
        head: HTTPRequestHead, body: HTTPBody = .empty, remoteAddress: SocketAddress? = nil,
        localAddress: SocketAddress? = nil, transportSecurity: TransportSecurityInfo? = nil,
        exchangeObserver: (any HTTPServerExchangeObserver)? = nil
    ) {
        self.head = head
        self.body = body
        self.remoteAddress = remoteAddress
        self.localAddress = localAddress
        self.transportSecurity = transportSecurity
        self.exchangeObserver = exchangeObserver
    }

    /// The method.
    public var method: HTTPMethod { head.method }
    /// The request-target as sent.
    public var target: String { head.target }
    /// The protocol version.
    public var version: HTTPVersion { head.version }
    /// The header fields, in wire order.
    public var headers: HTTPHeaders { head.headers }
}
