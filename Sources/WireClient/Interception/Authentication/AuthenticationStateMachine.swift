/// The coordination behind `AuthenticationInterceptor`, as a value: events in, actions out, no locks or tasks.
///
/// However many requests are refused (or find the credential expiring) while no refresh runs, the first one gets
/// `.refresh` and every other one `.wait`; when the refresh ends, `refreshSucceeded` or `refreshFailed` returns one
/// resumption per waiter, the refresher included: the new credential (apply it, or retry once) or the error. A
/// request refused with a credential that has since been replaced is retried at once (`.proceed`) without another
/// refresh. Refreshes are limited to `RefreshWindow.maximumRefreshes` per `interval`; past it, `.excessiveRefresh`.
///
/// Requests are known by an identifier the caller assigns; the credential's generation (raised on each refresh or
/// replacement) tells a stale request from a current one, so the caller can test a request against a credential
/// (user code) outside any lock and report the generation it tested against.
public struct AuthenticationStateMachine<Credential: Sendable>: Sendable {
    /// A limit on refreshes over time.
    public struct RefreshWindow: Sendable, Hashable {
        /// How far back refreshes count.
        public var interval: Duration
        /// The most refreshes within `interval`.
        public var maximumRefreshes: Int

        /// A window; by default 5 refreshes per 30 seconds.
        /// - Parameters:
        ///   - interval: How far back refreshes count.
        ///   - maximumRefreshes: The most refreshes within `interval`.
        public init(interval: Duration = .seconds(30), maximumRefreshes: Int = 5) {
            self.interval = interval
            self.maximumRefreshes = maximumRefreshes
        }
    }

    /// What the caller does next.
    public enum Action: Sendable {
        /// Go on with this credential: apply it (adapting), or retry the request once (refused).
        case proceed(Credential)
        /// Refresh this credential, then report `refreshSucceeded` or `refreshFailed`; the caller is itself one of
        /// the waiters resumed then.
        case refresh(Credential)
        /// Suspend until the running refresh ends; a resumption will name this request.
        case wait
        /// Fail the request.
        case fail(AuthenticationError)
    }

    /// How one waiting request goes on after a refresh.
    public struct Resumption: Sendable {
        /// The request's identifier.
        public var id: Int
        /// The new credential (apply it, or retry once), or the error.
        public var result: Result<Credential, AuthenticationError>
    }

    /// The current credential.
    public private(set) var credential: Credential?
    /// Raised each time the credential is replaced, by a refresh or by `replaceCredential`.
    public private(set) var generation = 0
    /// The refresh limit.
    public let refreshWindow: RefreshWindow
    /// The requests waiting on the running refresh, in arrival order; nil when no refresh runs.
    private var waiters: [Int]?
    private var refreshTimes: [Duration] = []

    /// A machine holding `credential`.
    /// - Parameters:
    ///   - credential: The first credential, if known.
    ///   - refreshWindow: The refresh limit.
    public init(credential: Credential?, refreshWindow: RefreshWindow = RefreshWindow()) {
        self.credential = credential
        self.refreshWindow = refreshWindow
    }

    /// Whether a refresh is running.
    public var isRefreshing: Bool { waiters != nil }

    /// How many requests wait on the running refresh (the refresher included).
    public var waiterCount: Int { waiters?.count ?? 0 }

    /// Replaces the credential (the user set a new one).
    /// - Parameter credential: The new credential.
    public mutating func replaceCredential(_ credential: Credential?) {
        self.credential = credential
        generation += 1
    }

    /// A request is about to be sent.
    /// - Parameters:
    ///   - id: The request's identifier.
    ///   - generation: The generation of the credential the caller checked `requiresRefresh` on.
    ///   - requiresRefresh: Whether that credential requires a refresh.
    ///   - now: The present, on a monotonic timeline (for the refresh window).
    public mutating func adapt(_ id: Int, generation: Int, requiresRefresh: Bool, now: Duration) -> Action {
        if waiters != nil {
            waiters!.append(id)
            return .wait
        }
        guard let credential else { return .fail(AuthenticationError(.missingCredential)) }
        // A credential replaced since the caller looked is newer than the one that needed refreshing.
        guard requiresRefresh, generation == self.generation else { return .proceed(credential) }
        return startRefresh(credential, for: id, now: now)
    }

    /// A request was refused because of its credential.
    /// - Parameters:
    ///   - id: The request's identifier.
    ///   - generation: The generation of the credential the request was sent with, or nil when it was not sent
    ///     with the credential the caller tested it against.
    ///   - now: The present, on a monotonic timeline (for the refresh window).
    public mutating func authenticationFailed(_ id: Int, generation: Int?, now: Duration) -> Action {
        if waiters != nil {
            waiters!.append(id)
            return .wait
        }
        guard let credential else { return .fail(AuthenticationError(.missingCredential)) }
        // Sent with a credential since replaced: retry with the current one, no second refresh.
        guard generation == self.generation else { return .proceed(credential) }
        return startRefresh(credential, for: id, now: now)
    }

    /// The refresh produced `credential`: every waiter goes on with it.
    /// - Parameter credential: The new credential.
    public mutating func refreshSucceeded(with credential: Credential) -> [Resumption] {
        replaceCredential(credential)
        let resumed = waiters ?? []
        waiters = nil
        return resumed.map { Resumption(id: $0, result: .success(credential)) }
    }

    /// The refresh failed: every waiter fails with `error`; the credential is kept.
    /// - Parameter error: The failure.
    public mutating func refreshFailed(_ error: AuthenticationError) -> [Resumption] {
        let resumed = waiters ?? []
        waiters = nil
        return resumed.map { Resumption(id: $0, result: .failure(error)) }
    }

    private mutating func startRefresh(_ credential: Credential, for id: Int, now: Duration) -> Action {
        let interval = refreshWindow.interval
        refreshTimes.removeAll { now - $0 >= interval }
        guard refreshTimes.count < refreshWindow.maximumRefreshes else {
            return .fail(AuthenticationError(.excessiveRefresh))
        }
        refreshTimes.append(now)
        waiters = [id]
        return .refresh(credential)
    }
}
