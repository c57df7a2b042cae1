/// An object that can sit in a `ConnectionDeadlines` heap: it keeps its own position there, so it can be moved or
/// removed without a search.
package protocol DeadlineHeapMember: AnyObject {
    /// Its index in the heap, or -1 when it is not in it. Only the heap writes this.
    var deadlineHeapIndex: Int32 { get set }
}

/// The wake-up times of one loop's server connections, as a binary min-heap whose members know their place.
///
/// A connection's timer used to be a closure in the loop's timer queue: a closure context, a weak reference's side
/// table, a dictionary entry and a heap entry, about 170 bytes per idle connection. Here a connection costs one
/// heap entry (a deadline and a reference) and an index in the connection, and the loop keeps one timer for the
/// earliest deadline of them all. Pure value type: no clock, no I/O.
package struct ConnectionDeadlines<Member: DeadlineHeapMember> {
    private struct Entry {
        var deadline: Deadline
        let member: Member
    }

    private var heap: [Entry] = []

    package init() {}

    /// How many members are in the heap.
    package var count: Int { heap.count }

    /// The earliest deadline, if any member is in the heap.
    package var earliest: Deadline? { heap.first?.deadline }

    /// The deadline `member` is in the heap for, if it is in it.
    package func deadline(of member: Member) -> Deadline? {
        let index = Int(member.deadlineHeapIndex)
        guard index >= 0, index < heap.count, heap[index].member === member else { return nil }
        return heap[index].deadline
    }

    /// Puts `member` in the heap at `deadline`, or moves it there if it is in already.
    package mutating func schedule(_ member: Member, at deadline: Deadline) {
        let index = Int(member.deadlineHeapIndex)
        if index >= 0, index < heap.count, heap[index].member === member {
            let earlier = deadline < heap[index].deadline
            heap[index].deadline = deadline
            if earlier { siftUp(index) } else { siftDown(index) }
            return
        }
        heap.append(Entry(deadline: deadline, member: member))
        member.deadlineHeapIndex = Int32(heap.count - 1)
        siftUp(heap.count - 1)
    }

    /// Takes `member` out of the heap; nothing happens if it is not in it.
    package mutating func remove(_ member: Member) {
        let index = Int(member.deadlineHeapIndex)
        guard index >= 0, index < heap.count, heap[index].member === member else { return }
        removeEntry(at: index)
    }

    /// Takes out and returns the member whose deadline is earliest, if that deadline is not after `now`.
    package mutating func popDue(at now: Deadline) -> Member? {
        guard let first = heap.first, first.deadline <= now else { return nil }
        removeEntry(at: 0)
        return first.member
    }

    private mutating func removeEntry(at index: Int) {
        heap[index].member.deadlineHeapIndex = -1
        let last = heap.count - 1
        if index != last {
            heap.swapAt(index, last)
            heap[index].member.deadlineHeapIndex = Int32(index)
        }
        heap.removeLast()
        if index < heap.count {
            siftUp(index)
            siftDown(index)
        }
        if heap.isEmpty && heap.capacity > 1024 { heap = [] }  // a burst of connections gone: give the memory back
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            swapEntries(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { break }
            let right = left + 1
            let smaller = right < heap.count && heap[right].deadline < heap[left].deadline ? right : left
            guard heap[smaller].deadline < heap[parent].deadline else { break }
            swapEntries(parent, smaller)
            parent = smaller
        }
    }

    private mutating func swapEntries(_ a: Int, _ b: Int) {
        heap.swapAt(a, b)
        heap[a].member.deadlineHeapIndex = Int32(a)
        heap[b].member.deadlineHeapIndex = Int32(b)
    }
}
