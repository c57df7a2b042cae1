/// The loop's registered handlers, found by the key epoll hands back with each event.
///
/// A slot table rather than a dictionary: an event's handler is one array index away, where hashing the key cost a
/// couple of hundred instructions per event (callgrind). A key holds the slot and the slot's generation, so an event
/// fetched for a handler that was removed earlier in the same batch (and whose slot may already be reused) finds
/// nothing.
package struct RegistrationTable<Handler> {
    private struct Slot {
        var generation: UInt32 = 0
        var handler: Handler?
    }

    private var slots: [Slot] = []
    private var free: [Int] = []
    /// How many handlers are registered.
    package private(set) var count = 0

    package init() {}

    /// Keys below this are never handed out (the loop keeps 0 for its own doorbell).
    package static var firstKey: UInt64 { 1 }

    /// Stores `handler`; returns its key.
    package mutating func insert(_ handler: Handler) -> UInt64 {
        let index: Int
        if let reused = free.popLast() {
            index = reused
        } else {
            index = slots.count
            slots.append(Slot())
        }
        slots[index].handler = handler
        count += 1
        return UInt64(slots[index].generation) << 32 | UInt64(index + 1)
    }

    /// The handler registered under `key`, if it is still registered.
    package func handler(for key: UInt64) -> Handler? {
        let index = Int(truncatingIfNeeded: key & 0xFFFF_FFFF) - 1
        guard index >= 0, index < slots.count, slots[index].generation == UInt32(truncatingIfNeeded: key >> 32) else {
            return nil
        }
        return slots[index].handler
    }

    /// Removes the handler registered under `key`; its slot's next key differs from this one.
    package mutating func remove(_ key: UInt64) {
        let index = Int(truncatingIfNeeded: key & 0xFFFF_FFFF) - 1
        guard index >= 0, index < slots.count, slots[index].generation == UInt32(truncatingIfNeeded: key >> 32),
            slots[index].handler != nil
        else { return }
        slots[index].handler = nil
        slots[index].generation &+= 1
        free.append(index)
        count -= 1
    }

    /// Removes every handler and returns them; no key handed out so far finds anything afterwards.
    package mutating func removeAll() -> [Handler] {
        var removed: [Handler] = []
        for index in slots.indices {
            guard let handler = slots[index].handler else { continue }
            removed.append(handler)
            slots[index].handler = nil
            slots[index].generation &+= 1
            free.append(index)
        }
        count = 0
        return removed
    }

    /// Whether no handler is registered.
    package var isEmpty: Bool { count == 0 }
}
