public import FoundationEssentials

/// Which connections a session may make at all (App Transport Security's rules): checked before any
/// socket is opened and again at every redirect hop.
///
/// The default allows everything, unlike iOS: Linux services talk plain HTTP inside their networks. A session that
/// must not is given `.requiresSecureConnections`, and then an `http` URL fails with
/// `.appTransportSecurityRequiresSecureConnection` (−1022) unless its host is an exception or, when allowed, on the
/// local network. TLS below 1.2 needs no rule: WireTLS speaks TLS 1.2 and 1.3 only.
public enum TransportSecurityPolicy: Sendable, Hashable, Codable {
    /// Any URL (ATS's `NSAllowsArbitraryLoads`). The default.
    case allowsArbitraryLoads
    /// `https` only, except the listed domains (`NSExceptionDomains`, keys lower-cased host names) and, when
    /// `allowsLocalNetworking` (`NSAllowsLocalNetworking`), hosts on the local network: `localhost`, a name without a
    /// dot, a name under `.local`, and loopback, link-local and private addresses (RFC 1918, IPv6 `fe80::/10` and
    /// the unique local `fc00::/7`).
    case requiresSecureConnections(exceptionDomains: [String: Exception] = [:], allowsLocalNetworking: Bool = false)

    /// What an exception domain allows.
    public struct Exception: Sendable, Hashable, Codable {
        /// Whether subdomains of the domain share the exception (`NSIncludesSubdomains`).
        public var includesSubdomains: Bool
        /// Whether plain `http` is allowed to the domain (`NSExceptionAllowsInsecureHTTPLoads`).
        public var allowsInsecureHTTPLoads: Bool

        /// An exception.
        /// - Parameters:
        ///   - includesSubdomains: Whether `api.example.org` shares an exception for `example.org`; false by default.
        ///   - allowsInsecureHTTPLoads: Whether `http` is allowed; true by default (the reason to list a domain).
        public init(includesSubdomains: Bool = false, allowsInsecureHTTPLoads: Bool = true) {
            self.includesSubdomains = includesSubdomains
            self.allowsInsecureHTTPLoads = allowsInsecureHTTPLoads
        }
    }

    /// Whether the policy asks for TLS at all.
    public var requiresSecureConnections: Bool {
        if case .requiresSecureConnections = self { true } else { false }
    }

    /// Checks a URL about to be fetched.
    /// - Parameter url: The request's URL (or a redirect's target).
    /// - Throws: `ClientError` `.appTransportSecurityRequiresSecureConnection` for a cleartext URL the policy refuses.
    public func check(_ url: URL) throws(ClientError) {
        guard case .requiresSecureConnections(let exceptions, let allowsLocalNetworking) = self,
            url.scheme?.lowercased() == "http"
        else { return }
        let host = Self.normalizedHost(url.host ?? "")
        if let exception = Self.exception(for: host, in: exceptions), exception.allowsInsecureHTTPLoads { return }
        if allowsLocalNetworking, Self.isLocal(host) { return }
        throw ClientError(
            .appTransportSecurityRequiresSecureConnection, failingURL: url,
            failureReason:
                "the transport security policy requires https for \(host.isEmpty ? url.absoluteString : host)")
    }

    /// The exception that covers `host`: its own entry, else the nearest parent domain's that includes subdomains.
    static func exception(for host: String, in exceptions: [String: Exception]) -> Exception? {
        guard !exceptions.isEmpty else { return nil }
        let lowered = exceptions.reduce(into: [String: Exception]()) { $0[normalizedHost($1.key)] = $1.value }
        if let own = lowered[host] { return own }
        var rest = Substring(host)
        while let dot = rest.firstIndex(of: ".") {
            rest = rest[rest.index(after: dot)...]
            if let parent = lowered[String(rest)], parent.includesSubdomains { return parent }
        }
        return nil
    }

    /// Lower-cased, without IPv6 brackets or a trailing dot.
    static func normalizedHost(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        return host
    }

    /// Whether `host` (normalized) is on the local network.
    static func isLocal(_ host: String) -> Bool {
        if host == "localhost" || host.hasSuffix(".localhost") || host.hasSuffix(".local") { return true }
        if let octets = ipv4Octets(host) {
            switch (octets[0], octets[1]) {
            case (127, _), (10, _), (169, 254), (192, 168): return true
            case (172, let second): return (16...31).contains(second)
            default: return false
            }
        }
        if host.contains(":") {
            let lower = host.split(separator: "%").first.map(String.init) ?? host
            return lower == "::1" || lower.hasPrefix("fe8") || lower.hasPrefix("fe9") || lower.hasPrefix("fea")
                || lower.hasPrefix("feb") || lower.hasPrefix("fc") || lower.hasPrefix("fd")
        }
        // An unqualified name (no dot) resolves on the local network.
        return !host.isEmpty && !host.contains(".")
    }

    /// The four octets of a dotted-quad IPv4 address, or nil.
    private static func ipv4Octets(_ host: String) -> [Int]? {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var octets: [Int] = []
        for part in parts {
            guard !part.isEmpty, part.utf8.count <= 3, part.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(part),
                value <= 255
            else { return nil }
            octets.append(value)
        }
        return octets
    }
}
