/// The loop's pending timers: a binary min-heap ordered by deadline, then by scheduling order,
/// so timers due at the same instant fire in the order they were scheduled.
///
/// Cancellation is lazy: a cancelled timer's payload is dropped at once, and its heap entry is
/// skipped when it reaches the top. This keeps `cancel` O(1), which matters because most
/// timers (request and idle timeouts) are cancelled, not fired. So that a busy loop whose
/// timeouts are rescheduled on every request does not keep millions of dead entries until their
/// far deadlines come, the heap is rebuilt from the live entries whenever the dead ones outnumber
/// them (O(n) each time, after at least n/2 cancellations: amortised O(1) per cancel).
/// Pure value type: no clock, no I/O.
package struct TimerQueue<Payload> {
    /// A handle for cancelling a scheduled timer.
    package struct ID: Hashable, Sendable {
        fileprivate let value: UInt64
    }

    private struct Entry {
        var deadline: Deadline
        var id: UInt64

        func fires(before other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : id < other.id
        }
    }

    private var heap: [Entry] = []
    private var payloads: [UInt64: Payload] = [:]
    private var nextID: UInt64 = 1
    /// The top entry's ID once it was found live, so the loop's two looks at the top per iteration (its timeout and
    /// its expired timers) do not each hash it again; 0 when unchecked. IDs are never reused, and only `cancel`
    /// removes a payload whose entry stays in the heap, so `heap.first?.id == liveTopID` means it is live.
    private var liveTopID: UInt64 = 0

    package init() {}

    /// The number of timers scheduled and not yet fired or cancelled.
    package var count: Int { payloads.count }

    /// Adds a timer due at `deadline`.
    package mutating func schedule(at deadline: Deadline, _ payload: Payload) -> ID {
        let id = nextID
        nextID += 1
        payloads[id] = payload
        heap.append(Entry(deadline: deadline, id: id))
        siftUp(heap.count - 1)
        return ID(value: id)
    }

    /// Cancels a timer; returns its payload if it had not fired yet.
    @discardableResult
    package mutating func cancel(_ id: ID) -> Payload? {
        let payload = payloads.removeValue(forKey: id.value)
        if id.value == liveTopID { liveTopID = 0 }
        if payloads.isEmpty {
            // Nothing live: drop the cancelled entries too so memory does not linger.
            heap.removeAll(keepingCapacity: true)
        } else if heap.count > Self.compactionFloor && heap.count > 2 * payloads.count {
            compact()
        }
        return payload
    }

    /// The heap size below which dead entries are left for `dropCancelledTop`: rebuilding a small heap
    /// costs more than skipping its few dead entries.
    private static var compactionFloor: Int { 64 }

    /// The number of entries held, live or cancelled (for tests of the compaction).
    package var storedEntryCount: Int { heap.count }

    /// Drops every cancelled entry and restores the heap order bottom-up (Floyd's construction).
    private mutating func compact() {
        heap.removeAll { payloads[$0.id] == nil }
        var index = heap.count / 2 - 1
        while index >= 0 {
            siftDown(index)
            index -= 1
        }
    }

    /// The earliest deadline of a live timer.
    package mutating func nextDeadline() -> Deadline? {
        dropCancelledTop()
        return heap.first?.deadline
    }

    /// Removes and returns the earliest live timer if it is due at `now`.
    package mutating func popExpired(now: Deadline) -> Payload? {
        dropCancelledTop()
        guard let top = heap.first, top.deadline <= now else { return nil }
        removeTop()
        return payloads.removeValue(forKey: top.id)
    }

    /// Removes every timer, returning their payloads in firing order.
    mutating func removeAll() -> [Payload] {
        var result: [Payload] = []
        while let top = heap.first {
            removeTop()
            if let payload = payloads.removeValue(forKey: top.id) { result.append(payload) }
        }
        return result
    }

    private mutating func dropCancelledTop() {
        while let top = heap.first {
            if top.id == liveTopID { return }
            if payloads[top.id] != nil {
                liveTopID = top.id
                return
            }
            removeTop()
        }
    }

    private mutating func removeTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].fires(before: heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var first = parent
            if left < heap.count && heap[left].fires(before: heap[first]) { first = left }
            if right < heap.count && heap[right].fires(before: heap[first]) { first = right }
            guard first != parent else { return }
            heap.swapAt(parent, first)
            parent = first
        }
    }
}
