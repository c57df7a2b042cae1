import FoundationEssentials

/// Host and domain rules of RFC 6265 §5.1.2–5.1.3 and §5.3 steps 5–6.
enum CookieDomain {
    /// The request host lower-cased, without IPv6 brackets or a trailing dot; nil when the URL has none.
    static func canonicalHost(of url: URL) -> String? {
        guard var host = url.host(percentEncoded: false)?.lowercased(), !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        return host.isEmpty ? nil : host
    }

    /// Whether `host` domain-matches `domain` (RFC 6265 §5.1.3): identical, or `domain` is a suffix of `host` after a
    /// dot and `host` is a name rather than an IP address.
    static func domainMatches(_ host: String, _ domain: String) -> Bool {
        if host == domain { return true }
        guard !domain.isEmpty, host.hasSuffix("." + domain) else { return false }
        return !isIPAddress(host)
    }

    /// Whether `Secure` cookies may be set by and sent to `url`: https, or http to a loopback host (`localhost`, a
    /// name under `.localhost`, 127.0.0.0/8, `::1`), which browsers and curl treat as a secure context because
    /// nothing leaves the machine.
    static func isSecureOrigin(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "https": return true
        case "http":
            guard let host = canonicalHost(of: url) else { return false }
            return host == "localhost" || host.hasSuffix(".localhost") || host == "::1"
                || (isIPAddress(host) && host.hasPrefix("127."))
        default: return false
        }
    }

    /// Whether `host` is an IPv4 literal (four dotted decimal parts) or an IPv6 literal (has a colon).
    static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                !part.isEmpty && part.count <= 3 && part.allSatisfy { $0.isASCII && $0.isNumber }
            }
    }

    /// The domain a cookie with the `Domain` attribute `attribute` (lower-case, without its leading dot) from `host`
    /// is kept under, and whether it is host-only; nil when the cookie is refused (RFC 6265 §5.3 steps 5–6). A
    /// public suffix is allowed only as the host itself, and then the cookie is host-only; when the list cannot be
    /// read every name counts as one, so only the host itself is allowed. An IP address matches only itself
    /// (`1.2.3.4` is no parent of the name `x.1.2.3.4`), and its cookie is host-only whatever the attribute says.
    static func cookieDomain(
        attribute: String, host: String,
        publicSuffixList: PublicSuffixList
    ) -> (domain: String, isHostOnly: Bool)? {
        if attribute == host && (isIPAddress(host) || publicSuffixList.isPublicSuffix(attribute)) { return (host, true) }
        guard domainMatches(host, attribute), !isIPAddress(attribute), !publicSuffixList.isPublicSuffix(attribute)
        else { return nil }
        return (attribute, false)
    }
}

/// Path rules of RFC 6265 §5.1.4.
enum CookiePath {
    /// The request URL's path, percent-encoded as sent, `/` when empty.
    static func requestPath(of url: URL) -> String {
        let path = url.path(percentEncoded: true)
        return path.isEmpty ? "/" : path
    }

    /// The default path of a cookie set by a request to `path`: everything up to, not including, the rightmost `/`;
    /// `/` when that leaves nothing or the path does not start with `/`.
    static func defaultPath(of path: String) -> String {
        guard path.hasPrefix("/"), let last = path.lastIndex(of: "/"), last != path.startIndex else { return "/" }
        return String(path[..<last])
    }

    /// Whether `requestPath` path-matches `cookiePath`: identical, or `cookiePath` is a prefix ending in `/` or
    /// followed by `/` in the request path.
    static func matches(_ requestPath: String, cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        if cookiePath.hasSuffix("/") { return true }
        return requestPath.dropFirst(cookiePath.count).first == "/"
    }
}
