import Foundation
import Synchronization
import Testing
import Wire
import WireClient
import WireTestSupport

/// Issue 13 item 6 in the session: the manager's and the request's interceptors adapt every attempt, and a failed
/// attempt (a transport error or a status the serializer refuses) goes to the retriers.
@Suite(.sharedIO(minutes: 1))
struct SessionRetryTests {
    /// Answers 503 to the first `failures` requests, then 200 with a JSON body.
    private static func flaky(_ failures: Int, seen: Counter)
        -> @Sendable (LoopbackServer.Recorded, HTTPResponseWriter) async throws -> Void
    {
        { _, writer in
            if seen.add() <= failures {
                try await writer.reply(503, "busy", headers: ["Retry-After": "0"])
            } else {
                try await writer.reply(200, #"{"ok":true}"#, headers: ["Content-Type": "application/json"])
            }
        }
    }

    @Test func aRetryPolicyTurnsTwo503sIntoTheThirdAttemptsAnswer() async throws {
        let seen = Counter()
        try await LoopbackServer.with(Self.flaky(2, seen: seen)) { server in
            let manager = SessionManager()
            manager.interceptor = RetryInterceptor(policy: RetryPolicy(baseDelay: .milliseconds(1), jitter: .none))
            let result = try await manager.data(for: ClientRequest(url: server.url("/flaky")))
            #expect(result.value as? JSONValue == .object(["ok": .bool(true)]))
            #expect(result.response?.statusCode == 200)
            #expect(server.requests.count == 3)
        }
    }

    @Test func withoutAnInterceptorNothingIsRetried() async throws {
        let seen = Counter()
        try await LoopbackServer.with(Self.flaky(1, seen: seen)) { server in
            let manager = SessionManager()
            await #expect(throws: ClientError(.unacceptableStatusCode(503))) {
                try await manager.data(for: ClientRequest(url: server.url("/once")))
            }
            #expect(server.requests.count == 1)
        }
    }

    @Test func theRequestsAdapterRunsOnEveryAttemptAfterTheManagers() async throws {
        let seen = Counter()
        try await LoopbackServer.with(Self.flaky(1, seen: seen)) { server in
            let manager = SessionManager()
            let attempts = Counter()
            manager.interceptor = InterceptorChain(interceptors: [
                Adapter { request in
                    var adapted = request
                    adapted.headers.replaceOrAdd(name: "X-Order", value: "manager")
                    return adapted
                },
                Retrier { _, attempt, _, _ in attempt <= 3 ? .retry : .doNotRetry },
            ])
            var request = ClientRequest(url: server.url("/adapted"))
            request.interceptor = Adapter { request in
                var adapted = request
                adapted.headers.add(name: "X-Order", value: "request")
                adapted.headers.replaceOrAdd(name: "X-Attempt", value: String(attempts.add()))
                return adapted
            }
            _ = try await manager.data(for: request)
            #expect(server.requests.map { $0.headers["X-Order"] } == [["manager", "request"], ["manager", "request"]])
            #expect(server.requests.map { $0.headers.first(name: "X-Attempt") } == ["1", "2"])
        }
    }

    @Test func aDelayIsWaitedWithoutCountingAsIdleTime() async throws {
        let seen = Counter()
        let arrivals = Recorder<ContinuousClock.Instant>()
        try await LoopbackServer.with({ record, writer in
            arrivals.record(.now)
            try await Self.flaky(1, seen: seen)(record, writer)
        }) { server in
            // The delay is twice the idle timeout; both grow under a sanitizer, where a loaded machine's exchange can
            // be silent for longer than 150 ms.
            let idleTimeout = Duration.milliseconds(200) * Sanitizer.timeScale
            let delay = idleTimeout * 2
            var configuration = SessionConfiguration.default
            configuration.timeoutIntervalForRequest = idleTimeout
            let manager = SessionManager(configuration: configuration)
            manager.interceptor = Retrier { _, attempt, _, _ in attempt == 1 ? .retryAfter(delay) : .doNotRetry }
            let result = try await manager.data(for: ClientRequest(url: server.url("/later")))
            #expect(result.response?.statusCode == 200)
            let times = arrivals.all
            #expect(times.count == 2)
            if times.count == 2 { #expect(times[0].duration(to: times[1]) >= delay) }
        }
    }

    @Test func aRetrierCanReplaceTheErrorAndAnAdapterCanRefuse() async throws {
        let seen = Counter()
        try await LoopbackServer.with(Self.flaky(5, seen: seen)) { server in
            let manager = SessionManager()
            manager.interceptor = Retrier { _, _, _, _ in .doNotRetryWithError(ClientError(.cancelled)) }
            await #expect(throws: ClientError(.cancelled)) {
                try await manager.data(for: ClientRequest(url: server.url("/replaced")))
            }
            struct Refused: Error {}
            manager.interceptor = Adapter { _ in throw Refused() }
            do throws(ClientError) {
                _ = try await manager.data(for: ClientRequest(url: server.url("/refused")))
                Issue.record("an adapter that throws must fail the task")
            } catch {
                #expect(error.code == .requestSerializationFailed)
                #expect(error.underlying is Refused)
            }
            #expect(server.requests.map(\.target) == ["/replaced"], "a refused request is never sent")
        }
    }
}
