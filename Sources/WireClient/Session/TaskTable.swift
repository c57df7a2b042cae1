/// A manager's unfinished tasks' delegates, by task identifier: an open-addressed table whose slot is the
/// identifier's low bits, probed linearly.
///
/// Identifiers are handed out in sequence, so the live ones land in consecutive slots and an insert, lookup or
/// removal is one probe with no hashing; a `Dictionary` hashes the key (SipHash) for each of them, three times per
/// task. The table stays at most half full, and halves when it falls under an eighth full after a burst.
struct TaskTable {
    private typealias Slot = (identifier: Int, delegate: TaskDelegate)?

    private static let smallestCapacity = 16

    /// A power of two long; nil slots are free.
    private var slots: [Slot]
    /// The delegates in the table.
    private(set) var count = 0

    /// An empty table.
    init() {
        slots = Array(repeating: nil, count: Self.smallestCapacity)
    }

    private var mask: Int { slots.count - 1 }

    /// The delegate of the task with this identifier, if it is unfinished.
    subscript(identifier: Int) -> TaskDelegate? {
        var slot = identifier & mask
        while let occupant = slots[slot] {
            if occupant.identifier == identifier { return occupant.delegate }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Every delegate in the table, in no particular order.
    var delegates: [TaskDelegate] {
        slots.compactMap { $0?.delegate }
    }

    /// Adds `delegate` under its task's identifier, replacing the one there.
    mutating func insert(_ delegate: TaskDelegate) {
        if (count + 1) * 2 > slots.count { resize(to: slots.count * 2) }
        let identifier = delegate.task.taskIdentifier
        var slot = identifier & mask
        while let occupant = slots[slot] {
            if occupant.identifier == identifier {
                slots[slot] = (identifier, delegate)
                return
            }
            slot = (slot + 1) & mask
        }
        slots[slot] = (identifier, delegate)
        count += 1
    }

    /// Removes and returns the delegate of the task with this identifier; nil when there is none.
    @discardableResult
    mutating func remove(_ identifier: Int) -> TaskDelegate? {
        var slot = identifier & mask
        while let occupant = slots[slot] {
            if occupant.identifier == identifier {
                closeGap(at: slot)
                count -= 1
                if slots.count > Self.smallestCapacity, count * 8 < slots.count { resize(to: slots.count / 2) }
                return occupant.delegate
            }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Frees `gap` and moves back the entries after it that a probe would no longer reach (backward-shift deletion:
    /// no tombstones, so a lookup's probe stays as short as the cluster it is in).
    private mutating func closeGap(at gap: Int) {
        var gap = gap
        var slot = (gap + 1) & mask
        while let occupant = slots[slot] {
            let home = occupant.identifier & mask
            // The occupant may fill the gap when its home is not cyclically within (gap, slot].
            let reachable = gap <= slot ? (home > gap && home <= slot) : (home > gap || home <= slot)
            if !reachable {
                slots[gap] = occupant
                gap = slot
            }
            slot = (slot + 1) & mask
        }
        slots[gap] = nil
    }

    private mutating func resize(to capacity: Int) {
        let old = slots
        slots = Array(repeating: nil, count: capacity)
        count = 0
        for case let (_, delegate)? in old { insert(delegate) }
    }
}
