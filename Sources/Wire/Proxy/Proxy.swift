/// A proxy a request can go through: its kind, where it listens, and the credentials it asks for.
///
/// Made from a URL as curl reads one (`Proxy(parsing:)`: `http://user:pw@proxy:3128`, `socks5h://proxy`, or a bare
/// `proxy:3128`), or from its parts. Its description never shows the credentials.
///
/// ```swift
/// let proxy = try Proxy(parsing: "socks5h://alice:s%40cret@proxy.internal")
/// // proxy.kind == .socks5h, proxy.port == 1080, proxy.credentials?.password == "s@cret"
/// print(proxy)  // socks5h://***@proxy.internal:1080
/// ```
public struct Proxy: Hashable, Sendable, CustomStringConvertible {
    /// How the client speaks to the proxy.
    public enum Kind: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// An HTTP proxy reached in plain text (`http://`): `http` URLs are forwarded to it, `https` ones tunnelled
        /// through `CONNECT`.
        case http
        /// An HTTP proxy reached over TLS (`https://`), verified against the proxy's own name; requests go as
        /// through `http`.
        case https
        /// SOCKS version 4 (`socks4://`, or `socks://`): the client resolves the origin's name and sends an IPv4
        /// address.
        case socks4
        /// SOCKS 4a (`socks4a://`): the origin's name is sent to the proxy, which resolves it.
        case socks4a
        /// SOCKS version 5 (RFC 1928, `socks5://`): the client resolves the origin's name and sends an address.
        case socks5
        /// SOCKS version 5 with the origin's name sent to the proxy (`socks5h://`, the address type 3).
        case socks5h

        /// The URL scheme naming this kind.
        public var description: String { rawValue }

        /// Whether this is one of the SOCKS kinds.
        public var isSOCKS: Bool { self != .http && self != .https }

        /// The port used when the proxy's URL names none: 443 for an HTTPS proxy, 1080 for every other (curl's
        /// default, which is SOCKS's port, for HTTP proxies too).
        public var defaultPort: Int { self == .https ? 443 : 1080 }

