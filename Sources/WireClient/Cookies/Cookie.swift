public import FoundationEssentials

/// One HTTP cookie as a client keeps it (RFC 6265 §5.3's cookie record; HTTPCookie's properties).
///
/// Made from a `Set-Cookie` field with `init?(setCookie:for:now:)`, from a line of a Netscape cookie file, or
/// directly. Two cookies with the same name, domain and path are the same cookie: storing one replaces the other.
public struct Cookie: Sendable, Hashable, Codable {
    /// The cookie's name (case-sensitive).
    public var name: String
    /// The cookie's value, as the server sent it.
    public var value: String
    /// The domain, lower-cased and without a leading dot: the request host for a host-only cookie, the `Domain`
    /// attribute otherwise.
    public var domain: String
    /// The path the cookie applies to, starting with `/`.
    public var path: String
    /// When the cookie expires; nil for a session cookie, which lives as long as the storage.
    public var expires: Date?
    /// Sent only over https (and, from a response, set only by an https one); loopback hosts count as secure.
    public var isSecure: Bool
    /// `HttpOnly`: meaningful to browsers' scripts only; a client sends such cookies like any other.
    public var isHTTPOnly: Bool
    /// Sent only to `domain` itself, not to its subdomains (no `Domain` attribute was given).
    public var isHostOnly: Bool
    /// The `SameSite` attribute's value as sent, if any; a client without documents ignores it.
    public var sameSite: String?
    /// When the cookie was first stored; a replacement keeps the original time. Orders the `Cookie` field.
    public var creationTime: Date

    /// A cookie from its parts.
    /// - Parameters:
    ///   - name: The name.
    ///   - value: The value.
    ///   - domain: The domain; a leading dot is removed and the rest lower-cased.
    ///   - path: The path; `/` by default.
    ///   - expires: The expiry; nil for a session cookie.
    ///   - isSecure: Whether it is https-only.
    ///   - isHTTPOnly: The `HttpOnly` flag.
    ///   - isHostOnly: Whether subdomains are excluded.
    ///   - sameSite: The `SameSite` value, if any.
    ///   - creationTime: The creation time; now by default.
    public init(
        name: String, value: String, domain: String, path: String = "/", expires: Date? = nil,
        isSecure: Bool = false, isHTTPOnly: Bool = false, isHostOnly: Bool = true, sameSite: String? = nil,
        creationTime: Date = Date()
    ) {
        self.name = name
        self.value = value
        // Bytes, not characters: a combining mark after the dot or the slash must not hide it.
        let domain = domain.lowercased()
        self.domain = domain.utf8.first == UInt8(ascii: ".") ? String(Substring(domain.utf8.dropFirst())) : domain
        self.path = path.utf8.first == UInt8(ascii: "/") ? path : "/"
        self.expires = expires
        self.isSecure = isSecure
        self.isHTTPOnly = isHTTPOnly
        self.isHostOnly = isHostOnly
        self.sameSite = sameSite
        self.creationTime = creationTime
    }

    /// Whether the cookie was sent without an expiry and so ends with the storage.
    public var isSessionOnly: Bool { expires == nil }

    /// Whether the cookie has expired at `now` (an expiry equal to `now` counts as expired).
    public func isExpired(at now: Date) -> Bool {
        guard let expires else { return false }
        return expires <= now
    }

    /// Whether the cookie goes with a request to `url` (RFC 6265 §5.4 step 1): domain, path, `Secure` and expiry.
    public func matches(_ url: URL, at now: Date = Date()) -> Bool {
        guard !isExpired(at: now), let host = CookieDomain.canonicalHost(of: url) else { return false }
        if isSecure && !CookieDomain.isSecureOrigin(url) { return false }
        if isHostOnly {
            guard host == domain else { return false }
        } else {
            guard CookieDomain.domainMatches(host, domain) else { return false }
        }
        return CookiePath.matches(CookiePath.requestPath(of: url), cookiePath: path)
    }

    /// What identifies a stored cookie: storing a cookie with the same key replaces the old one.
    var key: Key { Key(name: name, domain: domain, path: path) }

    /// Name, domain and path (RFC 6265 §5.3 step 11).
    struct Key: Hashable {
        var name: String
        var domain: String
        var path: String
    }
}
