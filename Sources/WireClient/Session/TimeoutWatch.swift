import Synchronization

/// The timeouts of a manager's tasks, watched by one sleeping Swift task instead of one (or two) per task.
///
/// Each watched timeout is an entry: an idle timeout (fires when no byte moved for its duration, paused while the
/// task is suspended or waits for the caller) or a fixed deadline (the resource timeout). Moving an idle entry's last
/// activity only makes its deadline later, so the hot path (`touch`, once per body chunk) is one lock and one store;
/// the watcher wakes at the earliest deadline it knows, re-reads every entry, fires the expired ones and sleeps again.
/// It is restarted only when an entry's deadline falls before its wake-up, and ends when nothing is watched.
final class TimeoutWatch: Sendable {
    /// One watched timeout.
    struct Entry {
        /// An idle timeout's duration; nil for a fixed deadline.
        var idleTimeout: Duration?
        /// An idle entry: the last byte moved (or the last resume). A fixed entry: its deadline.
        var reference: ContinuousClock.Instant
        var paused = false
        /// Waits for the caller under way (hooks on the delegate queue): not silence of the peer.
        var holds = 0
        let expired: @Sendable () -> Void

        /// When the entry expires as things stand; nil while it cannot (paused or held).
        var deadline: ContinuousClock.Instant? {
            guard let idleTimeout else { return reference }
            return paused || holds > 0 ? nil : reference + idleTimeout
        }
    }

    /// Names one entry: its slot in the table and the serial number it was added with, so that a key kept after its
    /// entry expired or was removed never reaches the entry that reuses the slot.
    struct Key: Sendable, Hashable {
        fileprivate let slot: Int
        fileprivate let serial: Int
    }

    private struct State {
        /// The entries by slot (a key's `slot`), with the serial each was added with; nil marks a free slot.
        /// A table rather than a dictionary: the hot path (`touch`) hashes nothing.
        var slots: [(serial: Int, entry: Entry)?] = []
        /// Free slots, reused last-freed first.
        var free: [Int] = []
        var nextSerial = 0
        /// The running watcher's number and when it wakes; nil when none runs.
        var watcher: (number: Int, wake: ContinuousClock.Instant, task: Task<Void, Never>)?
        var watchers = 0

        /// The entry `key` names, changed in place; nil (and nothing happens) when it expired or was removed.
        mutating func withEntry<T>(_ key: Key, _ body: (inout Entry) -> T) -> T? {
            guard key.slot < slots.count, slots[key.slot]?.serial == key.serial else { return nil }
            return body(&slots[key.slot]!.entry)
        }

        /// Takes the entry `key` names out of the table.
        mutating func remove(_ key: Key) {
            guard key.slot < slots.count, slots[key.slot]?.serial == key.serial else { return }
            slots[key.slot] = nil
            free.append(key.slot)
        }
    }

    private let state = Mutex(State())

    /// Watches a new timeout; `expired` is called once (outside any lock) if it passes before `remove`.
    func add(idleTimeout: Duration?, reference: ContinuousClock.Instant,
             expired: @escaping @Sendable () -> Void) -> Key {
        let entry = Entry(idleTimeout: idleTimeout, reference: reference, expired: expired)
        let (key, stale) = state.withLock { state -> (Key, Task<Void, Never>?) in
            let serial = state.nextSerial
            state.nextSerial += 1
            let slot: Int
            if let reused = state.free.popLast() {
                slot = reused
                state.slots[slot] = (serial, entry)
            } else {
                slot = state.slots.count
                state.slots.append((serial, entry))
            }
            return (Key(slot: slot, serial: serial), wakeEarlier(&state, for: entry.deadline))
        }
        stale?.cancel()
        return key
    }

    /// Changes an entry (a byte moved, a pause, a hold); does nothing when it already expired or was removed.
    func update(_ key: Key, _ change: (inout Entry) -> Void) {
        let stale = state.withLock { state -> Task<Void, Never>? in
            let wake = state.withEntry(key) { entry -> ContinuousClock.Instant? in
                let before = entry.deadline
                change(&entry)
                let after = entry.deadline
                // A later deadline is found by the watcher when it wakes: only an earlier one needs it sooner.
                guard let after, before.map({ after < $0 }) ?? true else { return nil }
                return after
            }
            guard let wake = wake ?? nil else { return nil }
            return wakeEarlier(&state, for: wake)
        }
        stale?.cancel()
    }

    /// A byte moved on an idle entry: its timeout starts again. The hot path: its deadline only moves later.
    func touch(_ key: Key) {
        let now = ContinuousClock.now
        // Read before the lock, the clock may be behind a time just stored under it (`endHold`): keep the later one.
        state.withLock { state in _ = state.withEntry(key) { $0.reference = max($0.reference, now) } }
    }

    /// Stops watching an entry.
    func remove(_ key: Key) {
        state.withLock { state in state.remove(key) }
    }

    /// Starts a watcher waking at `deadline` when none runs or the running one wakes later; returns the replaced
    /// watcher, to be cancelled outside the lock.
    private func wakeEarlier(_ state: inout State, for deadline: ContinuousClock.Instant?) -> Task<Void, Never>? {
        guard let deadline else { return nil }
        if let watcher = state.watcher, watcher.wake <= deadline { return nil }
        let replaced = state.watcher?.task
        state.watchers += 1
        let number = state.watchers
        let task = Task { [weak self] in
            guard let self else { return }
            await watch(number: number, until: deadline)
        }
        state.watcher = (number, deadline, task)
        return replaced
    }

    /// The watcher: sleeps until `wake`, fires what expired, and goes on until nothing is watched or it was replaced.
    private func watch(number: Int, until first: ContinuousClock.Instant) async {
        var wake = first
        while true {
            guard (try? await Task.sleep(until: wake, clock: .continuous)) != nil else { return }
            let (expired, next) = state.withLock { state -> ([@Sendable () -> Void], ContinuousClock.Instant?) in
                guard state.watcher?.number == number else { return ([], nil) }
                let now = ContinuousClock.now
                var expired: [(key: Key, fire: @Sendable () -> Void)] = []
                var next: ContinuousClock.Instant?
                for (slot, occupant) in state.slots.enumerated() {
                    guard let occupant, let deadline = occupant.entry.deadline else { continue }
                    if deadline <= now {
                        expired.append((Key(slot: slot, serial: occupant.serial), occupant.entry.expired))
                    } else if next.map({ deadline < $0 }) ?? true {
                        next = deadline
                    }
                }
                for (key, _) in expired { state.remove(key) }
                if let next {
                    state.watcher?.wake = next
                } else {
                    state.watcher = nil
                }
                return (expired.map(\.fire), next)
            }
            for fire in expired { fire() }
            guard let next else { return }
            wake = next
        }
    }
}
