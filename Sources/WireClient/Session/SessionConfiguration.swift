public import Wire
public import WireTLS

/// How a `SessionManager` behaves (NSURLSessionConfiguration), for the features WireClient has.
///
/// ```swift
/// var configuration = SessionConfiguration.default
/// configuration.timeoutIntervalForRequest = .seconds(10)
/// configuration.httpAdditionalHeaders = ["Accept": "application/json"]
/// let manager = try SessionManager(configuration: configuration)
/// ```
public struct SessionConfiguration: Sendable {
    /// The idle timeout: the longest silence allowed while connecting, sending or waiting for bytes. It restarts with
    /// every byte and is paused while the task is suspended; expiry fails the task with `.timedOut`. A request's
    /// `timeoutInterval` overrides it. Default 60 s.
    public var timeoutIntervalForRequest: Duration = .seconds(60)
    /// The total time a task may take from its first resume to its completion, suspension included; expiry fails it
    /// with `.timedOut`. Default 7 days.
    public var timeoutIntervalForResource: Duration = .seconds(7 * 24 * 3600)
    /// Header fields added to every request that lacks a field of the same name.
    public var httpAdditionalHeaders = HTTPHeaders()
    /// Connections per origin at most; Wire's per-host pool limit of the session's own client. Default 6. Requests
    /// that ask different things of their connections (another `networkServiceType`, cellular access denied) have
    /// pools of their own, each with this limit.
    public var httpMaximumConnectionsPerHost = 6
    /// The most bytes a data task buffers; a larger body fails the task with `.responseTooLarge`. Default 64 MiB.
    public var maximumBufferedResponseSize = 64 * 1_048_576
    /// Whether requests offer `Accept-Encoding: gzip, deflate` (when they carry no `Accept-Encoding` of their own) and
    /// gzip and deflate bodies are decoded as they arrive, for data and download tasks alike. Progress and
    /// `expectedContentLength` count the encoded bytes on the wire, as URLSession's do. A request opts out by
    /// sending its own `Accept-Encoding` (`identity`). Default true.
    public var decodesContent = true
    /// The decompression-bomb limits of decoding; a body beyond them fails with `.cannotDecodeContentData`.
    public var contentDecoding = ContentDecodingLimits()
    /// Tasks of the session with a request on the wire at once; resumed tasks beyond it wait in resume order.
    /// nil (the default): no limit but the per-host connection limit.
    public var maximumConcurrentTasks: Int?
    /// Redirect hops a task follows at most; one more fails it with `.tooManyRedirects`. Default 16.
    public var maximumRedirects = 16
    /// Which URLs may be fetched at all (ATS-like, checked before any socket and at every redirect hop); everything
    /// by default.
    public var transportSecurity = TransportSecurityPolicy.allowsArbitraryLoads
    /// Credentials for `.performDefaultHandling` of an authentication challenge; none by default.
    public var credentialStorage: CredentialStorage?
    /// Which proxy requests go through: by default the one the environment names, as curl reads it (`http_proxy`,
    /// `HTTPS_PROXY`/`https_proxy`, `ALL_PROXY`/`all_proxy`, and `NO_PROXY`/`no_proxy`; see `ProxyEnvironment`), as
    /// Go's and Python's clients do. `.none` goes direct; `.proxy(_:noProxy:)` names one.
    ///
    /// `http` URLs are forwarded to an HTTP proxy, `https` ones go through a `CONNECT` tunnel (TLS and its
    /// verification are the origin's, with the session's security policy); SOCKS proxies tunnel both. Cookies,
    /// the cache and redirects behave as without a proxy: they are the origin's, and a tunnelled request's fields
    /// never reach the proxy. A proxy's credentials (`Proxy.credentials`, or in the URL) are sent preemptively as
    /// Basic; a 407 without them goes to the challenge hook for a protection space whose `isProxy` is true (see
    /// `SessionManager.taskDidReceiveAuthenticationChallenge`). With an adopted `httpClient`, that client's own
    /// `proxy` applies instead.
    public var proxy: ProxyConfiguration = .environment()
    /// TLS for `https` URLs of the session's own client (trust roots, client certificate, versions). Default: the
    /// system's roots, TLS 1.2 at least.
    public var tls: TLSConfiguration? = TLSConfiguration()
    /// A Wire client to adopt instead of making one: several managers on one client share its `http` connections.
    /// The session never shuts an adopted client down, and `httpMaximumConnectionsPerHost` and `tls` are then the
    /// client's own. `https` requests go through a client the session makes from the adopted client's configuration
    /// with the session's security policy and trust hook applied, so an adopted client cannot bypass them. nil (the
    /// default): the session makes, owns and shuts down its own client.
    public var httpClient: HTTPClient?
    /// Whether requests carry the storage's cookies and responses' `Set-Cookie` fields are stored; a request's
    /// `shouldHandleCookies` overrides it. Default true. One spelling for the switch on the configuration, the request
    /// serializer and the request (NSURLSessionConfiguration's `HTTPShouldSetCookies` is the deprecated
    /// `httpShouldSetCookies`).
    public var shouldHandleCookies = true
    /// NSURLSessionConfiguration's spelling of `shouldHandleCookies`, kept for code written against it.
    @available(*, deprecated, renamed: "shouldHandleCookies")
    public var httpShouldSetCookies: Bool {
        get { shouldHandleCookies }
        set { shouldHandleCookies = newValue }
    }
    /// Which cookies from responses are stored. Default `.always`.
    public var httpCookieAcceptPolicy = CookieAcceptPolicy.always
    /// Where cookies are kept: `CookieStorage.shared` by default; nil keeps none.
    public var httpCookieStorage: CookieStorage? = CookieStorage.shared
    /// The response cache data tasks consult and fill (RFC 9111; the WireClient catalog's article "Caching and
    /// cookies"); nil (the default) for none: a server library should not cache silently. `.ephemeral` has a private
    /// memory-only one of 4 MiB.
    public var urlCache: URLCache?
    /// How requests use `urlCache` unless a request's `cachePolicy` says otherwise. Default `.useProtocolCachePolicy`.
    public var requestCachePolicy = CachePolicy.useProtocolCachePolicy
    /// Whether the session's client pipelines idempotent requests (HTTP/1.1 pipelining, RFC 9112 §9.3.2: up to 8 in
    /// flight per connection once every connection of the host is busy); a request's `shouldUsePipelining` of false
    /// keeps that request out of pipelines. Off by default, as in NSURLSessionConfiguration and AFImageDownloader:
    /// some servers and proxies mishandle it. With an adopted `httpClient`, the client's own `pipelining` applies.
    /// One spelling on the configuration, the request serializer and the request (NSURLSessionConfiguration's
    /// `HTTPShouldUsePipelining` is the deprecated `httpShouldUsePipelining`).
    public var shouldUsePipelining = false
    /// NSURLSessionConfiguration's spelling of `shouldUsePipelining`, kept for code written against it.
    @available(*, deprecated, renamed: "shouldUsePipelining")
    public var httpShouldUsePipelining: Bool {
        get { shouldUsePipelining }
        set { shouldUsePipelining = newValue }
    }
    /// Whether connections may go out through a cellular modem; a request's `allowsCellularAccess` overrides it.
    /// When false, a new connection whose local address is on an interface `interfaceClassifier` calls `.wwan` is
    /// closed before its first request and the task fails with `.notConnectedToInternet`. Default true.
    public var allowsCellularAccess = true
    /// The traffic class of the session's connections (DSCP, `NetworkServiceType.trafficClass`), set on each socket
    /// before it connects; a request's `networkServiceType` overrides it. Connections are pooled per service type.
    /// Default `.default` (the system's class).
    public var networkServiceType = NetworkServiceType.default
    /// How interfaces are classified for `allowsCellularAccess` (sysfs under `/sys` by default; a fixture tree in
    /// tests).
    public var interfaceClassifier = InterfaceClassifier()

