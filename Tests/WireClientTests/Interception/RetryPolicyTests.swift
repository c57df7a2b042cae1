import FoundationEssentials
import Testing
import WireTestSupport
import Wire
import WireClient

/// `RetryPolicy` as a pure decision: which failures, how long, how often, within which budget.
@Suite struct RetryPolicyTests {
    /// A policy without jitter, so delays are exact.
    static let plain = RetryPolicy(
        maximumRetries: 3, baseDelay: .seconds(1), multiplier: 2,
        maximumDelay: .seconds(10), jitter: .none)
    /// 2023-11-14 22:13:20 UTC, a Tuesday.
    static let date = Date(timeIntervalSince1970: 1_700_000_000)

    func evaluate(
        _ policy: RetryPolicy = plain, method: String = "GET", attempt: Int = 1,
        response: ClientResponse? = nil, error: ClientError, budget: inout RetryBudget?,
        now: Duration = .zero
    ) -> RetryPolicy.Outcome {
        var generator = SplitMix64(seed: 1)
        return policy.evaluate(
            Fixtures.request(method), attempt: attempt, response: response, error: error,
            now: now, date: Self.date, budget: &budget, using: &generator)
    }

    func evaluate(
        _ policy: RetryPolicy = plain, method: String = "GET", attempt: Int = 1,
        response: ClientResponse? = nil, error: ClientError
    ) -> RetryPolicy.Outcome {
        var budget: RetryBudget? = nil
        return evaluate(policy, method: method, attempt: attempt, response: response, error: error, budget: &budget)
    }

    @Test(arguments: [
        ("GET", true), ("HEAD", true), ("PUT", true), ("DELETE", true), ("OPTIONS", true), ("TRACE", true),
        ("get", true), ("POST", false), ("PATCH", false), ("CONNECT", false),
    ])
    func onlyIdempotentMethodsAreRetriedByDefault(method: String, retried: Bool) {
        let outcome = evaluate(method: method, error: ClientError(.timedOut))
        #expect(outcome == (retried ? .retry(after: .seconds(1), source: .backoff) : .stop(.methodNotRetryable)))
    }

    @Test func everyMethodIsRetriedWhenTheMethodSetIsNil() {
        var policy = Self.plain
        policy.retryableMethods = nil
        #expect(evaluate(policy, method: "POST", error: ClientError(.timedOut)).decision == .retryAfter(.seconds(1)))
    }

    @Test(arguments: [
        (408, true), (429, true), (500, true), (502, true), (503, true), (504, true),
        (400, false), (401, false), (404, false), (501, false), (505, false),
    ])
    func onlyTransientStatusesAreRetried(status: Int, retried: Bool) {
        let response = Fixtures.response(status)
        let outcome = evaluate(response: response, error: Fixtures.statusError(response))
        #expect(outcome == (retried ? .retry(after: .seconds(1), source: .backoff) : .stop(.notTransient)))
        // The status inside the error alone is enough (a validation error without the response attached).
        let bare = evaluate(error: ClientError(.unacceptableStatusCode(status)))
        #expect(bare == outcome)
    }

    @Test(arguments: [
        (ClientError.Code.timedOut, true), (.cannotConnectToHost, true), (.networkConnectionLost, true),
        (.cannotFindHost, true), (.notConnectedToInternet, true), (.cancelled, false), (.badURL, false),
        (.secureConnectionFailed, false), (.responseSerializationFailed, false), (.tooManyRedirects, false),
    ])
    func onlyTransientErrorsAreRetried(code: ClientError.Code, retried: Bool) {
        let outcome = evaluate(error: ClientError(code))
        #expect(outcome == (retried ? .retry(after: .seconds(1), source: .backoff) : .stop(.notTransient)))
        var all = Self.plain
        all.retriesAllErrors = true
        #expect(evaluate(all, error: ClientError(code)).decision == .retryAfter(.seconds(1)))
    }

