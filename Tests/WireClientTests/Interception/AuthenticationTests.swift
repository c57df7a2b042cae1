import FoundationEssentials
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireClient

/// The authenticator: one refresh for any number of concurrent 401s, a failed refresh failing every waiter, and a
/// stale credential retried without a second refresh.
@Suite struct AuthenticationTests {
    typealias Machine = AuthenticationStateMachine<String>

    // MARK: the state machine, without tasks

    @Test func concurrentFailuresShareOneRefresh() {
        var machine = Machine(credential: "t0")
        guard case .refresh("t0") = machine.authenticationFailed(0, generation: 0, now: .zero) else {
            Issue.record("the first failure does not refresh")
            return
        }
        for id in 1..<8 {
            guard case .wait = machine.authenticationFailed(id, generation: 0, now: .zero) else {
                Issue.record("request \(id) does not wait")
                return
            }
        }
        // A request adapted meanwhile waits too, and gets the new credential.
        guard case .wait = machine.adapt(8, generation: 0, requiresRefresh: false, now: .zero) else {
            Issue.record("an adapt during the refresh does not wait")
            return
        }
        #expect(machine.waiterCount == 9)
        let resumptions = machine.refreshSucceeded(with: "t1")
        #expect(resumptions.map(\.id) == Array(0...8))
        #expect(resumptions.allSatisfy { (try? $0.result.get()) == "t1" })
        #expect(!machine.isRefreshing)
        #expect(machine.credential == "t1")
        #expect(machine.generation == 1)
    }

    @Test func aRefreshFailureFailsEveryWaiterAndKeepsTheCredential() {
        var machine = Machine(credential: "t0")
        _ = machine.authenticationFailed(0, generation: 0, now: .zero)
        _ = machine.authenticationFailed(1, generation: 0, now: .zero)
        _ = machine.adapt(2, generation: 0, requiresRefresh: true, now: .zero)
        let resumptions = machine.refreshFailed(AuthenticationError(.refreshFailed))
        #expect(resumptions.count == 3)
        for resumption in resumptions {
            guard case .failure(let error) = resumption.result else {
                Issue.record("request \(resumption.id) was not failed")
                continue
            }
            #expect(error.reason == .refreshFailed)
        }
        #expect(machine.credential == "t0")
        #expect(!machine.isRefreshing)
    }

    @Test func aRequestSentWithAReplacedCredentialIsRetriedWithoutARefresh() {
        var machine = Machine(credential: "t0")
        _ = machine.authenticationFailed(0, generation: 0, now: .zero)
        _ = machine.refreshSucceeded(with: "t1")
        // Sent with t0 (generation 0) but refused after the refresh: retried with t1 at once.
        guard case .proceed("t1") = machine.authenticationFailed(1, generation: 0, now: .zero) else {
            Issue.record("a stale request is not retried at once")
            return
        }
        guard case .proceed("t1") = machine.authenticationFailed(2, generation: nil, now: .zero) else {
            Issue.record("a request not sent with the current credential is not retried at once")
            return
        }
        #expect(!machine.isRefreshing)
        // Refused with the current credential: that one refreshes again.
        guard case .refresh("t1") = machine.authenticationFailed(3, generation: 1, now: .zero) else {
            Issue.record("a request refused with the current credential does not refresh")
            return
        }
    }

    @Test func adaptAppliesRefreshesOrFails() {
        var empty = Machine(credential: nil)
        guard case .fail(let error) = empty.adapt(0, generation: 0, requiresRefresh: false, now: .zero) else {
            Issue.record("no credential does not fail")
            return
        }
        #expect(error.reason == .missingCredential)
        var machine = Machine(credential: "t0")
        guard case .proceed("t0") = machine.adapt(0, generation: 0, requiresRefresh: false, now: .zero) else {
            Issue.record("a valid credential is not applied")
            return
        }
        guard case .refresh("t0") = machine.adapt(1, generation: 0, requiresRefresh: true, now: .zero) else {
            Issue.record("an expiring credential is not refreshed")
            return
        }
        _ = machine.refreshSucceeded(with: "t1")
        // The caller saw generation 0 expiring; generation 1 is already fresh.
        guard case .proceed("t1") = machine.adapt(2, generation: 0, requiresRefresh: true, now: .zero) else {
            Issue.record("a replaced credential is refreshed again")
            return
        }
    }

    @Test func refreshesAreLimitedPerWindow() {
        var machine = Machine(credential: "t0", refreshWindow: .init(interval: .seconds(30), maximumRefreshes: 2))
        for round in 0..<2 {
            guard case .refresh = machine.authenticationFailed(round, generation: round, now: .seconds(round)) else {
                Issue.record("refresh \(round) refused")
                return
            }
            _ = machine.refreshSucceeded(with: "t\(round + 1)")
        }
        guard case .fail(let error) = machine.authenticationFailed(9, generation: 2, now: .seconds(29)) else {
            Issue.record("a third refresh within 30 s is allowed")
            return
        }
        #expect(error.reason == .excessiveRefresh)
        guard case .refresh = machine.authenticationFailed(10, generation: 2, now: .seconds(30)) else {
            Issue.record("the window does not slide")
            return
        }
    }

