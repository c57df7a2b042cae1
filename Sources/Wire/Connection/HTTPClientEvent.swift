import Synchronization

/// What an `HTTPClient`'s event listener is handed, one event at a time, as it happens (OkHttp's `EventListener`,
/// as a stream of values).
///
/// The listener is one `@Sendable` closure (`HTTPClientConfiguration.eventListener`) rather than a protocol with a
/// method per event: a bridge forwards every event through one entry point (to a logger, a metrics backend, a
/// tracer, an `AsyncStream`), an exhaustive `switch` over `Kind` tells it when a new event appears, and the events
/// are plain `Sendable` values it may keep or send elsewhere. It is called synchronously on the thread where the
/// event happened (often a connection's event loop): it must return quickly and never block.
///
/// Events of one call come in this order: `callStart`; for a new connection `dnsStart`/`dnsEnd` (host names only),
/// `connectStart`/`connectEnd` for each address tried, `tlsStart`/`tlsEnd` (https); `connectionAcquired`;
/// `requestHeadSent`, `requestBodySent` (when there is a body); `responseHeadReceived`; `responseBodyReceived`;
/// `connectionReleased`; then `callEnd` once the response body has been read, or `callFailed` at any point.
/// `connectionClosed` comes whenever the pool lets a connection go, for no call in particular. A
/// redirect or a retry repeats the part from `connectionAcquired` on (and the connection's setup, when it is new).
public struct HTTPClientEvent: Sendable, CustomStringConvertible {
    /// What happened.
    public enum Kind: Sendable {
        /// `execute` began.
        case callStart(method: HTTPMethod, url: String)
        /// The call is over: its response body was read to its end (or dropped by its reader).
        case callEnd
        /// The call failed, before or after its response head.
        case callFailed(HTTPClientError)
        /// A new connection began resolving `host`.
        case dnsStart(host: String)
        /// The resolution ended: the addresses, or the failure.
        case dnsEnd(host: String, result: Result<[SocketAddress], ConnectError>)
        /// A new connection began connecting to `address` (one per Happy Eyeballs attempt).
        case connectStart(address: SocketAddress)
        /// The attempt to `address` connected (nil error), failed, or was abandoned (`abandoned`: another address
        /// won, or the connect timed out).
        case connectEnd(address: SocketAddress, error: IOError?, abandoned: Bool)
        /// A new connection began its TLS handshake with `host`.
        case tlsStart(host: String)
        /// The handshake ended: what it negotiated, or the security layer's error.
        case tlsEnd(Result<TransportSecurityInfo?, HTTPClientError>)
        /// The pool handed the call a connection: opened for it (`reused` false) or an idle one.
        case connectionAcquired(reused: Bool)
        /// The call is done with its connection; `reusable` says whether it goes back to the pool.
        case connectionReleased(reusable: Bool)
        /// The pool let go of the connection: closed by the server or by the pool (after an error, a response that
        /// ends it, its idle timeout, or shutdown). Told once per connection that was established; `call` is nil.
        case connectionClosed
        /// The request head was written to the connection (`bytes` of it).
        case requestHeadSent(bytes: Int)
        /// The whole request body was written to the connection.
        case requestBodySent(bytes: Int)
        /// The final response head arrived (interim 1xx heads are not told).
        case responseHeadReceived(HTTPResponseHead)
        /// The response body ended after `bytes` bytes.
        case responseBodyReceived(bytes: Int)
    }

    /// The call the event belongs to: a number unique within the process, one per `execute`. For a connection's
    /// setup (DNS, connect, TLS), the call it was opened for; nil when the pool opened it for no call in particular
    /// (to replace one that closed while requests waited).
    public let call: Int?
    /// The connection the event concerns, a number unique within the process (also in
    /// `HTTPClientMetrics.Snapshot.connection`); nil for call events before a connection is known.
    public let connection: Int?
    /// When it happened.
    public let time: Deadline
    /// What happened.
    public let kind: Kind

    /// An event with these values.
    public init(call: Int?, connection: Int?, time: Deadline, kind: Kind) {
        self.call = call
        self.connection = connection
        self.time = time
        self.kind = kind
    }

    /// The event's name (`callStart`, `dnsEnd`...), the call and the connection.
    public var description: String {
        let name = "\(kind)".prefix { $0 != "(" }
        return "\(name) call \(call.map(String.init) ?? "-") connection \(connection.map(String.init) ?? "-")"
    }

    /// Numbers calls and connections, process-wide.
    static let calls = Atomic<Int>(0)
    static let connections = Atomic<Int>(0)

    /// The next call's number.
    static func nextCall() -> Int { calls.add(1, ordering: .relaxed).newValue }
    /// The next connection's number.
    static func nextConnection() -> Int { connections.add(1, ordering: .relaxed).newValue }
}

/// Receives an `HTTPClient`'s events (`HTTPClientConfiguration.eventListener`).
public typealias HTTPClientEventListener = @Sendable (HTTPClientEvent) -> Void
