/// How an `HTTPClient` behaves. Every default is what a production service would want.
public struct HTTPClientConfiguration: Sendable {
    /// Connections per origin at most (open or opening). Default 8.
    public var maxConnectionsPerHost = 8
    /// How long an unused pooled connection is kept. Default 60 s.
    public var idleTimeout: Duration = .seconds(60)
    /// How long establishing a connection may take (resolution included). Default 10 s.
    public var connectTimeout: Duration = .seconds(10)
    /// How long the server may stay silent while a response is awaited or streamed. Default 30 s.
    public var readTimeout: Duration = .seconds(30)
    /// The redirect policy. Default: follow up to 20.
    public var redirects = RedirectPolicy.follow(max: 20)
    /// Retry a request once on a fresh connection when a reused one turns out closed before any
    /// response byte (idempotent methods, or requests with an `Idempotency-Key`). Default on.
    public var retriesStaleConnections = true
    /// HTTP/1.1 pipelining (RFC 9112 §9.3.2). Default: off, as in most clients, because some
    /// servers and proxies mishandle it.
    public var pipelining = Pipelining.disabled
    /// Parser limits and leniency for responses. Default: `.userAgent`, strict except that obs-fold in a
    /// response is replaced by one SP, as RFC 9112 §5.2 requires of a user agent.
    public var parserConfiguration = HTTP1ParserConfiguration.userAgent
    /// Name resolution. Default: the system resolver.
    public var resolver: any Resolver = SystemResolver()
    /// Sent as `User-Agent` when the request has none; nil sends none.
    public var userAgent: String? = "Wire/0.1"
    /// How long to wait for `100 Continue` before sending a body anyway (RFC 9110 §10.1.1).
    public var expectContinueTimeout: Duration = .seconds(1)
    /// Uploads of at least this many bytes, or of unknown length, ask `Expect: 100-continue`
    /// first, so a server that will refuse them (401, 413) can say so before the body is sent.
    /// nil never adds it; a request's own `Expect` field is always honoured. Default 1 MiB.
    public var expectContinueThreshold: Int? = 1 << 20
    /// The TLS layer for `https` URLs; nil (the default in Wire alone) refuses them. WireTLS sets
    /// it through its public `tls` property.
    package var transportSecurity: (any ClientTransportSecurity)?

    /// The default configuration.
    public init() {}

    /// What to do with 3xx responses that carry a `Location`.
    public enum RedirectPolicy: Sendable {
        /// Return redirect responses as they are.
        case disallow
        /// Follow up to `max` redirects; `hop` may inspect each and refuse it (throwing or false).
        case follow(max: Int, hop: (@Sendable (RedirectHop) throws -> Bool)? = nil)
    }

    /// One redirect about to be followed.
    public struct RedirectHop: Sendable {
        /// The URL that answered with a redirect.
        public var from: HTTPURL
        /// Where it points.
        public var to: HTTPURL
        /// The redirect status.
        public var status: HTTPStatus
        /// The method the next request will use.
        public var method: HTTPMethod
    }
}

extension HTTPClientConfiguration {
    /// Whether idempotent requests may be sent on a connection before earlier responses arrive.
    ///
    /// Only requests that can be replayed join a pipeline: idempotent methods, keep-alive, no
    /// `Expect`, the whole body in memory. Connections are opened up to the per-host limit first;
    /// pipelining starts when all are busy. When the server closes a connection with requests
    /// queued behind the response it finished, those requests are retried on a fresh connection.
    /// A request abandoned while others are ahead of it has its response read and dropped, so
    /// the connection survives.
    public struct Pipelining: Sendable, Hashable {
        /// Requests in flight on one connection at most; 1 means no pipelining.
        public var maxInFlight: Int

        /// One request per connection at a time.
        public static let disabled = Pipelining(maxInFlight: 1)

        /// Up to `maxInFlight` requests in flight per connection (at least 2).
        public static func enabled(maxInFlight: Int = 8) -> Pipelining {
            precondition(maxInFlight >= 2, "pipelining needs at least two requests in flight")
            return Pipelining(maxInFlight: maxInFlight)
        }

        private init(maxInFlight: Int) { self.maxInFlight = maxInFlight }
    }
}
