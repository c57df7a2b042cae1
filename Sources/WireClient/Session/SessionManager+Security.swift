import Synchronization
@_spi(Locking) import Wire
public import WireTLS

/// The security policy of a manager's `https` connections and the server-trust hook.
extension SessionManager {
    /// The policy of hosts without a policy of their own: `SecurityPolicy.default` unless set.
    public var securityPolicy: SecurityPolicy { state.withLock { $0.securityPolicies.defaultPolicy } }

    /// The policy of every host: the default policy and the per-host policies.
    public var securityPolicies: HostSecurityPolicies { state.withLock { $0.securityPolicies } }

    /// Makes `policy` the policy of hosts without one of their own. New connections are evaluated with it; no
    /// connection evaluated under the old policy is used again (the next request gets a new TLS layer and pools).
    /// - Throws: `ClientError` with code `.invalidSecurityPolicy` when `policy.validate()` refuses it; the policy in
    ///   force is then unchanged.
    public func setSecurityPolicy(_ policy: SecurityPolicy) throws(ClientError) {
        try policy.validate()
        state.withLock { $0.securityPolicies = $0.securityPolicies.replacingDefault(with: policy) }
    }

    /// Makes `policies` the policies of every host, as `setSecurityPolicy(_:)` does.
    /// - Throws: `ClientError` with code `.invalidSecurityPolicy` when `policies.validate()` refuses them (decoded
    ///   policies are checked here); the policies in force are then unchanged.
    public func setSecurityPolicies(_ policies: HostSecurityPolicies) throws(ClientError) {
        try policies.validate()
        state.withLock { $0.securityPolicies = policies }
    }

    /// Asked first about each new `https` connection, after the handshake and before any HTTP byte, with the
    /// host, both chains and OpenSSL's verdict: `.performDefaultHandling` lets the host's security policy decide,
    /// `.proceed` accepts the connection whatever the policy says, `.refuse(reason)` closes it (the task fails with
    /// `.serverCertificateUntrusted`). Runs on the delegate queue; the connection waits for the answer.
    public var sessionDidReceiveServerTrustChallenge: (@Sendable (TrustContext) -> ServerTrustDisposition)? {
        get { state.withLock { $0.hooks.sessionDidReceiveServerTrustChallenge } }
        set { state.withLock { $0.hooks.sessionDidReceiveServerTrustChallenge = newValue } }
    }

    /// The trust the session's TLS layer enforces now.
    var sessionTrust: SessionTrust {
        SessionTrust(policies: securityPolicies) { [weak self] context, policies, roots in
            guard let self else {
                return Self.refusal(of: policies.policy(forHost: context.host).evaluate(context, sessionRoots: roots))
            }
            return await evaluateTrust(context, policies: policies, roots: roots)
        }
    }

    /// The hook first, then the host's policy; a report-only mismatch is told to the monitors. Nil accepts.
    private func evaluateTrust(_ context: TrustContext, policies: HostSecurityPolicies, roots: TrustRoots) async -> TLSError? {
        if let hook = hooks.sessionDidReceiveServerTrustChallenge {
            switch await askDelegateQueue({ hook(context) }) {
            case .proceed:
                return nil
            case .refuse(let reason):
                return TLSError(
                    .trustRefused, "the server-trust hook refused \(context.host): \(reason)",
                    subject: context.peerChain.leaf?.subject, host: context.host)
            case .performDefaultHandling:
                break
            }
        }
        let policy = policies.policy(forHost: context.host)
        let outcome = policy.evaluate(context, sessionRoots: roots)
        if case .trustedDespitePinMismatch(let mismatch) = outcome {
            let report = PinMismatchReport(host: context.host, port: context.port, policy: policy, mismatch: mismatch)
            onDelegateQueue { [self] in
                for monitor in eventMonitors { monitor.manager(self, didRecordPinMismatch: report) }
            }
        }
        return Self.refusal(of: outcome).map { Self.naming(context.peerChain, in: $0) }
    }

    private static func refusal(of outcome: TrustOutcome) -> TLSError? {
        if case .refused(let error) = outcome { error } else { nil }
    }

    /// A refusal that lists no pins (a verdict, not a pin mismatch) gains the pins and subjects of what the server
    /// sent, so that the task's error shows which certificates were refused.
    private static func naming(_ sent: CertificateChain, in error: TLSError) -> TLSError {
        guard error.pins.isEmpty, !sent.certificates.isEmpty else { return error }
        let listed = sent.certificates.map { "\($0.pin) (\($0.subject))" }.joined(separator: ", ")
        return TLSError(
            error.reason, "\(error.detail); the server sent: \(listed)", subject: error.subject, host: error.host,
            alert: error.alert, openSSLErrors: error.openSSLErrors)
    }
}
