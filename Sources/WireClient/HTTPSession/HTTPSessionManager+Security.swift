import FoundationEssentials

extension HTTPSessionManager {
    /// Sets the session's security policy (AFHTTPSessionManager's guard): a pinning policy needs an `https`
    /// base URL.
    /// - Throws: `ClientError` with code `.invalidSecurityPolicy` when the policy pins and the base URL is nil or not
    ///   `https`, or when `SecurityPolicy.validate()` refuses it; the policy in force is then unchanged.
    public func setSecurityPolicy(_ policy: SecurityPolicy) throws(ClientError) {
        if policy.pinningMode != .none && baseURL?.scheme?.lowercased() != "https" {
            throw ClientError(
                .invalidSecurityPolicy,
                failureReason:
                    "invalid security policy: a pinning policy needs an https base URL, not \(baseURL.map { "\($0)" } ?? "none")")
        }
        try session.setSecurityPolicy(policy)
    }
}
