import Foundation
import Synchronization
import Testing
import Wire
import WireClient
import WireTestSupport

/// The `async` forms run their task's transfer in the caller's Swift task: `cancel()` from elsewhere, a timeout, a
/// retry's delay and the caller's own cancellation must still end it promptly, with the task's own reason, and leave
/// no descriptor, task or delegate behind. The server is `FaultPeer`'s stall scenario, on the engine of
/// `wire serve --faults`: `/head` is never answered, `/held` only when the test releases it, `/body` sends ten of a
/// thousand bytes and then nothing, `/busy` answers 503, anything else 200.
@Suite(.serialized, .exclusiveIO)
struct SessionAsyncInlineTests {
    /// Runs `data(for:)` in a Swift task of its own; `outcome` gets its error code (nil: success) when it returns.
    static func start(_ manager: SessionManager, _ url: URL, into outcome: Recorder<ClientError.Code?>) -> Task<Void, Never> {
        Task {
            do {
                _ = try await manager.data(for: ClientRequest(url: url))
                outcome.record(nil)
            } catch {
                outcome.record((error as? ClientError)?.code)
            }
        }
    }

    /// Starts a request to `path`, waits until `ready`, runs `stop`, and expects the call to end within five seconds
    /// with `expected`, its task's events to be `didResume` then `didComplete`, and nothing left behind.
    static func expectStopped(
        _ path: String, _ expected: ClientError.Code,
        configure: (inout SessionConfiguration) -> Void = { _ in },
        interceptor: (any Interceptor)? = nil,
        ready: @escaping @Sendable (FaultPeer, SessionManager) -> Bool,
        stop: (SessionManager, Task<Void, Never>) -> Void
    ) async throws {
        try await FaultPeer.with { server in
            // One request first, so that descriptors opened once per process (the runtime's timers) are counted.
            try await SessionLeakTests.withManager { manager in
                _ = try await manager.data(for: ClientRequest(url: server.url("/ok")))
            }
            let before = await SessionLeakTests.settledDescriptors()
            let events = Recorder<String>()
            var configuration = SessionConfiguration()
            configure(&configuration)
            let manager = SessionManager(configuration: configuration, eventMonitors: [RecordingMonitor(recorder: events)])
            manager.responseSerializer = HTTPResponseSerializer()
            manager.interceptor = interceptor
            let invalidated = Recorder<Bool>()
            manager.sessionDidBecomeInvalid = { _ in invalidated.record(true) }
            let outcome = Recorder<ClientError.Code?>()
            let call = Self.start(manager, server.url(path), into: outcome)
            #expect(await eventually(within: .seconds(10)) { ready(server, manager) })
            stop(manager, call)
            let ended = await eventually(within: .seconds(5)) { !outcome.all.isEmpty }
            #expect(ended, "the inline transfer did not end")
            // Whatever happened, the server lets go, so the call (and this test) ends.
            if !ended { try await server.closeConnections() }
            await call.value
            #expect(outcome.all == [expected])
            #expect(await eventually(within: .seconds(5)) { events.all.count == 2 })
            // The task's identifier from its first event: a timeout can end the task before a poll sees it listed.
            let resumed = events.all.first ?? ""
            #expect(resumed.hasPrefix("didResume#"))
            #expect(events.all == [resumed, "didComplete#\(resumed.dropFirst("didResume#".count))"])
            #expect(manager.tasks.isEmpty, "a task outlived its completion")
            manager.invalidateSession(cancelingTasks: true)
            #expect(await eventually(within: .seconds(10)) { !invalidated.all.isEmpty })
            let after = await eventually(within: .seconds(10)) { SessionLeakTests.descriptors() <= before }
            #expect(after, "descriptors: \(before) before, \(SessionLeakTests.descriptors()) after")
        }
    }

    @Test(arguments: ["/head", "/body"])
    func cancellingTheSessionTaskAbortsTheInlineTransfer(_ path: String) async throws {
        try await Self.expectStopped(
            path, .cancelled,
            ready: { server, manager in
                guard server.targets.contains(path), let task = manager.tasks.first else { return false }
                return path == "/head" || task.countOfBytesReceived >= 10
            },
            stop: { manager, _ in
                manager.tasks.first?.cancel()
            })
    }

    @Test(arguments: ["/head", "/body"])
    func cancellingTheCallerCancelsTheInlineTransfer(_ path: String) async throws {
        try await Self.expectStopped(
            path, .cancelled,
            ready: { server, manager in
                guard server.targets.contains(path), let task = manager.tasks.first else { return false }
                return path == "/head" || task.countOfBytesReceived >= 10
            },
            stop: { _, call in
                call.cancel()
            })
    }

    /// The idle timeout is WireClient's alone (Wire's read timeout is the resource timeout): only the abort ends it.
    @Test func theIdleTimeoutEndsTheInlineTransfer() async throws {
        try await Self.expectStopped(
            "/body", .timedOut, configure: { $0.timeoutIntervalForRequest = .milliseconds(300) * Sanitizer.timeScale },
            ready: { server, _ in server.targets.contains("/body") },
            stop: { _, _ in })
    }

    @Test func theResourceTimeoutEndsTheInlineTransfer() async throws {
        try await Self.expectStopped(
            "/head", .timedOut, configure: { $0.timeoutIntervalForResource = .milliseconds(300) * Sanitizer.timeScale },
            ready: { server, _ in server.targets.contains("/head") },
            stop: { _, _ in })
    }

    /// A retry's delay is the task's own wait, not Wire's: `cancel()` on the session task and the caller's
    /// cancellation must each end it.
    @Test(arguments: [false, true])
    func cancellingEndsARetryDelay(byTheCaller: Bool) async throws {
        let asked = Counter()
        let retrier = Retrier { _, _, _, _ in
            asked.add()
            return .retryAfter(.seconds(60))
        }
        try await Self.expectStopped(
            "/busy", .cancelled, interceptor: retrier,
            ready: { _, _ in asked.current == 1 },
            stop: { manager, call in
                if byTheCaller { call.cancel() } else { manager.tasks.first?.cancel() }
            })
    }

    /// A caller waiting for a slot (`maximumConcurrentTasks`) waits on the manager, not on Wire: cancelling it ends
    /// the wait at once, with `.cancelled`, and the request is never sent.
    @Test func cancellingTheCallerEndsItsWaitForASlot() async throws {
        try await FaultPeer.with { server in
            var configuration = SessionConfiguration()
            configuration.maximumConcurrentTasks = 1
            let manager = SessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            // `/held` is answered only when the test releases it.
            let holder = manager.dataTask(with: ClientRequest(url: server.url("/held")))
            holder.resume()
            #expect(await eventually(within: .seconds(10)) { server.targets.contains("/held") })
            let outcome = Recorder<ClientError.Code?>()
            let call = Self.start(manager, server.url("/ok"), into: outcome)
            #expect(await eventually(within: .seconds(10)) { manager.tasks.count == 2 })
            call.cancel()
            let ended = await eventually(within: .seconds(5)) { !outcome.all.isEmpty }
            #expect(ended, "the wait for a slot did not end")
            try await server.releaseHeld()
            await call.value
            #expect(outcome.all == [.cancelled])
            #expect(await eventually(within: .seconds(10)) { manager.tasks.isEmpty })
            #expect(!server.targets.contains("/ok"))
            manager.invalidateSession(cancelingTasks: true)
        }
    }
}
