/// How an `HTTPClient` behaves. Every default is what a production service would want.
///
/// The settings are plain values; `HTTPClient.init` checks them all (see `validate()`) and throws
/// `HTTPClientError` of code `.invalidConfiguration` naming the first that cannot work, so a bad
/// setting is refused when the client is made, never by a trap at its first request.
public struct HTTPClientConfiguration: Sendable {
    /// Connections per origin at most (open or opening). Default 8.
    public var maxConnectionsPerHost = 8
    /// How long an unused pooled connection is kept. Default 60 s.
    public var idleTimeout: Duration = .seconds(60)
    /// How long establishing a connection may take (resolution included). Default 10 s.
    public var connectTimeout: Duration = .seconds(10)
    /// How long the server may stay silent while a response is awaited or streamed. Default 30 s.
    public var readTimeout: Duration = .seconds(30)
    /// Requests allowed to wait for a connection to one origin at once, when all `maxConnectionsPerHost` are busy
    /// or being opened; one more fails at once with `.poolWaiterLimit`, carrying the pool's state. nil (the
    /// default): no limit.
    public var maxWaitersPerHost: Int?
    /// How long a request may wait for the pool to hand it a connection (opening one included) before failing with
    /// `.connectionAcquireTimeout`, carrying the pool's state; nothing has been sent then. nil (the default): it
    /// waits as long as its own deadline and `connectTimeout` allow.
    public var connectionAcquireTimeout: Duration?
    /// Whether each response's metrics get a `TCP_INFO` sample of its connection as the response ends
    /// (`HTTPClientMetrics.Snapshot.tcpInfo`: round-trip time, retransmits, congestion window, delivery rate). One
    /// `getsockopt` per response. Default false.
    public var samplesTCPInfo = false
    /// Told of every call's events as they happen (`HTTPClientEvent`): call start and end, DNS, each connect attempt,
    /// TLS, the connection acquired and released, the request and response heads and bodies. nil (the default)
    /// costs one branch per event.
    public var eventListener: HTTPClientEventListener?
    /// The redirect policy. Default: follow up to 20.
    ///
    /// Whatever the policy, a redirect only ever leads to `http` or `https`: a `Location` naming any other scheme
    /// (`http+unix`, `file`, ...) fails the request with `.redirectSchemeNotAllowed` before anything is sent, and
    /// so does a URL a `rewrite` hook returns. A request the caller sends to a Unix socket may be redirected on that
    /// same socket, never to another one.
    public var redirects = RedirectPolicy.follow(max: 20)
    /// Whether a redirect from `https` to `http` is followed. Default true, as curl and OkHttp do; the request
    /// then goes out without its `Authorization`, `Proxy-Authorization` and `Cookie` fields, as on every redirect
    /// that leaves the origin. False fails such a hop with `.redirectRefused`.
    public var followsRedirectsFromHTTPSToHTTP = true
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
    /// The proxy requests go through. Default `.none`: Wire's client uses a proxy only when told to (`.environment()`
    /// follows the `*_proxy` variables as curl reads them). A request's own `proxy` overrides it.
    ///
    /// Through an HTTP proxy, `http` URLs are forwarded (absolute-form targets, the proxy's credentials sent
    /// preemptively as Basic `Proxy-Authorization`, keep-alive connections to the proxy pooled and shared across
    /// origins); `https` URLs go through a `CONNECT` tunnel per connection, pooled per origin, with TLS verified
    /// against the origin's name and the `tls` settings. Through a SOCKS proxy every URL goes through a tunnel.
    /// A Unix socket request never uses a proxy.
    public var proxy: ProxyConfiguration = .none
    /// Whether `http` URLs also go through an HTTP proxy in a `CONNECT` tunnel instead of being forwarded (curl's
    /// `--proxytunnel`). Default false.
    public var tunnelsThroughHTTPProxy = false
    /// The version on each request line. Default HTTP/1.1; HTTP/1.0 (curl's `--http1.0`) sends no `Expect` and
    /// refuses a body of unknown length (HTTP/1.0 has no chunked coding), and a connection is kept as each response
    /// allows, as curl keeps it.
    package var requestVersion = HTTPVersion.http1_1
    /// How the client's TCP sockets are set up before they connect (`TCP_NODELAY`, keep-alive probes, a local
    /// interface or address). Default: `TCP_NODELAY` alone.
    package var socketOptions = ClientSocketOptions()
    /// The TLS layer to `https` proxies that carry none of their own (`Proxy.transportSecurity`); WireTLS sets it
    /// through `proxyTLS`.
    package var proxyTransportSecurity: (any ClientTransportSecurity)?
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
        /// Follow up to `max` redirects where `hop` says: it returns the URL to request next (`hop.to`, or one of
        /// its own), or nil to stop and return the redirect response as it is; throwing refuses the hop. The URL it
        /// returns passes the same scheme check as a `Location`.
        case rewrite(max: Int, hop: @Sendable (RedirectHop) throws -> HTTPURL?)
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