    /// Stages of the caller's that run first in every task's transfer chain, once per task: they see the request as
    /// the task was made with it and the final response (after retries, redirects, challenges and the cache), and may
    /// rewrite, short-circuit or observe both. Empty by default. Not archived.
    public var applicationStages: [any TransferStage] = []
    /// Stages of the caller's around each network exchange: every hop (each redirect, each challenge's replay), with
    /// the fields as they go out (cookies and the cache's conditional fields included), and the response as it
    /// came, before decoding. Not called for an answer from the cache. Empty by default. Not archived.
    public var networkStages: [any TransferStage] = []

    /// The defaults listed on each property.
    public init() {}

    /// The default configuration.
    public static var `default`: SessionConfiguration { SessionConfiguration() }

    /// A configuration that keeps nothing beyond the session: a cookie storage of its own, in memory, and a private
    /// memory-only cache of 4 MiB that never touches the disk.
    public static var ephemeral: SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.httpCookieStorage = CookieStorage()
        configuration.urlCache = URLCache.ephemeral()
        return configuration
    }

    /// The Wire client configuration a session builds its own client with: the per-host limit, no redirects
    /// (WireClient follows them itself), TLS. Wire's connect and read timeouts are set to the resource timeout: the
    /// idle timeout is the session's own, per request and paused while a task is suspended. Wire adds no
    /// `User-Agent` of its own: the request serializer sets one by default, and a request without one (a serializer
    /// told to remove it) goes out without one.
    var clientConfiguration: HTTPClientConfiguration {
        var configuration = HTTPClientConfiguration()
        configuration.userAgent = nil
        configuration.maxConnectionsPerHost = httpMaximumConnectionsPerHost
        // Wire refuses a timeout of zero or less; such a resource timeout has expired already, and the session's
        // own watch ends the task with `.timedOut`.
        let bound = max(timeoutIntervalForResource, .milliseconds(1))
        configuration.connectTimeout = bound
        configuration.readTimeout = bound
        configuration.redirects = .disallow
        configuration.pipelining = shouldUsePipelining ? .enabled() : .disabled
        configuration.tls = tls
        configuration.proxy = proxy
        return configuration
    }
}
