public import FoundationEssentials

extension Cookie {
    /// The cookie a `Set-Cookie` field value sets for a response to `url`, with the storage model's checks of
    /// RFC 6265 §5.2–5.3 (and RFC 6265bis for `Secure`); nil when the field is to be ignored.
    ///
    /// Ignored: no `=` in the name-value pair or an empty name; a control character in the name or the value (a
    /// tab included, which curl's cookie file could not hold); a `Domain` that the host does not domain-match, or
    /// that ends with a dot (as curl refuses it); a `Domain` that is a public suffix (`com`, `co.uk`, `com.de`,
    /// `github.io`: see `PublicSuffixList`) other than the host itself, which then sets a host-only cookie; `Secure`
    /// from a URL that is not https (nor http to a loopback host); a `__Secure-` name without `Secure`, and a
    /// `__Host-` name without `Secure`, with a `Domain` or with a `Path` other than `/` (RFC 6265bis §4.1.3, prefixes
    /// matched without regard to case). An `Expires` that does not parse is ignored; `Max-Age` takes precedence over
    /// `Expires`. A cookie whose expiry has passed is returned (expired): storing it deletes the stored cookie it
    /// replaces. Size limits are the storage's (`CookieLimits`).
    /// - Parameters:
    ///   - setCookie: The field value.
    ///   - url: The URL the response answered.
    ///   - now: The current time, for `Max-Age` and the creation time.
    ///   - publicSuffixList: The list a `Domain` attribute is checked against; the system's by default. When it
    ///     cannot be read, a `Domain` naming anything but the host itself is refused.
    public init?(setCookie: String, for url: URL, now: Date = Date(), publicSuffixList: PublicSuffixList = .system) {
        guard let host = CookieDomain.canonicalHost(of: url) else { return nil }
        var sections = setCookie.split(separator: ";", omittingEmptySubsequences: false)
        guard !sections.isEmpty else { return nil }
        let pair = sections.removeFirst()
        guard let equals = pair.firstIndex(of: "=") else { return nil }
        let name = Self.trimmed(pair[..<equals])
        let value = Self.trimmed(pair[pair.index(after: equals)...])
        guard !name.isEmpty, Self.isClean(name), Self.isClean(value) else { return nil }

        var expires: Date?
        var maxAge: Date?
        var domainAttribute: String?
        var path: String?
        var secure = false
        var httpOnly = false
        var sameSite: String?
        for section in sections {
            let equals = section.firstIndex(of: "=")
            let attribute = Self.trimmed(section[..<(equals ?? section.endIndex)]).lowercased()
            let argument = equals.map { Self.trimmed(section[section.index(after: $0)...]) } ?? ""
            switch attribute {
            case "expires":
                if let date = CookieDate.parse(argument) { expires = date }
            case "max-age":
                if let seconds = Self.maxAgeSeconds(argument) {
                    maxAge = seconds <= 0 ? Date.distantPast : now.addingTimeInterval(TimeInterval(seconds))
                }
            case "domain":
                guard !argument.isEmpty else { continue }
                var domain = argument.lowercased()
                if domain.utf8.first == UInt8(ascii: ".") { domain = String(Substring(domain.utf8.dropFirst())) }
                // `example.com.` is not the host `example.com` (whose trailing dot is dropped): curl refuses it.
                if domain.utf8.last == UInt8(ascii: ".") { return nil }
                domainAttribute = domain
            case "path":
                path = argument.utf8.first == UInt8(ascii: "/") && Self.isClean(argument) ? argument : nil
            case "secure":
                secure = true
            case "httponly":
                httpOnly = true
            case "samesite":
                sameSite = argument
            default:
                break
            }
        }

        var hostOnly = true
        var domain = host
        if let attribute = domainAttribute, !attribute.isEmpty {
            guard
                let resolved = CookieDomain.cookieDomain(
                    attribute: attribute, host: host,
                    publicSuffixList: publicSuffixList)
            else { return nil }
            (domain, hostOnly) = resolved
        }
        // RFC 6265bis §5.7 step 8: only a secure origin (https, or http to a loopback host) may set a Secure cookie.
        if secure && !CookieDomain.isSecureOrigin(url) { return nil }
        // RFC 6265bis §4.1.3: the name prefixes are promises a server can rely on, so a cookie that breaks one is
        // ignored. `__Secure-`: set with Secure (so from a secure origin). `__Host-`: also host-only (no Domain
        // attribute) and for the whole host (Path=/), so no sibling or parent domain can plant it.
        let lowercasedName = name.lowercased()
        if lowercasedName.hasPrefix("__secure-") && !secure { return nil }
        if lowercasedName.hasPrefix("__host-") && (!secure || domainAttribute != nil || path != "/") { return nil }
        self.init(
            name: name, value: value, domain: domain,
            path: path ?? CookiePath.defaultPath(of: CookiePath.requestPath(of: url)),
            expires: maxAge ?? expires, isSecure: secure, isHTTPOnly: httpOnly, isHostOnly: hostOnly,
            sameSite: sameSite, creationTime: now)
    }

    /// Whitespace (space and tab) removed at both ends.
    private static func trimmed(_ text: Substring) -> String {
        String(text.trimmingSpacesAndTabs())
    }

    /// No control characters (RFC 6265bis §5.7 step 1), so a stored cookie cannot break the field it is sent in,
    /// and no tab, which RFC 6265bis allows in a value: curl's cookie file separates its fields with tabs, so such a
    /// cookie would not survive a save and a load.
    static func isClean<Text: StringProtocol>(_ text: Text) -> Bool {
        !text.utf8.contains { $0 < 0x20 || $0 == 0x7F }
    }

    /// Whether a storage keeps the cookie: a name, and no control character (a tab included) in the name, the
    /// value or the path, whatever made it.
    var isStorable: Bool {
        !name.isEmpty && Self.isClean(name) && Self.isClean(value) && Self.isClean(path)
    }

    /// `Max-Age`'s value: an optional `-` and digits (RFC 6265 §5.2.2), clamped to ±100 years; nil otherwise.
    private static func maxAgeSeconds(_ text: String) -> Int? {
        var digits = Substring(text)
        let negative = digits.first == "-"
        if negative { digits.removeFirst() }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let limit = 100 * 366 * 86_400
        let magnitude = digits.count > 12 ? limit : min(Int(digits) ?? limit, limit)
        return negative ? -magnitude : magnitude
    }
}
