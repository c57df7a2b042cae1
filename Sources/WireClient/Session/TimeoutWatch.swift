import Synchronization
@_spi(Locking) import Wire

/// The timeouts of a manager's tasks, watched by one sleeping Swift task instead of one (or two) per task.
///
/// Each running transfer is one entry: its resource deadline (fixed when the transfer starts) and its idle timeout,
/// whose clock lives in the task (`IdleClock`) so that the hot path, a byte moved, is one atomic store with no lock.
/// Moving the clock only makes the idle deadline later, so the watcher need not hear of it: it wakes at the earliest
/// deadline it knew, reads every entry's clock again, fires the expired ones and sleeps until the next. What makes a
/// deadline earlier than the watcher's wake-up (an entry added, a hold ended) checks the published wake-up first
/// and takes the lock only when the watcher would wake too late. The watcher ends when nothing is watched.
final class TimeoutWatch: Sendable {
    /// A timeout as given and as an offset from a coarse stamp: the session's are converted once, not for every task.
    struct Timeout: Sendable {
        let duration: Duration
        /// When the timeout has passed, in nanoseconds after a stamp read off the coarse clock: `duration`
        /// (`TimeoutWatch.nanoseconds`) plus the most the stamp can be behind (`Deadline.coarseLagNanoseconds`), so it
        /// never expires before `duration` has passed on the monotonic clock. A timeout of zero or less stays 0
        /// (expired at once).
        let offsetFromCoarseStamp: UInt64

        init(_ duration: Duration) {
            self.duration = duration
            let nanoseconds = TimeoutWatch.nanoseconds(duration)
            let (offset, overflow) = nanoseconds.addingReportingOverflow(Deadline.coarseLagNanoseconds)
            offsetFromCoarseStamp = nanoseconds == 0 ? 0 : overflow ? .max : offset
        }
    }

    /// One transfer's timeouts (its task beside it, in its slot).
    struct Entry {
        /// `Deadline` nanoseconds at which the resource timeout expires.
        let resourceDeadline: UInt64
        let resourceTimeout: Duration
        let idleTimeout: Duration
        /// `idleTimeout` as an offset from the idle clock's coarse stamps (`Timeout.offsetFromCoarseStamp`).
        let idleNanoseconds: UInt64

        /// When the entry of `task` expires as things stand (the idle deadline only while its clock runs).
        func deadline(of task: SessionTask) -> UInt64 {
            guard let idle = task.idleClock.deadline(after: idleNanoseconds) else { return resourceDeadline }
            return min(idle, resourceDeadline)
        }
    }

    /// Names one entry: its slot in the table and the serial number it was added with, so that a key kept after its
    /// entry expired or was removed never reaches the entry that reuses the slot.
    struct Key: Sendable, Hashable {
        fileprivate let slot: Int
        fileprivate let serial: Int
    }

    /// A slot of the table: the task watched there (nil when the slot is free), the serial number its entry was added
    /// with, and the entry. Not an optional struct: freeing a slot is then one release of the task in place, where
    /// replacing an optional whole went through the runtime's generic value witnesses.
    private struct Slot {
        var task: SessionTask?
        var serial: Int
        var entry: Entry
    }

    private struct State {
        /// Entries by slot; a nil slot is free and listed in `free` (slots are reused, so the table stops growing at
        /// the largest number of transfers at once).
        var slots: [Slot] = []
        var free: [Int] = []
        var nextSerial = 0
        /// The sleeping watcher: its number, when it wakes, and its task (cancelled when replaced).
        var watcher: (number: Int, wake: UInt64, task: Task<Void, Never>)?
        var watchers = 0

        mutating func remove(_ key: Key) {
            guard key.slot < slots.count, slots[key.slot].task != nil, slots[key.slot].serial == key.serial else { return }
            slots[key.slot].task = nil
            free.append(key.slot)
        }
    }

    private let state = Lock(State())
    /// The watcher's wake-up as last published under the lock: `UInt64.max` with no watcher, 0 while it reads the
    /// entries (a deadline made earlier meanwhile must take the lock). Read without the lock by `expect(by:)`.
    private let publishedWake = Atomic<UInt64>(.max)

    /// Watches `task`'s transfer: the resource timeout from now, and the idle timeout of its `idleClock` once its
    /// first hold ends (`IdleTimer.start()`).
    func add(_ task: SessionTask, resourceTimeout: Timeout, idleTimeout: Timeout) -> Key {
        // The coarse clock, as the idle clocks read it; the offset covers how far it may be behind.
        let now = Deadline.coarseNow().uptimeNanoseconds
        let (resourceDeadline, overflow) = now.addingReportingOverflow(resourceTimeout.offsetFromCoarseStamp)
        let entry = Entry(
            resourceDeadline: overflow ? .max : resourceDeadline,
            resourceTimeout: resourceTimeout.duration, idleTimeout: idleTimeout.duration,
            idleNanoseconds: idleTimeout.offsetFromCoarseStamp)
        let (key, stale) = state.withLock { state -> (Key, Task<Void, Never>?) in
            let serial = state.nextSerial
            state.nextSerial += 1
            let slot: Int
            if let reused = state.free.popLast() {
                slot = reused
                state.slots[slot] = Slot(task: task, serial: serial, entry: entry)
            } else {
                slot = state.slots.count
                state.slots.append(Slot(task: task, serial: serial, entry: entry))
            }
            return (Key(slot: slot, serial: serial), wakeEarlier(&state, for: entry.deadline(of: task)))
        }
        stale?.cancel()
        return key
    }

