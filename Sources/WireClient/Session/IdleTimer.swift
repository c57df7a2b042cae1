import Synchronization
import Wire

/// The clock of a transfer's idle timeout, kept in its task: when a byte last moved, and how many reasons there are
/// not to count silence. Read by the `TimeoutWatch` without a lock.
struct IdleClock: ~Copyable, Sendable {
    /// `Deadline` nanoseconds of the last activity (a byte moved, a resume, a hold ended), read off the coarse clock
    /// (`Deadline.coarseNow()`, a few times per request): up to `Deadline.coarseLagNanoseconds` before the activity,
    /// which the timeout's offset adds back (`TimeoutWatch.Timeout.offsetFromCoarseStamp`).
    private let lastActivity = Atomic<UInt64>(0)
    /// Reasons silence does not count: the transfer has not started (the first, ended by `IdleTimer.start()`), the
    /// task is suspended, or the transfer waits for the caller.
    private let holds = Atomic<Int>(1)

    /// Activity at `now`; the clock only moves forward (a time read before a concurrent later one is dropped).
    func touch(at now: UInt64) {
        var seen = lastActivity.load(ordering: .relaxed)
        while seen < now {
            let (exchanged, current) = lastActivity.compareExchange(expected: seen, desired: now, ordering: .relaxed)
            if exchanged { return }
            seen = current
        }
    }

    func hold() {
        holds.wrappingAdd(1, ordering: .sequentiallyConsistent)
    }

    /// Ends a hold at `now`, which counts as activity.
    func release(at now: UInt64) {
        touch(at: now)
        holds.wrappingSubtract(1, ordering: .sequentiallyConsistent)
    }

    /// When the idle timeout expires as things stand; nil while held.
    func deadline(after timeout: UInt64) -> UInt64? {
        guard holds.load(ordering: .sequentiallyConsistent) == 0 else { return nil }
        let (sum, overflow) = lastActivity.load(ordering: .relaxed).addingReportingOverflow(timeout)
        return overflow ? .max : sum
    }
}

/// A transfer's idle timeout (NSURLSession's `timeoutIntervalForRequest`): the transfer is cancelled with
/// `.timedOut` when no byte moves for `timeout`. Paused while the task is suspended and held while the transfer waits
/// for the caller (a hook on the delegate queue), so neither counts as silence of the peer. Watched, with the
/// resource timeout, by the manager's `TimeoutWatch`; the clock itself is the task's `idleClock`.
struct IdleTimer: Sendable {
    private let task: SessionTask
    private let watch: TimeoutWatch
    private let timeout: UInt64

    init(task: SessionTask, timeout: TimeoutWatch.Timeout, watch: TimeoutWatch) {
        self.task = task
        self.watch = watch
        self.timeout = timeout.offsetFromCoarseStamp
    }

    /// Starts the clock: the transfer begins (its first hold ends).
    func start() {
        endHold()
    }

    /// A byte moved.
    func touch() {
        task.idleClock.touch(at: Deadline.coarseNow().uptimeNanoseconds)
    }

    /// `touch()` for a closure that may outlive the transfer (Wire's request observer): it does not keep the task
    /// alive.
    var weakTouch: @Sendable () -> Void {
        { [weak task] in task?.idleClock.touch(at: Deadline.coarseNow().uptimeNanoseconds) }
    }

    /// Stops the clock while suspended; starts it again from now on resume.
    func setPaused(_ paused: Bool) {
        if paused { beginHold() } else { endHold() }
    }

    /// The transfer waits for the caller: silence does not count until `endHold()`.
    func beginHold() {
        task.idleClock.hold()
    }

    /// The caller answered: the clock runs again from now.
    func endHold() {
        let now = Deadline.coarseNow().uptimeNanoseconds
        task.idleClock.release(at: now)
        let (deadline, overflow) = now.addingReportingOverflow(timeout)
        watch.expect(by: overflow ? .max : deadline)
    }
}