        /// Whether the proxy, not the client, resolves the origin's name.
        public var resolvesNamesRemotely: Bool { self == .socks4a || self == .socks5h }
    }

    /// How the client speaks to the proxy.
    public var kind: Kind
    /// The proxy's host: a name, or an IP literal without brackets.
    public var host: String
    /// The proxy's port.
    public var port: Int
    /// The user name and password the proxy asks for (Basic authentication for an HTTP proxy, RFC 1929 for SOCKS 5,
    /// the user ID alone for SOCKS 4), or nil.
    public var credentials: ProxyCredentials?
    /// Header fields for the proxy itself (curl's `--proxy-header`): sent on every `CONNECT`, and added to each request
    /// forwarded to the proxy that lacks a field of the name. A `Proxy-Authorization` here wins over `credentials`.
    /// Unused by SOCKS proxies. Empty by default.
    public var headers = HTTPHeaders()
    /// The TLS layer for the connection to an `https` proxy, with the trust settings for the proxy's certificate
    /// (separate from the origin's). WireTLS sets it; nil makes a connection through an `https` proxy fail with an
    /// error naming WireTLS, as an `https` URL does without it. Proxies compare equal when their layers have the same
    /// `poolKey`.
    package var transportSecurity: (any ClientTransportSecurity)?

    /// A proxy from its parts.
    /// - Parameters:
    ///   - kind: How the client speaks to the proxy.
    ///   - host: A name or an IP literal (brackets around an IPv6 literal are removed).
    ///   - port: The port; nil takes the kind's default (`Kind.defaultPort`).
    ///   - credentials: The user name and password, if the proxy asks for them.
    public init(kind: Kind, host: String, port: Int? = nil, credentials: ProxyCredentials? = nil) {
        self.kind = kind
        var host = Substring(host)
        if host.utf8.first == UInt8(ascii: "["), host.utf8.last == UInt8(ascii: "]"), host.utf8.count >= 2 {
            host = host.dropFirst().dropLast()
        }
        self.host = String(host)
        self.port = port ?? kind.defaultPort
        self.credentials = credentials
    }

    /// `kind://host:port`, with `***@` in place of any credentials.
    public var description: String {
        "\(kind)://\(credentials == nil ? "" : "***@")\(authority)"
    }

    /// `host:port`, the host in brackets when it is an IPv6 literal.
    public var authority: String {
        host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The proxy as a URL that `Proxy(parsing:)` reads back to an equal value, credentials included and
    /// percent-encoded. For configuration files and tests: never log it.
    package var urlIncludingCredentials: String {
        // A host name is percent-decoded when read: a `%` in it (`%25` decoded) is written escaped again, or it would
        // read back as the start of an escape (fuzzing found `%250e` turning into a control character).
        let hostText =
            host.utf8.contains(UInt8(ascii: ":"))
            ? "[\(host)]"
            : String(decoding: host.utf8.flatMap { $0 == UInt8(ascii: "%") ? Array("%25".utf8) : [$0] }, as: UTF8.self)
        let authority = "\(hostText):\(port)"
        guard let credentials else { return "\(kind)://\(authority)" }
        let user = PercentEncoding.encode(credentials.user, allowing: .unreserved)
        let password = PercentEncoding.encode(credentials.password, allowing: .unreserved)
        return "\(kind)://\(user):\(password)@\(authority)"
    }

    public static func == (lhs: Proxy, rhs: Proxy) -> Bool {
        lhs.kind == rhs.kind && lhs.host == rhs.host && lhs.port == rhs.port && lhs.credentials == rhs.credentials
            && lhs.headers == rhs.headers && lhs.transportSecurity?.poolKey == rhs.transportSecurity?.poolKey
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(host)
        hasher.combine(port)
        hasher.combine(credentials)
        hasher.combine(headers)
        hasher.combine(transportSecurity?.poolKey)
    }
}

/// A user name and password for a proxy. Neither appears in its description, its debug description or a `dump`.
public struct ProxyCredentials: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The user name (SOCKS 4's user ID).
    public var user: String
    /// The password (unused by SOCKS 4); may be empty.
    public var password: String

    /// Credentials from their parts.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// `ProxyCredentials(***)`: the values are never printed.
    public var description: String { "ProxyCredentials(***)" }
    /// As `description`.
    public var debugDescription: String { description }
    /// A mirror with no children, so `dump` and reflection show no secret.
    public var customMirror: Mirror { Mirror(self, children: [:]) }

    /// The `Proxy-Authorization` value for Basic authentication (RFC 7617): `Basic ` and `user:password` in base64,
    /// from their UTF-8 bytes.
    public var basicAuthorization: String {
        "Basic " + Self.base64(Array(user.utf8) + [UInt8(ascii: ":")] + Array(password.utf8))
    }

    /// `bytes` in base64 with padding (RFC 4648 §4).
    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group = UInt32(bytes[index]) << 16
            if count > 1 { group |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { group |= UInt32(bytes[index + 2]) }
            for position in 0..<4 {
                output.append(
                    position <= count ? alphabet[Int(group >> UInt32(18 - 6 * position) & 0x3F)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}

extension Proxy {
    /// `fields` as they go to this proxy: each of the proxy's `headers` whose name `fields` lacks is added, then its
    /// credentials as Basic `Proxy-Authorization` when no field of that name is there yet.
    package func fieldsForProxy(_ fields: HTTPHeaders) -> HTTPHeaders {
        let own = fields
        var fields = fields
        for field in headers where !own.contains(name: field.name) {
            fields.add(name: field.name, value: field.value)
        }
        if let credentials, !fields.contains(name: "proxy-authorization") {
            fields.add(name: "Proxy-Authorization", value: credentials.basicAuthorization)
        }
        return fields
    }
}
