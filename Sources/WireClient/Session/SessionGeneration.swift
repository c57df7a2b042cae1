import FoundationEssentials
import Synchronization
@_spi(Locking) import Wire
import WireTLS

/// One session of a manager: the Wire client its tasks run on. `invalidateSession(resetSession: true)` starts a new
/// generation (a new pool) while the old one drains. The client is made on first use, so making a manager cannot
/// fail; a client that cannot start fails the task that needed it.
///
/// The client's TLS layer enforces the security policies it was made with; when the manager's policies change, the
/// next request gets a new client (a new TLS layer, new pools) and the old one is retired: it finishes what it runs
/// and is shut down with the generation. The generation's clients share one TLS session cache: a session made under
/// one policy may be resumed under the next, and the resumed connection is evaluated under the policy in force as a
/// new one would be (its stored chain verified again, then the hook and the policy).
final class SessionGeneration: Sendable {
    /// 0 for the manager's first session, then 1, 2, …
    let number: Int
    /// Tasks made on this session whose completion has not yet returned (counted without the manager's lock: a task
    /// ends with one decrement, and only the last one of an invalidated session takes the lock).
    let pendingTasks = Atomic<Int>(0)
    private let configuration: HTTPClientConfiguration
    private let adopted: HTTPClient?
    /// The TLS sessions of the generation's clients.
    private let sessions = TLSSessionCache()

    private struct Clients {
        /// The client for the current policies, with the policies it enforces.
        var current: (policies: HostSecurityPolicies, result: Result<HTTPClient, HTTPClientError>)?
        /// Clients made for earlier policies.
        var retired: [HTTPClient] = []
    }

    private let made = Lock(Clients())

    init(number: Int, configuration: SessionConfiguration) {
        self.number = number
        self.configuration = configuration.clientConfiguration
        adopted = configuration.httpClient
    }

    /// The client for an `https` URL (`secure`) or an `http` one under `trust`: an adopted client serves `http` as it
    /// is; `https` always goes through a
    /// client whose TLS layer applies `trust` (made from the adopted client's configuration when there is one, so
    /// an adopted client's own TLS settings can never bypass the session's security policy). `trust` is asked only
    /// when it matters (not for an adopted client's `http`).
    func client(secure: Bool, trust: () -> SessionTrust) throws(HTTPClientError) -> HTTPClient {
        if let adopted, !secure { return adopted }
        let trust = trust()
        let base = adopted?.configuration ?? configuration
        let result = made.withLock { clients -> Result<HTTPClient, HTTPClientError> in
            if let current = clients.current, current.policies == trust.policies { return current.result }
            if case .success(let old) = clients.current?.result { clients.retired.append(old) }
            let configuration = trust.applied(to: base, sessions: sessions)
            let result = Result { () throws(HTTPClientError) -> HTTPClient in try HTTPClient(configuration: configuration) }
            clients.current = (trust.policies, result)
            return result
        }
        return try result.get()
    }

    /// The clients the generation made itself (an adopted client is never shut down by the session).
    var ownClients: [HTTPClient] {
        made.withLock { clients in
            var own = clients.retired
            if case .success(let client) = clients.current?.result { own.append(client) }
            return own
        }
    }

    /// Shuts the generation's own clients down (their pooled connections close); nothing for an adopted client.
    func shutdown() async {
        for client in ownClients { await client.shutdown() }
    }
}

/// What a session's TLS layer enforces: the host policies it is made for, and the manager's evaluation of a
/// handshake (the trust hook first, then the policy).
struct SessionTrust: Sendable {
    let policies: HostSecurityPolicies
    let evaluate: @Sendable (TrustContext, HostSecurityPolicies, TrustRoots) async -> TLSError?

    /// `configuration` with its TLS layer deciding through `evaluate` and keeping its sessions in `sessions` (no-op
    /// without WireTLS's `tls`).
    func applied(to configuration: HTTPClientConfiguration, sessions: TLSSessionCache) -> HTTPClientConfiguration {
        guard var tls = configuration.tls else { return configuration }
        let roots = tls.trustRoots
        let policies = self.policies
        let evaluate = self.evaluate
        tls.deferredTrustEvaluation = { context in await evaluate(context, policies, roots) }
        tls.sessionCache = sessions
        var configuration = configuration
        configuration.tls = tls
        return configuration
    }
}
