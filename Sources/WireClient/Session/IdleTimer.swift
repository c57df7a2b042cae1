/// A task's idle timeout (NSURLRequest's `timeoutInterval`): fires when no byte moved for `timeout`, restarted by
/// every byte, paused while the task is suspended and while the transfer waits for the caller. An entry of the
/// manager's `TimeoutWatch`, so that a task costs no sleeping Swift task of its own.
final class IdleTimer: Sendable {
    private let watch: TimeoutWatch
    private let key: TimeoutWatch.Key

    /// Starts watching; `expired` is called once if the timeout passes.
    init(timeout: Duration, watch: TimeoutWatch, expired: @escaping @Sendable () -> Void) {
        self.watch = watch
        key = watch.add(idleTimeout: timeout, reference: .now, expired: expired)
    }

    /// A byte moved: the timeout starts again.
    func touch() {
        watch.touch(key)
    }

    /// Suspended: the timeout stops counting. Resumed: it starts again from now.
    func setPaused(_ paused: Bool) {
        watch.update(key) { entry in
            entry.paused = paused
            entry.reference = .now
        }
    }

    /// The transfer waits for the caller (a hook on the busy delegate queue): the timeout stops counting until
    /// `endHold()`, so a slow hook, this task's or another's, never looks like a silent server.
    func beginHold() {
        watch.update(key) { $0.holds += 1 }
    }

    /// The caller answered: the timeout starts again from now.
    func endHold() {
        watch.update(key) { entry in
            entry.holds -= 1
            entry.reference = .now
        }
    }

    /// Stops watching.
    func cancel() {
        watch.remove(key)
    }
}
