import Synchronization

/// A task's idle timeout (NSURLRequest's `timeoutInterval`): fires when no byte moved for `timeout`, restarted by
/// every byte, paused while the task is suspended. A Swift task sleeps until the deadline and re-reads it on waking.
final class IdleTimer: Sendable {
    private struct State {
        var lastActivity: ContinuousClock.Instant
        var paused = false
        /// Waits on the caller's side (hooks on the delegate queue) under way: not network silence.
        var holds = 0
    }

    private let timeout: Duration
    private let state: Mutex<State>
    private let watcher = Mutex<Task<Void, Never>?>(nil)

    /// Starts watching; `expired` is called once if the timeout passes.
    init(timeout: Duration, expired: @escaping @Sendable () -> Void) {
        self.timeout = timeout
        state = Mutex(State(lastActivity: .now))
        let task = Task { [weak self] in
            while let wake = self?.check() {
                guard let wake else {
                    expired()
                    return
                }
                guard (try? await Task.sleep(until: wake, clock: .continuous)) != nil else { return }
            }
        }
        watcher.withLock { $0 = task }
    }

    /// When to look again, or nil when the timeout has passed.
    private func check() -> ContinuousClock.Instant?? {
        let snapshot = state.withLock { $0 }
        let now = ContinuousClock.now
        if snapshot.paused || snapshot.holds > 0 { return .some(now + timeout) }
        let deadline = snapshot.lastActivity + timeout
        return now >= deadline ? .some(nil) : .some(deadline)
    }

    /// A byte moved: the timeout starts again.
    func touch() {
        state.withLock { $0.lastActivity = .now }
    }

    /// Suspended: the timeout stops counting. Resumed: it starts again from now.
    func setPaused(_ paused: Bool) {
        state.withLock { state in
            state.paused = paused
            state.lastActivity = .now
        }
    }

    /// The transfer waits for the caller (a hook on the busy delegate queue): the timeout stops counting until
    /// `endHold()`, so a slow hook, this task's or another's, never looks like a silent server.
    func beginHold() {
        state.withLock { $0.holds += 1 }
    }

    /// The caller answered: the timeout starts again from now.
    func endHold() {
        state.withLock { state in
            state.holds -= 1
            state.lastActivity = .now
        }
    }

    /// Stops watching.
    func cancel() {
        watcher.withLock { $0 }?.cancel()
    }
}