    @Test func backoffDoublesUpToTheCapAndRetriesStopAtTheMaximum() {
        var policy = Self.plain
        policy.maximumRetries = 6
        let delays = (1...6).map { evaluate(policy, attempt: $0, error: ClientError(.timedOut)) }
        #expect(delays == [1, 2, 4, 8, 10, 10].map { .retry(after: .seconds($0), source: .backoff) })
        #expect(evaluate(policy, attempt: 7, error: ClientError(.timedOut)) == .stop(.retriesExhausted))
        #expect(evaluate(Self.plain, attempt: 4, error: ClientError(.timedOut)) == .stop(.retriesExhausted))
        var none = Self.plain
        none.maximumRetries = 0
        #expect(evaluate(none, error: ClientError(.timedOut)) == .stop(.retriesExhausted))
        // A huge attempt number saturates at the cap instead of overflowing.
        policy.maximumRetries = .max
        #expect(
            evaluate(policy, attempt: 100_000, error: ClientError(.timedOut))
                == .retry(after: .seconds(10), source: .backoff))
    }

    @Test(arguments: [
        // delta-seconds
        ("3", RetryPolicy.Outcome.retry(after: .seconds(3), source: .retryAfter)),
        (" 0 ", .retry(after: .zero, source: .retryAfter)),
        ("11", .stop(.retryAfterTooLong)),
        ("99999999999999999999999999", .stop(.retryAfterTooLong)),
        // HTTP-dates, 5 s after `date`, in the past, and in the obsolete forms
        ("Tue, 14 Nov 2023 22:13:25 GMT", .retry(after: .seconds(5), source: .retryAfter)),
        ("Tuesday, 14-Nov-23 22:13:25 GMT", .retry(after: .seconds(5), source: .retryAfter)),
        ("Tue Nov 14 22:13:25 2023", .retry(after: .seconds(5), source: .retryAfter)),
        ("Tue, 14 Nov 2023 22:00:00 GMT", .retry(after: .zero, source: .retryAfter)),
        ("Wed, 15 Nov 2023 22:13:20 GMT", .stop(.retryAfterTooLong)),
        // garbage: the backoff applies
        ("", .retry(after: .seconds(1), source: .backoff)),
        ("-5", .retry(after: .seconds(1), source: .backoff)),
        ("1.5", .retry(after: .seconds(1), source: .backoff)),
        ("soon", .retry(after: .seconds(1), source: .backoff)),
        ("Tue, 32 Nov 2023 22:13:25 GMT", .retry(after: .seconds(1), source: .backoff)),
        ("\u{0}\u{FFFF}", .retry(after: .seconds(1), source: .backoff)),
    ])
    func retryAfterSetsTheDelay(field: String, expected: RetryPolicy.Outcome) {
        let response = Fixtures.response(503, retryAfter: field)
        #expect(evaluate(response: response, error: Fixtures.statusError(response)) == expected, "\(field)")
    }

    @Test func retryAfterIsIgnoredWhenTheManagerSaysSo() {
        var policy = Self.plain
        policy.honorsRetryAfter = false
        let response = Fixtures.response(429, retryAfter: "7")
        #expect(
            evaluate(policy, response: response, error: Fixtures.statusError(response))
                == .retry(after: .seconds(1), source: .backoff))
    }

    @Test func retryAfterParsesBothForms() {
        #expect(RetryAfter("120") == .seconds(120))
        #expect(RetryAfter("Sun, 06 Nov 1994 08:49:37 GMT") == .date(unixSeconds: 784_111_777))
        #expect(RetryAfter("+1") == nil)
        #expect(RetryAfter("") == nil)
    }

    @Test(arguments: [RetryPolicy.Jitter.full, .equal])
    func jitterStaysWithinItsBounds(jitter: RetryPolicy.Jitter) {
        let policy = RetryPolicy(maximumRetries: 10, baseDelay: .seconds(1), maximumDelay: .seconds(60), jitter: jitter)
        var generator = SplitMix64(seed: 42)
        var budget: RetryBudget? = nil
        var seen = Set<Duration>()
        for attempt in 1...5 {
            let backoff = policy.backoff(attempt: attempt)
            let lower = jitter == .full ? Duration.zero : backoff / 2
            for _ in 0..<200 {
                let outcome = policy.evaluate(
                    Fixtures.request(), attempt: attempt, response: nil,
                    error: ClientError(.timedOut), now: .zero, date: Self.date,
                    budget: &budget, using: &generator)
                guard case .retry(let delay, .backoff) = outcome else {
                    Issue.record("\(outcome)")
                    return
                }
                #expect(delay >= lower && delay <= backoff, "attempt \(attempt): \(delay)")
                seen.insert(delay)
            }
        }
        // Really random: many different delays, and the same seed gives the same sequence.
        #expect(seen.count > 900)
        var first = SplitMix64(seed: 7)
        var second = SplitMix64(seed: 7)
        let one = policy.evaluate(
            Fixtures.request(), attempt: 3, response: nil, error: ClientError(.timedOut),
            now: .zero, date: Self.date, budget: &budget, using: &first)
        let two = policy.evaluate(
            Fixtures.request(), attempt: 3, response: nil, error: ClientError(.timedOut),
            now: .zero, date: Self.date, budget: &budget, using: &second)
        #expect(one == two)
    }

    @Test func theBudgetRunsOutAndRefillsAsTheWindowSlides() {
        var budget: RetryBudget? = RetryBudget(ratio: 0.5, minimumRetries: 1, window: .seconds(10))
        // 4 requests at t = 0: 1 + 0.5 × 4 = 3 retries allowed.
        for _ in 0..<4 { budget!.recordRequest(at: .zero) }
        #expect(budget!.available(at: .zero) == 3)
        for _ in 0..<3 {
            #expect(evaluate(error: ClientError(.timedOut), budget: &budget, now: .seconds(1)).decision.retries)
        }
        #expect(evaluate(error: ClientError(.timedOut), budget: &budget, now: .seconds(1)) == .stop(.budgetExhausted))
        #expect(budget!.available(at: .seconds(1)) == 0)
        // Two more requests earn one more retry.
        budget!.recordRequest(at: .seconds(2))
        budget!.recordRequest(at: .seconds(2))
        #expect(evaluate(error: ClientError(.timedOut), budget: &budget, now: .seconds(3)).decision.retries)
        #expect(evaluate(error: ClientError(.timedOut), budget: &budget, now: .seconds(3)) == .stop(.budgetExhausted))
        // Once t = 0's requests and t = 1's retries leave the window, only t = 2's requests and t = 3's retry count:
        // 1 + 0.5 × 2 − 1 = 1.
        #expect(budget!.available(at: .seconds(11)) == 1)
        // After a whole quiet window, the minimum is back.
        #expect(budget!.available(at: .seconds(30)) == 1)
    }

    @Test func aNonTransientFailureDoesNotSpendTheBudget() {
        var budget: RetryBudget? = RetryBudget(ratio: 0, minimumRetries: 1)
        #expect(evaluate(error: ClientError(.badURL), budget: &budget) == .stop(.notTransient))
        #expect(budget!.available(at: .zero) == 1)
    }

    @Test func theInterceptorCountsRequestsAndReadsTheInjectedClock() async throws {
        let clock = ManualClock()
        let interceptor = RetryInterceptor(
            policy: Self.plain, budget: RetryBudget(ratio: 0, minimumRetries: 2, window: .seconds(10)),
            clock: clock, wallClock: { Self.date }, generator: SplitMix64(seed: 3))
        let request = try await interceptor.adapt(Fixtures.request())
        let response = Fixtures.response(503, retryAfter: "Tue, 14 Nov 2023 22:13:22 GMT")
        #expect(
            await interceptor.retry(request, attempt: 1, response: response, error: Fixtures.statusError(response))
                == .retryAfter(.seconds(2)))
        #expect(
            await interceptor.retry(request, attempt: 1, response: nil, error: ClientError(.timedOut))
                == .retryAfter(.seconds(1)))
        #expect(await interceptor.retry(request, attempt: 1, response: nil, error: ClientError(.timedOut)) == .doNotRetry)
        #expect(
            interceptor.outcome(request, attempt: 1, response: nil, error: ClientError(.timedOut))
                == .stop(.budgetExhausted))
        clock.advance(by: .seconds(10))
        #expect(interceptor.availableRetries == 2)
        #expect(
            await interceptor.retry(request, attempt: 1, response: nil, error: ClientError(.timedOut))
                == .retryAfter(.seconds(1)))
    }
}
