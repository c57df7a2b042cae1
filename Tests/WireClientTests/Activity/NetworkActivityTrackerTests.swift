import Foundation
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireClient
import WireTestSupport

/// The network activity tracker's timers on a clock the test moves, then real tasks of a manager on loopback.
@Suite(.sharedIO(minutes: 1))
struct NetworkActivityTrackerTests {
    /// A clock whose sleepers wake only when the test advances it.
    final class SteppedClock: Clock, Sendable {
        struct Instant: InstantProtocol {
            var offset: Duration
            func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
            func duration(to other: Instant) -> Duration { other.offset - offset }
            static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        }

        private struct State {
            var now = Duration.zero
            var sleepers: [Int: (deadline: Duration, continuation: CheckedContinuation<Void, any Error>)] = [:]
            var cancelled: Set<Int> = []
            var next = 0
        }

        private let state = Lock(State())
        var now: Instant { Instant(offset: state.withLock { $0.now }) }
        var minimumResolution: Duration { .nanoseconds(1) }
        var sleeperCount: Int { state.withLock { $0.sleepers.count } }

        func advance(by duration: Duration) {
            let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
                state.now += duration
                let keys = state.sleepers.filter { $0.value.deadline <= state.now }.map(\.key)
                return keys.compactMap { state.sleepers.removeValue(forKey: $0)?.continuation }
            }
            for continuation in due { continuation.resume() }
        }

        func sleep(until deadline: Instant, tolerance: Duration?) async throws {
            let id = state.withLock { state -> Int in
                state.next += 1
                return state.next
            }
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let outcome = state.withLock { state -> Bool? in
                        if state.cancelled.remove(id) != nil { return false }
                        if deadline.offset <= state.now { return true }
                        state.sleepers[id] = (deadline.offset, continuation)
                        return nil
                    }
                    switch outcome {
                    case true?: continuation.resume()
                    case false?: continuation.resume(throwing: CancellationError())
                    case nil: break
                    }
                }
            } onCancel: {
                let sleeper = state.withLock { state in
                    let sleeper = state.sleepers.removeValue(forKey: id)
                    if sleeper == nil { state.cancelled.insert(id) }
                    return sleeper
                }
                sleeper?.continuation.resume(throwing: CancellationError())
            }
        }
    }

    static let url = URL(string: "http://127.0.0.1:9/never-sent")!

    @Test func shortActivityNeverShowsAndLongActivityShowsThenLingers() async throws {
        let clock = SteppedClock()
        let tracker = NetworkActivityTracker(clock: clock)
        let changes = Recorder<Bool>()
        tracker.onChange = { changes.record($0) }
        tracker.isEnabled = true
        // Tasks never resumed send nothing: the events are handed to the tracker as a manager would.
        let manager = SessionManager()
        let short = manager.dataTask(with: ClientRequest(url: Self.url))
        let long = manager.dataTask(with: ClientRequest(url: Self.url))

        tracker.manager(manager, didEmit: .didResume(short))
        #expect(tracker.state == .delayingStart && tracker.activityCount == 1)
        #expect(await eventually(within: .seconds(10)) { clock.sleeperCount == 1 })
        clock.advance(by: .milliseconds(500))
        tracker.manager(manager, didEmit: .didComplete(short, CompletionInfo()))
        clock.advance(by: .milliseconds(600))
        #expect(await eventually(within: .seconds(10)) { tracker.state == .notActive })
        #expect(!tracker.isVisible)

        tracker.manager(manager, didEmit: .didResume(long))
        #expect(await eventually(within: .seconds(10)) { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(1))
        #expect(await eventually(within: .seconds(10)) { tracker.isVisible })
        tracker.manager(manager, didEmit: .didSuspend(long))
        tracker.manager(manager, didEmit: .didComplete(long, CompletionInfo()))
        #expect(tracker.state == .delayingEnd && tracker.isVisible && tracker.activityCount == 0)
        #expect(await eventually(within: .seconds(10)) { clock.sleeperCount == 1 })
        clock.advance(by: .milliseconds(169))
        #expect(tracker.isVisible)
        clock.advance(by: .milliseconds(1))
        #expect(await eventually(within: .seconds(10)) { !tracker.isVisible && changes.all == [true, false] })
        short.cancel()
        long.cancel()
    }

    @Test func disablingHidesAndCancelsTheTimers() async throws {
        let clock = SteppedClock()
        let tracker = NetworkActivityTracker(activationDelay: .zero, clock: clock)
        tracker.isEnabled = true
        let manager = SessionManager()
        let task = manager.dataTask(with: ClientRequest(url: Self.url))
        tracker.manager(manager, didEmit: .didResume(task))
        #expect(tracker.isVisible)  // a zero activation delay shows at once
        tracker.manager(manager, didEmit: .didComplete(task, CompletionInfo()))
        #expect(await eventually(within: .seconds(10)) { clock.sleeperCount == 1 })
        tracker.enabled = false
        #expect(!tracker.isVisible && tracker.state == .notActive)
        #expect(await eventually(within: .seconds(10)) { clock.sleeperCount == 0 }, "the completion timer still sleeps")
        task.cancel()
    }

    @Test(.exclusiveIO) func realTasksShowWhileTheyRunAndASuspendedThenCancelledOneCountsOnce() async throws {
        let gate = SessionInvalidationTests.Gate()
        try await LoopbackServer.with({ request, writer in
            if request.target == "/hold" { await gate.wait() }
            try await writer.reply(200, "ok")
        }) { server in
            let tracker = NetworkActivityTracker(activationDelay: .zero, completionDelay: .zero)
            tracker.isEnabled = true
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            tracker.track(manager)
            let seen = Recorder<Bool>()
            let stream = tracker.visibility
            let reader = Task { for await visible in stream { seen.record(visible) } }

            let held = manager.dataTask(with: ClientRequest(url: server.url("/hold")))
            held.resume()
            #expect(await eventually(within: .seconds(10)) { tracker.isVisible && server.requests.count == 1 })
            let other = manager.dataTask(with: ClientRequest(url: server.url("/hold")))
            other.resume()
            other.suspend()
            other.cancel()
            #expect(await eventually(within: .seconds(10)) { manager.tasks.count == 1 })
            #expect(await eventually(within: .seconds(10)) { tracker.activityCount == 1 })
            #expect(tracker.isVisible, "the suspended, then cancelled task was taken off twice")

            gate.open()
            #expect(await eventually(within: .seconds(10)) { manager.tasks.isEmpty && !tracker.isVisible })
            _ = try await manager.data(for: ClientRequest(url: server.url("/quick")))
            #expect(await eventually(within: .seconds(10)) { seen.all == [true, false, true, false] })
            reader.cancel()
        }
    }
}
