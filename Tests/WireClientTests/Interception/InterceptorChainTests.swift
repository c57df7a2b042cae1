import FoundationEssentials
import Synchronization
import Testing
import WireClient

/// `InterceptorChain`: adapters in order, the first retrier that decides wins, the manager before the request.
@Suite struct InterceptorChainTests {
    struct Refused: Error {}

    static func header(_ value: String) -> Adapter {
        Adapter { request in
            var request = request
            let previous = request.value(forHTTPHeaderField: "X-Trail").map { $0 + "," } ?? ""
            request.setValue(previous + value, forHTTPHeaderField: "X-Trail")
            return request
        }
    }

    /// A retrier that records that it was asked and answers `decision`.
    static func answering(_ decision: RetryDecision, _ name: String, log: Log) -> Retrier {
        Retrier { _, _, _, _ in
            log.append(name)
            return decision
        }
    }

    @Test func adaptersRunInOrderOnEachOthersOutput() async throws {
        let chain = InterceptorChain(adapters: [Self.header("a"), Self.header("b"), Self.header("c")])
        let adapted = try await chain.adapt(Fixtures.request())
        #expect(adapted.value(forHTTPHeaderField: "X-Trail") == "a,b,c")
    }

    @Test func theFirstThrowingAdapterEndsTheChain() async {
        let log = Log()
        let after = Adapter { request in
            log.append("after")
            return request
        }
        let chain = InterceptorChain(adapters: [Self.header("a"), Adapter { _ in throw Refused() }, after])
        await #expect(throws: Refused.self) { try await chain.adapt(Fixtures.request()) }
        #expect(log.entries.isEmpty)
    }

    @Test(arguments: [
        (RetryDecision.retry, ["first", "second"]),
        (.retryAfter(.seconds(3)), ["first", "second"]),
        (.doNotRetryWithError(ClientError(.cancelled)), ["first", "second"]),
        (.doNotRetry, ["first", "second", "third"]),
    ])
    func theFirstRetrierThatDecidesWins(second: RetryDecision, asked: [String]) async {
        let log = Log()
        let chain = InterceptorChain(retriers: [
            Self.answering(.doNotRetry, "first", log: log),
            Self.answering(second, "second", log: log),
            Self.answering(.retry, "third", log: log),
        ])
        let decision = await chain.retry(Fixtures.request(), attempt: 1, response: nil, error: ClientError(.timedOut))
        #expect(decision == (second == .doNotRetry ? .retry : second))
        #expect(log.entries == asked)
        if case .doNotRetryWithError(let error) = decision { #expect(error.code == .cancelled) }
    }

    @Test func anEmptyChainChangesNothingAndNeverRetries() async throws {
        let chain = InterceptorChain()
        let request = Fixtures.request("PUT")
        #expect(try await chain.adapt(request).method == "PUT")
        #expect(await chain.retry(request, attempt: 1, response: nil, error: ClientError(.timedOut)) == .doNotRetry)
    }

    @Test func theManagersInterceptorComesBeforeTheRequests() async throws {
        struct Both: Interceptor {
            let name: String
            let decision: RetryDecision
            let log: Log
            func adapt(_ request: ClientRequest) async throws -> ClientRequest {
                try await InterceptorChainTests.header(name).adapt(request)
            }
            func retry(_ request: ClientRequest, attempt: Int, response: ClientResponse?, error: ClientError) async
                -> RetryDecision
            {
                log.append(name)
                return decision
            }
        }
        let log = Log()
        let chain = InterceptorChain.combining(
            manager: Both(name: "manager", decision: .retryAfter(.seconds(1)), log: log),
            request: Both(name: "request", decision: .retry, log: log))
        #expect(try await chain.adapt(Fixtures.request()).value(forHTTPHeaderField: "X-Trail") == "manager,request")
        #expect(
            await chain.retry(Fixtures.request(), attempt: 1, response: nil, error: ClientError(.timedOut))
                == .retryAfter(.seconds(1)))
        #expect(log.entries == ["manager"])
        let requestOnly = InterceptorChain.combining(manager: nil, request: Both(name: "request", decision: .retry, log: log))
        #expect(requestOnly.retriers.count == 1)
    }
}
