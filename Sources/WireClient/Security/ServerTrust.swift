public import WireTLS

/// The answer of `SessionManager.sessionDidReceiveServerTrustChallenge` (AFNetworking's challenge disposition).
public enum ServerTrustDisposition: Sendable, Hashable {
    /// Let the session's security policy for the host decide.
    case performDefaultHandling
    /// Use the connection whatever the policy would say: the hook owns the risk.
    case proceed
    /// Close the connection; the task fails with `.serverCertificateUntrusted` and a `TLSError(.trustRefused)`
    /// carrying this reason.
    case refuse(String)
}

/// A pin mismatch a report-only policy let through (`SecurityPolicy.PinEnforcement.reportOnly`).
public struct PinMismatchReport: Sendable, Hashable {
    /// The host and port of the connection.
    public let host: String
    /// The port.
    public let port: Int
    /// The policy that was applied.
    public let policy: SecurityPolicy
    /// The mismatch as it would have refused the connection; `pins` lists the pins of the chain that was compared.
    public let mismatch: TLSError

    /// A report.
    public init(host: String, port: Int, policy: SecurityPolicy, mismatch: TLSError) {
        self.host = host
        self.port = port
        self.policy = policy
        self.mismatch = mismatch
    }
}
