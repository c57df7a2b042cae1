/// The proxy variables of an environment, read as curl 7.88 reads them (lib/url.c, `detect_proxy` and
/// `create_conn_helper_init_proxy`).
///
/// - `<scheme>_proxy` in lower case, then in upper case, except `http_proxy`, which is read in lower case only: a
///   CGI program's `HTTP_PROXY` comes from the request's `Proxy:` header, so anyone could set it.
/// - Then `all_proxy`, then `ALL_PROXY`.
/// - `no_proxy`, then `NO_PROXY`.
/// - An empty value counts as unset: the next name is read.
///
/// The environment is a lookup passed in (a dictionary, or the process's through `process`), so the rules are pure.
public struct ProxyEnvironment: Sendable {
    private let lookup: @Sendable (String) -> String?

    /// An environment of these variables.
    public init(_ variables: [String: String]) {
        lookup = { variables[$0] }
    }

    /// An environment whose variables `lookup` returns (nil for an unset one).
    public init(lookup: @escaping @Sendable (String) -> String?) {
        self.lookup = lookup
    }

    /// The process's environment, read at each lookup.
    public static let process = ProxyEnvironment(lookup: { ProcessEnvironment.value($0) })

    /// The value of `name`, or nil when it is unset or empty.
    public func value(_ name: String) -> String? {
        guard let value = lookup(name), !value.isEmpty else { return nil }
        return value
    }

    /// The variable that names the proxy for URLs of `scheme`, and its value, or nil when none is set.
    /// - Parameter scheme: The URL's scheme (`http`, `https`), in any case.
    public func proxyVariable(forScheme scheme: String) -> (name: String, value: String)? {
        let lower = String(decoding: scheme.utf8.map(ProxyURLParser.asciiLowercased), as: UTF8.self) + "_proxy"
        var names = [lower]
        if lower != "http_proxy" {
            names.append(String(decoding: lower.utf8.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 32 : $0 }, as: UTF8.self))
        }
        names += ["all_proxy", "ALL_PROXY"]
        for name in names {
            if let value = value(name) { return (name, value) }
        }
        return nil
    }

    /// The `no_proxy` variable in force (`no_proxy`, else `NO_PROXY`) and its value, or nil when neither is set.
    public var noProxyVariable: (name: String, value: String)? {
        for name in ["no_proxy", "NO_PROXY"] {
            if let value = value(name) { return (name, value) }
        }
        return nil
    }
}

/// Where a request goes: straight to the origin, or through a proxy.
public enum ProxyRoute: Hashable, Sendable, CustomStringConvertible {
    /// To the origin, with no proxy.
    case direct
    /// Through this proxy. Boxed: a route is one reference wide, not a proxy's hundred bytes, in every frame and
    /// copy that holds one (each request's holds several, most of them `direct`).
    indirect case proxy(Proxy)

    /// `direct`, or the proxy (without its credentials).
    public var description: String {
        switch self {
        case .direct: "direct"
        case .proxy(let proxy): "via \(proxy)"
        }
    }

    /// The route curl 7.88 takes to `host` for a URL of `scheme`, given its proxy options and the environment.
    ///
    /// 1. The `no_proxy` list is `noProxy` when given (curl's `--noproxy`, even empty), else the environment's. A
    ///    host it matches goes direct, even when `proxy` is given.
    /// 2. The proxy is `proxy` when given (curl's `-x`), else the environment's for the scheme (see
    ///    `ProxyEnvironment`). None, or an empty one, goes direct.
    /// 3. The proxy's URL is read by `Proxy(parsing:defaultKind:credentials:)`.
    ///
    /// The origin's port plays no part: curl 7.88 compares a `no_proxy` entry with a port as a whole, and it never
    /// matches.
    ///
    /// - Parameters:
    ///   - scheme: The URL's scheme.
    ///   - host: The URL's host: a name, an IPv4 address, or an IPv6 address with or without brackets. It is read as
    ///     curl's URL parser leaves it (`canonicalHost(_:)`): brackets and any zone removed, an IPv4 number in a
    ///     dotted quad, an IPv6 address shortened.
    ///   - proxy: A proxy URL given explicitly, or nil to follow the environment.
    ///   - noProxy: A `no_proxy` list given explicitly, or nil to follow the environment.
    ///   - environment: The variables.
    ///   - defaultKind: What an `http://` proxy URL, or one without a scheme, stands for (curl's `--socks5` and
    ///     the like). Default `.http`.
    ///   - credentials: Credentials given apart from the proxy's URL (curl's `-U`); the URL's own win.
    /// - Throws: `ProxyURLError` for a proxy URL that cannot be read (curl fails the transfer).
    public static func resolve(
        scheme: String, host: String, proxy: String? = nil, noProxy: String? = nil,
        environment: ProxyEnvironment, defaultKind: Proxy.Kind = .http, credentials: ProxyCredentials? = nil
    ) throws(ProxyURLError) -> ProxyRoute {
        let list = noProxy ?? environment.noProxyVariable?.value
        if let list, NoProxyList(list).matches(host: canonicalHost(host)) { return .direct }
        guard let text = proxy ?? environment.proxyVariable(forScheme: scheme)?.value, !text.isEmpty else {
            return .direct
        }
        return .proxy(try Proxy(parsing: text, defaultKind: defaultKind, credentials: credentials))
    }

    /// A URL's host as curl's URL parser hands it on: brackets and a zone removed from an IPv6 address and the
    /// address shortened when `inet_ntop` writes it shorter; an IPv4 number in any form curl reads (`127.1`,
    /// `0x7f000001`) as a dotted quad; a name unchanged.
    public static func canonicalHost(_ host: String) -> String {
        var bytes = Array(host.utf8)[...]
        if bytes.first == UInt8(ascii: "["), bytes.last == UInt8(ascii: "]") { bytes = bytes.dropFirst().dropLast() }
        if let quad = IPv4Literal.curlNormalized(bytes) { return quad }
        let address = bytes.prefix { $0 != UInt8(ascii: "%") }
        if let presentation = IPv6Literal.presentation(address) {
            return presentation.utf8.count < address.count ? presentation : String(decoding: address, as: UTF8.self)
        }
        return host
    }
}

/// Which proxy, if any, a client uses.
public enum ProxyConfiguration: Sendable {
    /// No proxy: every request goes to its origin.
    case none
    /// This proxy for every request, except to the hosts `noProxy` matches.
    case proxy(Proxy, noProxy: NoProxyList? = nil)
    /// The proxy the environment names for each request's scheme, as curl reads it (see `ProxyEnvironment`).
    case environment(ProxyEnvironment = .process)

    /// The route of a request to `host` for a URL of `scheme`.
    /// - Throws: `ProxyURLError` when the environment names a proxy URL that cannot be read.
    public func route(scheme: String, host: String) throws(ProxyURLError) -> ProxyRoute {
        switch self {
        case .none:
            return .direct
        case .proxy(let proxy, let noProxy):
            if let noProxy, noProxy.matches(host: ProxyRoute.canonicalHost(host)) { return .direct }
            return .proxy(proxy)
        case .environment(let environment):
            return try ProxyRoute.resolve(scheme: scheme, host: host, environment: environment)
        }
    }
}