        /// Up to `maxInFlight` requests in flight per connection, which must be at least 2: a
        /// smaller value is refused by `HTTPClient.init` (use `.disabled` for one at a time).
        public static func enabled(maxInFlight: Int = 8) -> Pipelining {
            Pipelining(maxInFlight: maxInFlight, isEnabled: true)
        }

        /// Whether `enabled(maxInFlight:)` made it: then one request in flight is a mistake, not "off".
        private let isEnabled: Bool

        private init(maxInFlight: Int, isEnabled: Bool = false) {
            self.maxInFlight = maxInFlight
            self.isEnabled = isEnabled
        }

        /// Throws unless the depth can work.
        func validate() throws(ConfigurationError) {
            try ConfigurationError.require("pipelining.maxInFlight", maxInFlight, atLeast: isEnabled ? 2 : 1)
        }
    }
}

extension HTTPClientConfiguration {
    /// Checks that every setting can work; `HTTPClient.init` calls it.
    ///
    /// Refused: `maxConnectionsPerHost` or `pipelining.maxInFlight` below 1 (below 2 with
    /// `.enabled`), a negative `maxWaitersPerHost`, a connect, read or connection-acquire timeout of zero or less, a negative idle or
    /// `100-continue` timeout, a negative redirect maximum or `expectContinueThreshold`, and parser
    /// limits that no response could meet (a start line, head or field count below 1, a negative
    /// chunk-extension or body limit).
    ///
    /// - Throws: `HTTPClientError` of code `.invalidConfiguration`; its `configurationError` names
    ///   the setting, the value and what it must be.
    public func validate() throws(HTTPClientError) {
        do throws(ConfigurationError) {
            try ConfigurationError.require("maxConnectionsPerHost", maxConnectionsPerHost, atLeast: 1)
            try pipelining.validate()
            try ConfigurationError.requirePositive("connectTimeout", connectTimeout)
            try ConfigurationError.requirePositive("readTimeout", readTimeout)
            try ConfigurationError.requireNotNegative("idleTimeout", idleTimeout)
            try ConfigurationError.requireNotNegative("expectContinueTimeout", expectContinueTimeout)
            if let maxWaitersPerHost { try ConfigurationError.require("maxWaitersPerHost", maxWaitersPerHost, atLeast: 0) }
            if let connectionAcquireTimeout {
                try ConfigurationError.requirePositive("connectionAcquireTimeout", connectionAcquireTimeout)
            }
            switch redirects {
            case .disallow: break
            case .follow(let max, _): try ConfigurationError.require("redirects.follow(max:)", max, atLeast: 0)
            case .rewrite(let max, _): try ConfigurationError.require("redirects.rewrite(max:)", max, atLeast: 0)
            }
            if let threshold = expectContinueThreshold {
                try ConfigurationError.require("expectContinueThreshold", threshold, atLeast: 0)
            }
            try parserConfiguration.validate(prefix: "parserConfiguration.")
        } catch {
            throw .invalidConfiguration(error)
        }
    }
}
