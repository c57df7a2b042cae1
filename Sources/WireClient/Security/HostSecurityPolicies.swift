import FoundationEssentials

/// A security policy per host (Alamofire's `ServerTrustManager`): which `SecurityPolicy` an `https` connection to a
/// host is evaluated with.
///
/// Patterns are matched case-insensitively, without a trailing dot:
/// - an exact host (`api.example.com`, `127.0.0.1`, `::1`) matches only itself, and wins over any wildcard;
/// - `*.example.com` matches any host with one or more labels before `.example.com` (`a.example.com`,
///   `a.b.example.com`), not `example.com` itself; among wildcards the longest suffix wins;
/// - a host no pattern matches gets `defaultPolicy`.
///
/// A wildcard must be `*.` followed by at least two labels (`*.com` and `*` are refused), and `*` may appear nowhere
/// else.
public struct HostSecurityPolicies: Sendable, Hashable, Codable {
    /// The policy of hosts no pattern matches.
    public private(set) var defaultPolicy: SecurityPolicy
    /// The policies by pattern, as given (normalised to lower case without a trailing dot).
    public let policies: [String: SecurityPolicy]

    /// Every host under `SecurityPolicy.default`.
    public init() {
        defaultPolicy = .default
        policies = [:]
    }

    /// `policies` by host pattern, and `defaultPolicy` for the rest.
    /// - Throws: `ClientError` with code `.invalidSecurityPolicy` for a malformed pattern, two patterns that are the
    ///   same host, or a policy that `SecurityPolicy.validate()` refuses.
    public init(defaultPolicy: SecurityPolicy = .default, policies: [String: SecurityPolicy]) throws(ClientError) {
        var normalised: [String: SecurityPolicy] = [:]
        for (pattern, policy) in policies {
            let key = Self.normalised(pattern)
            guard normalised[key] == nil else {
                throw ClientError(.invalidSecurityPolicy, failureReason: "invalid security policy: \"\(pattern)\" is given twice")
            }
            normalised[key] = policy
        }
        self.defaultPolicy = defaultPolicy
        self.policies = normalised
        try validate()
    }

    /// Checks every pattern and every policy (`SecurityPolicy.validate()`); the manager calls it whenever policies
    /// are set, decoded ones included.
    /// - Throws: `ClientError` with code `.invalidSecurityPolicy` naming the pattern or the rule.
    public func validate() throws(ClientError) {
        try defaultPolicy.validate()
        for (pattern, policy) in policies {
            guard Self.isValidPattern(pattern), pattern == Self.normalised(pattern) else {
                throw ClientError(
                    .invalidSecurityPolicy, failureReason: "invalid security policy: \"\(pattern)\" is not a host pattern")
            }
            try policy.validate()
        }
    }

    /// The policy for `host`: its exact pattern, else the longest matching wildcard, else `defaultPolicy`.
    public func policy(forHost host: String) -> SecurityPolicy {
        let host = Self.normalised(host)
        if let exact = policies[host] { return exact }
        var best: (suffixLength: Int, policy: SecurityPolicy)?
        for (pattern, policy) in policies where pattern.hasPrefix("*.") {
            let suffix = pattern.dropFirst(1)  // ".example.com"
            guard host.count > suffix.count, host.hasSuffix(suffix) else { continue }
            if best.map({ suffix.count > $0.suffixLength }) ?? true { best = (suffix.count, policy) }
        }
        return best?.policy ?? defaultPolicy
    }

    private static func normalised(_ host: String) -> String {
        let lower = host.lowercased()
        return lower.hasSuffix(".") ? String(lower.dropLast()) : lower
    }

    /// A host, or `*.` and at least two labels; no empty label, no other `*`.
    private static func isValidPattern(_ pattern: String) -> Bool {
        let name = pattern.hasPrefix("*.") ? String(pattern.dropFirst(2)) : pattern
        guard !name.isEmpty, !name.contains("*") else { return false }
        if pattern.hasPrefix("*.") {
            let labels = name.split(separator: ".", omittingEmptySubsequences: false)
            return labels.count >= 2 && !labels.contains { $0.isEmpty }
        }
        return !name.contains(where: { $0 == "/" || $0 == " " })
    }
}

extension HostSecurityPolicies {
    /// The same host policies with another (already validated) default.
    func replacingDefault(with policy: SecurityPolicy) -> HostSecurityPolicies {
        var copy = self
        copy.defaultPolicy = policy
        return copy
    }
}