    /// Makes sure the watcher wakes by `deadline`: an idle clock started again after a hold. Lock-free when it
    /// already does (the common case).
    func expect(by deadline: UInt64) {
        // Sequentially consistent, against the watcher's publication of 0 before it reads the clocks: either the
        // watcher reads this hold's end, or this reads a wake-up published after it (and compares it).
        let wake = publishedWake.load(ordering: .sequentiallyConsistent)
        guard wake == 0 || wake > deadline else { return }
        let stale = state.withLock { state in wakeEarlier(&state, for: deadline) }
        stale?.cancel()
    }

    /// Stops watching (the transfer ended); a key whose entry expired already is ignored.
    func remove(_ key: Key) {
        state.withLock { state in state.remove(key) }
    }

    /// Ends the watcher (its manager is gone: no transfer is left to watch).
    func stop() {
        let watcher = state.withLock { state -> Task<Void, Never>? in
            defer { state.watcher = nil }
            return state.watcher?.task
        }
        publishedWake.store(.max, ordering: .sequentiallyConsistent)
        watcher?.cancel()
    }

    /// Starts a watcher for `deadline` unless the current one wakes by then; returns the replaced watcher's task,
    /// to cancel outside the lock.
    private func wakeEarlier(_ state: inout State, for deadline: UInt64) -> Task<Void, Never>? {
        if let watcher = state.watcher, watcher.wake <= deadline { return nil }
        let replaced = state.watcher?.task
        state.watchers += 1
        let number = state.watchers
        // Detached: made from whichever transfer needed it, the watcher must not take that caller's priority or
        // keep its task-local values alive while it sleeps. It holds the watch strongly (a weak reference would give
        // the watch a side table, and every retain of it on a task's path the slow path) until it ends: when nothing
        // is watched at its wake-up, or at `stop()`.
        let task = Task.detached {
            await self.watch(number: number, until: deadline)
        }
        state.watcher = (number, deadline, task)
        publishedWake.store(deadline, ordering: .sequentiallyConsistent)
        return replaced
    }

    /// The watcher: sleeps until `first`, fires what expired, and sleeps until the next deadline, until nothing is
    /// watched or another watcher replaced it.
    private func watch(number: Int, until first: UInt64) async {
        var wake = first
        while true {
            let now = Deadline.now().uptimeNanoseconds
            if wake > now {
                guard (try? await Task.sleep(for: .nanoseconds(Int64(clamping: wake - now)))) != nil else { return }
            }
            let (expired, next) = state.withLock { state -> ([(SessionTask, ClientError)], UInt64?) in
                guard state.watcher?.number == number else { return ([], nil) }
                publishedWake.store(0, ordering: .sequentiallyConsistent)
                let now = Deadline.now().uptimeNanoseconds
                var expired: [(SessionTask, ClientError)] = []
                var next: UInt64?
                for slot in state.slots.indices {
                    guard let task = state.slots[slot].task else { continue }
                    let entry = state.slots[slot].entry
                    let deadline = entry.deadline(of: task)
                    if deadline <= now {
                        expired.append((task, Self.reason(entry, of: task, now: now)))
                        state.remove(Key(slot: slot, serial: state.slots[slot].serial))
                    } else if next.map({ deadline < $0 }) ?? true {
                        next = deadline
                    }
                }
                if let next {
                    state.watcher?.wake = next
                    publishedWake.store(next, ordering: .sequentiallyConsistent)
                } else {
                    state.watcher = nil
                    publishedWake.store(.max, ordering: .sequentiallyConsistent)
                }
                return (expired, next)
            }
            for (task, reason) in expired { task.cancelTransfer(reason: reason) }
            guard let next else { return }
            wake = next
        }
    }

    /// Which timeout `entry` (`task`'s) ran out of at `now`: the resource timeout, or silence.
    private static func reason(_ entry: Entry, of task: SessionTask, now: UInt64) -> ClientError {
        let url = task.originalRequest.url
        if entry.resourceDeadline <= now {
            return ClientError(
                .timedOut, failingURL: url,
                failureReason: "the task took longer than its \(entry.resourceTimeout) resource timeout")
        }
        return ClientError(.timedOut, failingURL: url, failureReason: "no byte moved for \(entry.idleTimeout)")
    }

    /// `duration` in nanoseconds, at least 0 (a negative timeout expires at once), at most `UInt64.max`.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        // Both components carry the duration's sign: −0.5 s is 0 s and −5·10¹⁷ as.
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return .max }
        let (sum, carry) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        return carry ? .max : sum
    }
}
