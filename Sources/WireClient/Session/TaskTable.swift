/// A manager's unfinished tasks' delegates, by task identifier: a direct-mapped table whose slot is the
/// identifier's low bits, with a dictionary for the identifiers whose slot is taken.
///
/// Identifiers are handed out in sequence, so the live ones land in consecutive slots and an insert, lookup or
/// removal is one slot, with no hashing and no probing (a `Dictionary` hashes the key with SipHash for each of them,
/// three times per task; linear probing would walk the whole run of live tasks on each removal). An identifier
/// whose slot holds an older task that is still running (a long download among many short requests) goes to the
/// overflow dictionary. The table stays at most half full, and halves when it falls under an eighth full.
struct TaskTable {
    private typealias Slot = (identifier: Int, delegate: TaskDelegate)?

    private static let smallestCapacity = 16

    /// A power of two long; nil slots are free.
    private var slots: [Slot]
    /// The delegates whose slot was taken when they were added.
    private var overflow: [Int: TaskDelegate] = [:]
    /// The delegates in the table.
    private(set) var count = 0

    /// An empty table.
    init() {
        slots = Array(repeating: nil, count: Self.smallestCapacity)
    }

    private var mask: Int { slots.count - 1 }

    /// The delegate of the task with this identifier, if it is unfinished.
    subscript(identifier: Int) -> TaskDelegate? {
        if let occupant = slots[identifier & mask], occupant.identifier == identifier { return occupant.delegate }
        return overflow.isEmpty ? nil : overflow[identifier]
    }

    /// Every delegate in the table, in no particular order.
    var delegates: [TaskDelegate] {
        slots.compactMap { $0?.delegate } + overflow.values
    }

    /// Adds `delegate` under its task's identifier, replacing the one there.
    mutating func insert(_ delegate: TaskDelegate) {
        if (count + 1) * 2 > slots.count { resize(to: slots.count * 2) }
        let identifier = delegate.task.taskIdentifier
        let slot = identifier & mask
        if let occupant = slots[slot] {
            if occupant.identifier == identifier {
                slots[slot] = (identifier, delegate)
            } else if overflow.updateValue(delegate, forKey: identifier) == nil {
                count += 1
            }
            return
        }
        // Its slot may have been freed since the identifier went to the overflow.
        if !overflow.isEmpty, overflow.removeValue(forKey: identifier) != nil { count -= 1 }
        slots[slot] = (identifier, delegate)
        count += 1
    }

    /// Removes and returns the delegate of the task with this identifier; nil when there is none.
    @discardableResult
    mutating func remove(_ identifier: Int) -> TaskDelegate? {
        let slot = identifier & mask
        let removed: TaskDelegate
        if let occupant = slots[slot], occupant.identifier == identifier {
            slots[slot] = nil
            removed = occupant.delegate
        } else if !overflow.isEmpty, let delegate = overflow.removeValue(forKey: identifier) {
            removed = delegate
        } else {
            return nil
        }
        count -= 1
        if slots.count > Self.smallestCapacity, count * 8 < slots.count { resize(to: slots.count / 2) }
        return removed
    }

    private mutating func resize(to capacity: Int) {
        let old = delegates
        slots = Array(repeating: nil, count: capacity)
        overflow = [:]
        count = 0
        for delegate in old { insert(delegate) }
    }
}
