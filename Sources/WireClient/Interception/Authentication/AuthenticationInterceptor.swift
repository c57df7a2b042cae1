import Synchronization
@_spi(Locking) import Wire

/// Applies an `Authenticator`'s credential to every request and refreshes it once however many requests are
/// refused with it at the same time (Alamofire's `AuthenticationInterceptor`).
///
/// The decisions are `AuthenticationStateMachine`'s; this shell holds it under a `Lock` with the suspended
/// waiters, and runs the authenticator's code (`requiresRefresh`, `apply`, `refresh`, `isRequest`) outside the lock.
/// The task that starts a refresh performs it; the others suspend until it ends, then each either applies the new
/// credential or is retried once. A refresh that throws fails every waiter with `AuthenticationError.refreshFailed`
/// (adapting throws it; retrying returns `.doNotRetryWithError` with the refused response's error code and the
/// `AuthenticationError` as `underlying`).
public final class AuthenticationInterceptor<A: Authenticator>: Interceptor {
    /// What a suspended request is resumed with, or what it does without suspending.
    private enum Step: Sendable {
        case finished(Result<A.Credential, AuthenticationError>)
        case refresh(A.Credential)
    }

    private struct State: ~Copyable {
        var machine: AuthenticationStateMachine<A.Credential>
        var waiting: [Int: CheckedContinuation<Step, Never>] = [:]
        var nextID = 0
    }

    /// The authenticator.
    public let authenticator: A
    private let state: Lock<State>
    private let uptime: @Sendable () -> Duration

    /// An interceptor.
    /// - Parameters:
    ///   - authenticator: How credentials are applied and refreshed.
    ///   - credential: The first credential; requests fail with `.missingCredential` until one is set.
    ///   - refreshWindow: The most refreshes per interval.
    ///   - clock: The monotonic clock for the refresh window; `ContinuousClock` by default.
    public init<C: Clock>(
        authenticator: A,
        credential: A.Credential? = nil,
        refreshWindow: AuthenticationStateMachine<A.Credential>.RefreshWindow = .init(),
        clock: C = ContinuousClock()
    ) where C.Duration == Duration {
        self.authenticator = authenticator
        self.state = Lock(
            State(
                machine: AuthenticationStateMachine(
                    credential: credential,
                    refreshWindow: refreshWindow)))
        let origin = clock.now
        self.uptime = { origin.duration(to: clock.now) }
    }

    /// The current credential; setting it replaces the credential (requests sent with the old one and refused are
    /// then retried with the new one without a refresh).
    public var credential: A.Credential? {
        get { state.withLock { $0.machine.credential } }
        set { state.withLock { $0.machine.replaceCredential(newValue) } }
    }

    /// How many requests wait on the running refresh, the one performing it included (0 when none runs).
    public var waitingRequestCount: Int { state.withLock { $0.machine.waiterCount } }

    /// Applies the current credential, refreshing it first (or waiting for the running refresh) when it requires
    /// a refresh.
    /// - Parameter request: The request.
    /// - Throws: `AuthenticationError` when there is no credential or the refresh fails.
    public func adapt(_ request: ClientRequest) async throws -> ClientRequest {
        let (credential, generation) = state.withLock { ($0.machine.credential, $0.machine.generation) }
        let requiresRefresh = credential?.requiresRefresh ?? false
        let now = uptime()
        let result = await run { $0.adapt($1, generation: generation, requiresRefresh: requiresRefresh, now: now) }
        var adapted = request
        authenticator.apply(try result.get(), to: &adapted)
        return adapted
    }

    /// Retries a request refused because of its credential: at once when the credential was replaced since it was
    /// sent, otherwise after the (single) refresh.
    /// - Parameters:
    ///   - request: The request as sent.
    ///   - attempt: Which attempt failed.
    ///   - response: The response, if any.
    ///   - error: The failure.
    public func retry(_ request: ClientRequest, attempt: Int, response: ClientResponse?, error: ClientError) async
        -> RetryDecision
    {
        guard authenticator.didRequest(request, with: response, failDueToAuthenticationError: error) else {
            return .doNotRetry
        }
        let (credential, generation) = state.withLock { ($0.machine.credential, $0.machine.generation) }
        let sentWithCurrent = credential.map { authenticator.isRequest(request, authenticatedWith: $0) } ?? false
        let now = uptime()
        let result = await run { $0.authenticationFailed($1, generation: sentWithCurrent ? generation : nil, now: now) }
        switch result {
        case .success:
            return .retry
        case .failure(let failure):
            var refused = error
            refused.underlying = failure
            refused.failureReason = "The credential could not be refreshed: \(failure)"
            return .doNotRetryWithError(refused)
        }
    }

    /// Feeds one event for a new request identifier and returns its outcome, suspending while a refresh runs and
    /// performing the refresh when the machine asks this request to.
    private func run(
        _ event:
            @escaping (inout AuthenticationStateMachine<A.Credential>, Int) -> AuthenticationStateMachine<A.Credential>.Action
    ) async -> Result<A.Credential, AuthenticationError> {
        var id = 0
        let step = await withCheckedContinuation { (continuation: CheckedContinuation<Step, Never>) in
            let action = state.withLock { state in
                id = state.nextID
                state.nextID += 1
                let action = event(&state.machine, id)
                // Registered under the same lock as the decision, so the refresh cannot end before it is found.
                if case .wait = action { state.waiting[id] = continuation }
                return action
            }
            switch action {
            case .wait: break
            case .proceed(let credential): continuation.resume(returning: .finished(.success(credential)))
            case .fail(let error): continuation.resume(returning: .finished(.failure(error)))
            case .refresh(let credential): continuation.resume(returning: .refresh(credential))
            }
        }
        switch step {
        case .finished(let result):
            return result
        case .refresh(let credential):
            return await refresh(credential, refresher: id)
        }
    }

    /// Performs the refresh, resumes every other waiter (outside the lock) and returns the refresher's own outcome.
    private func refresh(_ credential: A.Credential, refresher: Int) async -> Result<A.Credential, AuthenticationError> {
        let outcome: Result<A.Credential, AuthenticationError>
        do {
            outcome = .success(try await authenticator.refresh(credential))
        } catch {
            outcome = .failure(AuthenticationError(.refreshFailed, underlying: error))
        }
        let (own, others) = state.withLock { state in
            let resumptions =
                switch outcome {
                case .success(let fresh): state.machine.refreshSucceeded(with: fresh)
                case .failure(let error): state.machine.refreshFailed(error)
                }
            var own = outcome
            var others: [(CheckedContinuation<Step, Never>, Result<A.Credential, AuthenticationError>)] = []
            for resumption in resumptions {
                if resumption.id == refresher {
                    own = resumption.result
                } else if let continuation = state.waiting.removeValue(forKey: resumption.id) {
                    others.append((continuation, resumption.result))
                }
            }
            return (own, others)
        }
        for (continuation, result) in others { continuation.resume(returning: .finished(result)) }
        return own
    }
}
