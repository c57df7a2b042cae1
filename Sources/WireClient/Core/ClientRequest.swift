import FoundationEssentials
import Wire

/// A request as WireClient builds, serializes, adapts and sends it (NSURLRequest).
///
/// Every optional setting is "use the session's value" when nil; a request serializer copies the settings that were
/// set on it.
public struct ClientRequest: Sendable {
    /// The stored values. A request is copied into every stage of the transfer chain and every step of a task, so
    /// they sit behind one reference: a copy is one retain, and a request changed by its only owner (a serializer
    /// building it) is changed in place.
    private struct Fields: Sendable {
        var url: URL
        /// `url` as Wire parsed it, when whoever made the request knew it already; nil to parse `url` when sent.
        var wireURL: Boxed<HTTPURL>?
        var method: String
        var headers: HTTPHeaders
        /// The settings a request rarely has, nil while every one is.
        var settings: Boxed<Settings>?
        /// The body behind a reference of its own (an enum of files, data and streams, tens of bytes wide), so that
        /// changing a field does not copy it.
        var body: Boxed<RequestBody>?
    }

    /// The settings a request rarely has (each nil: the session's), together behind one reference.
    private struct Settings: Sendable {
        var timeoutInterval: Duration?
        var cachePolicy: CachePolicy?
        var shouldHandleCookies: Bool?
        var allowsCellularAccess: Bool?
        var shouldUsePipelining: Bool?
        var networkServiceType: NetworkServiceType?
        var interceptor: (any Interceptor)?
        var proxyAnswer: Proxy?
    }

    private var fields: CopyOnWrite<Fields>

    /// The URL to fetch.
    public var url: URL {
        get { fields.value.url }
        set {
            fields.value.url = newValue
            fields.value.wireURL = nil
        }
    }
    /// `url` as Wire parsed it, when whoever made the request knew it already (`HTTPSessionManager` remembers the
    /// paths it resolved); nil to parse `url` when the request is sent. Setting `url` forgets it.
    var wireURL: Boxed<HTTPURL>? {
        get { fields.value.wireURL }
        set { fields.value.wireURL = newValue }
    }
    /// The method, as given (serializers upper-case it only to look it up).
    public var method: String {
        get { fields.value.method }
        set { fields.value.method = newValue }
    }
    /// The header fields, in order.
    public var headers: HTTPHeaders {
        get { fields.value.headers }
        _modify { yield &fields.value.headers }
    }
    /// The body, if any.
    public var body: RequestBody? {
        get { fields.value.body?.value }
        set { fields.value.body = newValue.map(Boxed.init) }
    }
    /// The idle timeout: the longest silence allowed while connecting, sending or waiting for bytes.
    public var timeoutInterval: Duration? {
        get { fields.value.settings?.value.timeoutInterval }
        set { changeSettings { $0.timeoutInterval = newValue } }
    }
    /// How the request may use the cache.
    public var cachePolicy: CachePolicy? {
        get { fields.value.settings?.value.cachePolicy }
        set { changeSettings { $0.cachePolicy = newValue } }
    }
    /// Whether cookies are sent and stored for this request; nil uses the session's `shouldHandleCookies`.
    public var shouldHandleCookies: Bool? {
        get { fields.value.settings?.value.shouldHandleCookies }
        set { changeSettings { $0.shouldHandleCookies = newValue } }
    }
    /// Whether the request may go over a cellular interface; nil uses the session's `allowsCellularAccess`.
    public var allowsCellularAccess: Bool? {
        get { fields.value.settings?.value.allowsCellularAccess }
        set { changeSettings { $0.allowsCellularAccess = newValue } }
    }
    /// Whether the request may be pipelined; nil follows the session's `shouldUsePipelining`. false keeps it out of
    /// pipelines on a session that pipelines; true cannot turn pipelining on for a session that does not (the
    /// connections are the session's).
    public var shouldUsePipelining: Bool? {
        get { fields.value.settings?.value.shouldUsePipelining }
        set { changeSettings { $0.shouldUsePipelining = newValue } }
    }
    /// The connection's traffic class (DSCP); nil uses the session's `networkServiceType`. Requests of different
    /// service types never share a connection.
    public var networkServiceType: NetworkServiceType? {
        get { fields.value.settings?.value.networkServiceType }
        set { changeSettings { $0.networkServiceType = newValue } }
    }
    /// This request's own adapters and retriers, consulted after the manager's (`SessionManager.interceptor`); nil
    /// for none.
    public var interceptor: (any Interceptor)? {
        get { fields.value.settings?.value.interceptor }
        set { changeSettings { $0.interceptor = newValue } }
    }

    /// Whether the request has an interceptor of its own, asked without copying it out.
    var hasInterceptor: Bool { fields.value.settings?.value.interceptor != nil }

    /// The proxy this hop goes through with the answer to its 407 (`ProxyChallengeStage`): the session's route, with
    /// the `Proxy-Authorization` the challenge hook or the credential storage gave in its `headers`. Nil: the
    /// session's proxy configuration decides.
    var proxyAnswer: Proxy? {
        get { fields.value.settings?.value.proxyAnswer }
        set { changeSettings { $0.proxyAnswer = newValue } }
    }

    private mutating func changeSettings(_ change: (inout Settings) -> Void) {
        var changed = fields.value.settings?.value ?? Settings()
        change(&changed)
        fields.value.settings = Boxed(changed)
    }

    /// Creates a request.
    /// - Parameters:
    ///   - url: The URL to fetch.
    ///   - method: The method; GET by default.
    ///   - headers: The header fields.
    ///   - body: The body.
    public init(url: URL, method: String = "GET", headers: HTTPHeaders = HTTPHeaders(), body: RequestBody? = nil) {
        fields = CopyOnWrite(Fields(url: url, method: method, headers: headers, body: body.map(Boxed.init)))
    }

    /// The first value of the field called `name` (case-insensitive).
    /// - Parameter name: The field name.
    /// - Returns: The value, or nil when absent.
    public func value(forHTTPHeaderField name: String) -> String? {
        headers.first(name: name)
    }

    /// Replaces every field called `name` (case-insensitive) with one holding `value`, or removes them when `value`
    /// is nil.
    /// - Parameters:
    ///   - value: The new value, or nil to remove the field.
    ///   - name: The field name.
    public mutating func setValue(_ value: String?, forHTTPHeaderField name: String) {
        if let value { headers.replaceOrAdd(name: name, value: value) } else { headers.remove(name: name) }
    }
}