    // MARK: the interceptor, with tasks

    struct Token: AuthenticationCredential, Equatable {
        var value: String
        var requiresRefresh: Bool { false }
    }

    struct Refusal: Error {}

    /// Counts refreshes; each refresh waits for the test to open `gate` once every request is waiting.
    final class TokenAuthenticator: Authenticator {
        let refreshes = Lock(0)
        let gate = AsyncStream<Bool>.makeStream()
        let fails: Bool

        init(fails: Bool = false) { self.fails = fails }

        func apply(_ credential: Token, to request: inout ClientRequest) {
            request.setValue("Bearer \(credential.value)", forHTTPHeaderField: "Authorization")
        }

        func refresh(_ credential: Token) async throws -> Token {
            let count = refreshes.withLock {
                $0 += 1; return $0
            }
            var gates = gate.stream.makeAsyncIterator()
            _ = await gates.next()
            if fails { throw Refusal() }
            return Token(value: "t\(count)")
        }

        func isRequest(_ request: ClientRequest, authenticatedWith credential: Token) -> Bool {
            request.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.value)"
        }
    }

    /// Waits (yielding, bounded) until `condition` holds.
    static func until(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            await Task.yield()
        }
    }

    static func refused(_ interceptor: AuthenticationInterceptor<TokenAuthenticator>, count: Int) async throws
        -> [RetryDecision]
    {
        let sent = try await interceptor.adapt(Fixtures.request())
        #expect(sent.value(forHTTPHeaderField: "Authorization") == "Bearer t0")
        let response = Fixtures.response(401)
        return try await withThrowingTaskGroup(of: RetryDecision.self) { group in
            for _ in 0..<count {
                group.addTask {
                    await interceptor.retry(sent, attempt: 1, response: response, error: Fixtures.statusError(response))
                }
            }
            // Every request is refused before the refresh ends.
            try await until { interceptor.waitingRequestCount == count }
            interceptor.authenticator.gate.continuation.yield(true)
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test func sixteenConcurrent401sRefreshOnceThenEachRetriesOnce() async throws {
        let authenticator = TokenAuthenticator()
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: Token(value: "t0"))
        let decisions = try await Self.refused(interceptor, count: 16)
        #expect(decisions == Array(repeating: .retry, count: 16))
        #expect(authenticator.refreshes.withLock { $0 } == 1)
        #expect(interceptor.credential == Token(value: "t1"))
        let next = try await interceptor.adapt(Fixtures.request())
        #expect(next.value(forHTTPHeaderField: "Authorization") == "Bearer t1")
        // A request still carrying t0, refused now, is retried without a second refresh.
        var stale = Fixtures.request()
        stale.setValue("Bearer t0", forHTTPHeaderField: "Authorization")
        let response = Fixtures.response(401)
        #expect(
            await interceptor.retry(stale, attempt: 1, response: response, error: Fixtures.statusError(response))
                == .retry)
        #expect(authenticator.refreshes.withLock { $0 } == 1)
    }

    @Test func aFailedRefreshFailsEveryWaiterWithATypedError() async throws {
        let authenticator = TokenAuthenticator(fails: true)
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: Token(value: "t0"))
        let decisions = try await Self.refused(interceptor, count: 5)
        #expect(decisions.count == 5)
        for decision in decisions {
            guard case .doNotRetryWithError(let error) = decision else {
                Issue.record("\(decision)")
                continue
            }
            #expect(error.code == .unacceptableStatusCode(401))
            #expect((error.underlying as? AuthenticationError)?.reason == .refreshFailed)
            #expect((error.underlying as? AuthenticationError)?.underlying is Refusal)
        }
        #expect(authenticator.refreshes.withLock { $0 } == 1)
        #expect(interceptor.credential == Token(value: "t0"))
    }

    @Test func otherFailuresAreNotTheAuthenticatorsBusiness() async throws {
        let interceptor = AuthenticationInterceptor(authenticator: TokenAuthenticator(), credential: Token(value: "t0"))
        let response = Fixtures.response(503)
        #expect(
            await interceptor.retry(
                Fixtures.request(), attempt: 1, response: response,
                error: Fixtures.statusError(response)) == .doNotRetry)
        let none = AuthenticationInterceptor(authenticator: TokenAuthenticator())
        await #expect(throws: AuthenticationError.self) { try await none.adapt(Fixtures.request()) }
    }
}
