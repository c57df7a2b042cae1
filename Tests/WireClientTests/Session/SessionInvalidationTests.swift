import Foundation
import Synchronization
import Testing
import WireTestSupport
@_spi(Locking) import Wire
import WireClient

/// Invalidation both ways, reset, lifetime, the fd census, `maximumConcurrentTasks` and `batch`.
@Suite(.sharedIO(minutes: 1))
struct SessionInvalidationTests {
    /// `/hold` answers only when `gate` is opened; everything else at once.
    final class Gate: Sendable {
        private let state = Lock<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
        func wait() async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if state.open { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        }
        func open() {
            for waiter in state.withLock({ state -> [CheckedContinuation<Void, Never>] in
                state.open = true
                defer { state.waiters = [] }
                return state.waiters
            }) { waiter.resume() }
        }
    }

    static func holding(_ gate: Gate) -> @Sendable (LoopbackServer.Recorded, HTTPResponseWriter) async throws -> Void {
        { request, writer in
            if request.target.hasPrefix("/hold") { await gate.wait() }
            try await writer.reply(200, "ok")
        }
    }

    @Test func invalidatingWithCancelCompletesEveryTaskThenTellsOnce() async throws {
        let gate = Gate()
        try await LoopbackServer.with(Self.holding(gate)) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let log = Recorder<String>()
            manager.eventMonitors = [RecordingMonitor(recorder: log)]
            manager.sessionDidBecomeInvalid = { error in log.record("hook \(error == nil)") }
            let running = manager.dataTask(with: ClientRequest(url: server.url("/hold"))) { _, _, error in
                log.record("running \(error?.code == .cancelled)")
            }
            _ = manager.dataTask(with: ClientRequest(url: server.url("/later"))) { _, _, error in
                log.record("suspended \(error?.code == .cancelled)")
            }
            running.resume()
            #expect(await eventually(within: .seconds(10)) { server.requests.count == 1 })
            manager.invalidateSession(cancelingTasks: true)
            #expect(await eventually(within: .seconds(10)) { log.all.contains("sessionDidInvalidate") })
            let all = log.all
            let handlers = all.filter { $0.hasPrefix("running") || $0.hasPrefix("suspended") }
            #expect(Set(handlers) == ["running true", "suspended true"])
            let lastHandler = all.lastIndex { $0.hasPrefix("running") || $0.hasPrefix("suspended") }!
            #expect(all.firstIndex(of: "hook true")! > lastHandler)
            #expect(all.filter { $0 == "hook true" }.count == 1 && all.filter { $0 == "sessionDidInvalidate" }.count == 1)
            // Afterwards a task completes at once with .sessionInvalidated and sends nothing.
            await #expect(throws: ClientError(.sessionInvalidated)) {
                try await manager.data(for: ClientRequest(url: server.url("/new")))
            }
            #expect(server.requests.count == 1)
            // Invalidating again does nothing.
            manager.invalidateSession(cancelingTasks: true)
            gate.open()
            #expect(await eventually(within: .seconds(10)) { server.openConnections == 0 })
            #expect(log.all.filter { $0 == "sessionDidInvalidate" }.count == 1)
        }
    }

    @Test func invalidatingWithoutCancelLetsTasksFinishAndResetMakesAFreshSession() async throws {
        let gate = Gate()
        try await LoopbackServer.with(Self.holding(gate)) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let log = Recorder<String>()
            manager.eventMonitors = [RecordingMonitor(recorder: log)]
            manager.sessionDidBecomeInvalid = { _ in log.record("hook") }
            let running = manager.dataTask(with: ClientRequest(url: server.url("/hold"))) { _, value, error in
                log.record("running \((value as? Data).map { String(decoding: $0, as: UTF8.self) } ?? "nil") \(error == nil)")
            }
            let suspended = manager.dataTask(with: ClientRequest(url: server.url("/after"))) { _, _, error in
                log.record("suspended \(error == nil)")
            }
            running.resume()
            #expect(await eventually(within: .seconds(10)) { server.requests.count == 1 })
            manager.invalidateSession(cancelingTasks: false)
            await #expect(throws: ClientError(.sessionInvalidated)) {
                try await manager.data(for: ClientRequest(url: server.url("/new")))
            }
            gate.open()
            #expect(await eventually(within: .seconds(10)) { log.all.contains("running ok true") })
            // The suspended task keeps the session open until it is resumed and finishes.
            #expect(!log.all.contains("hook"))
            suspended.resume()
            #expect(await eventually(within: .seconds(10)) { log.all.contains("sessionDidInvalidate") })
            let all = log.all
            #expect(all.firstIndex(of: "hook")! > all.firstIndex(of: "suspended true")!)
            #expect(await eventually(within: .seconds(10)) { server.openConnections == 0 })

            manager.invalidateSession(cancelingTasks: false, resetSession: true)
            let fresh = try await manager.data(for: ClientRequest(url: server.url("/fresh")))
            #expect(fresh.data == Data("ok".utf8))
        }
    }

    @Test func aManagerIsFreedWhenItsLastTaskCompletesAndClosesItsConnections() async throws {
        try await LoopbackServer.with({ _, writer in
            try await writer.reply(200, "{}", headers: ["Content-Type": "application/json"])
        }) {
            server in
            weak var weakManager: SessionManager?
            weak var weakTask: SessionTask?
            do {
                let manager = SessionManager()
                weakManager = manager
                let finished = Recorder<Bool>()
                let task = manager.dataTask(with: ClientRequest(url: server.url("/a"))) { _, _, error in
                    finished.record(error == nil)
                }
                weakTask = task
                task.resume()
                #expect(await eventually(within: .seconds(10)) { finished.all == [true] })
                #expect(server.openConnections == 1)  // kept alive in the pool
                withExtendedLifetime(manager) {}
            }
            // Nothing else holds the manager: it goes, shutting its own client (and pooled connection) down.
            #expect(await eventually(within: .seconds(10)) { weakManager == nil && weakTask == nil })
            #expect(await eventually(within: .seconds(10)) { server.openConnections == 0 })
        }
    }

    @Test func aRunningTaskHoldsItsManager() async throws {
        let gate = Gate()
        try await LoopbackServer.with(Self.holding(gate)) { server in
            weak var weakManager: SessionManager?
            let finished = Recorder<Bool>()
            do {
                let manager = SessionManager()
                manager.responseSerializer = HTTPResponseSerializer()
                weakManager = manager
                manager.dataTask(with: ClientRequest(url: server.url("/hold"))) { _, _, error in finished.record(error == nil) }
                    .resume()
            }
            #expect(await eventually(within: .seconds(10)) { server.requests.count == 1 })
            #expect(weakManager != nil)
            gate.open()
            #expect(await eventually(within: .seconds(10)) { finished.all == [true] })
            #expect(await eventually(within: .seconds(10)) { weakManager == nil })
        }
    }

    @Test func maximumConcurrentTasksStartsWaitingTasksInResumeOrder() async throws {
        let gates = (0..<5).map { _ in Gate() }
        try await LoopbackServer.with({ request, writer in
            if let index = Int(request.target.dropFirst()) { await gates[index].wait() }
            try await writer.reply(200, "ok")
        }) { server in
            var configuration = SessionConfiguration()
            configuration.maximumConcurrentTasks = 2
            let manager = SessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            let tasks = [3, 0, 4, 1, 2].map { manager.dataTask(with: ClientRequest(url: server.url("/\($0)"))) }
            for task in tasks { task.resume() }
            #expect(tasks.allSatisfy { $0.state == .running })
            #expect(await eventually(within: .seconds(10)) { server.requests.count == 2 })
            #expect(server.requests.map(\.target) == ["/3", "/0"] || server.requests.map(\.target) == ["/0", "/3"])
            gates[0].open()
            #expect(await eventually(within: .seconds(10)) { server.requests.count == 3 })
            #expect(server.requests.last?.target == "/4")
            gates[3].open()
            gates[4].open()
            #expect(await eventually(within: .seconds(10)) { server.requests.count == 5 })
            #expect(
                Array(server.requests.map(\.target).suffix(2)) == ["/1", "/2"]
                    || Array(server.requests.map(\.target).suffix(2)) == ["/2", "/1"])
            gates[1].open()
            gates[2].open()
            #expect(await eventually(within: .seconds(10)) { manager.tasks.isEmpty })
            #expect(tasks.allSatisfy { $0.error == nil })
        }
    }

    @Test func batchReportsProgressAndResultsInInputOrder() async throws {
        try await LoopbackServer.with({ request, writer in
            try await writer.reply(
                request.target == "/bad" ? 500 : 200, "\(request.target)", headers: ["Content-Type": "text/plain"])
        }) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let progress = Recorder<[Int]>()
            let results = await manager.batch(["/a", "/bad", "/c"].map { ClientRequest(url: server.url($0)) }) { done, total in
                progress.record([done, total])
            }
            #expect(results.map { $0.response?.url.path } == ["/a", "/bad", "/c"])
            #expect(results.map { $0.error?.code } == [nil, .unacceptableStatusCode(500), nil])
            #expect(progress.all == [[1, 3], [2, 3], [3, 3]])
            let empty = Recorder<Int>()
            manager.batch([], progress: { _, _ in empty.record(-1) }) { empty.record($0.count) }
            #expect(await eventually(within: .seconds(10)) { empty.all == [0] })
        }
    }
}
