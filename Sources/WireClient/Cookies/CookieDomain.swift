import FoundationEssentials

/// Host and domain rules of RFC 6265 §5.1.2–5.1.3, and a small public-suffix guard.
enum CookieDomain {
    /// The request host lower-cased, without IPv6 brackets or a trailing dot; nil when the URL has none.
    static func canonicalHost(of url: URL) -> String? {
        guard var host = url.host(percentEncoded: false)?.lowercased(), !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        return host.isEmpty ? nil : host
    }

    /// Whether `host` domain-matches `domain` (§5.1.3): identical, or `domain` is a suffix of `host` after a dot and
    /// `host` is a name rather than an IP address.
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
        return parts.count == 4 && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy { $0.isASCII && $0.isNumber }
        }
    }

    /// Whether a `Domain` attribute names a public suffix, for which no cookie may be set (§5.3 step 5).
    ///
    /// Not the full Public Suffix List: a single label (`com`, `local`, `localhost`) is a suffix, and so is a name on
    /// a short built-in list of common multi-label suffixes under which unrelated parties register names.
    static func isPublicSuffix(_ domain: String) -> Bool {
        !domain.contains(".") || multiLabelSuffixes.contains(domain)
    }

    /// Common registry and hosting suffixes with more than one label.
    static let multiLabelSuffixes: Set<String> = [
        "co.uk", "org.uk", "ac.uk", "gov.uk", "ltd.uk", "plc.uk", "me.uk", "net.uk",
        "com.au", "net.au", "org.au", "edu.au", "gov.au",
        "co.nz", "org.nz", "co.jp", "ne.jp", "or.jp", "ac.jp", "co.kr", "or.kr",
        "com.br", "com.cn", "net.cn", "org.cn", "com.mx", "co.in", "co.za", "com.tr", "com.tw", "com.hk", "com.sg",
        "github.io", "gitlab.io", "herokuapp.com", "blogspot.com", "appspot.com", "pages.dev", "workers.dev",
        "netlify.app", "vercel.app", "web.app", "firebaseapp.com", "azurewebsites.net", "cloudfront.net",
        "s3.amazonaws.com", "fly.dev", "onrender.com",
    ]
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
