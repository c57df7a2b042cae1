/// Bounds on what a `CookieStorage` takes, keeps and sends, so that no server can grow the storage, or the `Cookie`
/// field of every later request to its site, without end (a "cookie bomb": a chain of redirects each setting
/// dozens of large cookies, after which the site's own server refuses every request for its size).
///
/// The defaults are the limits of browsers and curl: RFC 6265 §6.1 asks for at least 4096 bytes a cookie, 50 a
/// domain and 3000 in all; Chromium keeps 180 a domain and about 3000 in all; curl takes 50 from one response and
/// sends at most 150 cookies and about 8 KiB in one field.
///
/// ```swift
/// let storage = CookieStorage(limits: CookieLimits(maximumCookiesPerDomain: 50))
/// ```
public struct CookieLimits: Sendable, Hashable, Codable {
    /// The most bytes (UTF-8) of a cookie's name and value together; a longer cookie is ignored. Default 4096.
    public var maximumNameValueBytes: Int
    /// The most cookies taken from one response (its first ones, a cookie that deletes another included); the
    /// rest of its `Set-Cookie` fields are ignored. Each hop of a redirect chain is a response of its own. Default 50.
    public var maximumCookiesPerResponse: Int
    /// The most cookies kept for one site: cookies whose domains have the same registrable domain (`example.co.uk`
    /// for `a.example.co.uk` and `b.example.co.uk`), or the same domain where there is none (an IP address, a
    /// name the public suffix list does not know). Beyond it, the site's least recently used cookie is evicted.
    /// Default 180.
    public var maximumCookiesPerDomain: Int
    /// The most cookies kept in all; beyond it, the least recently used cookie is evicted. Default 3000.
    public var maximumCookies: Int
    /// The most cookies sent in one `Cookie` field. Default 150.
    public var maximumCookiesPerField: Int
    /// The most bytes of one `Cookie` field's value, `; ` separators included. Default 8192.
    public var maximumFieldBytes: Int

    /// Creates limits; the defaults are those of each property. A limit below 1 lets nothing through.
    public init(
        maximumNameValueBytes: Int = 4096, maximumCookiesPerResponse: Int = 50, maximumCookiesPerDomain: Int = 180,
        maximumCookies: Int = 3000, maximumCookiesPerField: Int = 150, maximumFieldBytes: Int = 8192
    ) {
        self.maximumNameValueBytes = maximumNameValueBytes
        self.maximumCookiesPerResponse = maximumCookiesPerResponse
        self.maximumCookiesPerDomain = maximumCookiesPerDomain
        self.maximumCookies = maximumCookies
        self.maximumCookiesPerField = maximumCookiesPerField
        self.maximumFieldBytes = maximumFieldBytes
    }

    /// Whether `cookie`'s name and value fit `maximumNameValueBytes`.
    func admits(_ cookie: Cookie) -> Bool {
        cookie.name.utf8.count + cookie.value.utf8.count <= maximumNameValueBytes
    }
}
