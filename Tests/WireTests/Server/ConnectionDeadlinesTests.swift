import Testing
import Wire

struct ConnectionDeadlinesTests {
    private final class Member: DeadlineHeapMember {
        let name: Int
        var deadlineHeapIndex: Int32 = -1
        init(_ name: Int) { self.name = name }
    }

    private func at(_ milliseconds: UInt64) -> Deadline { Deadline(uptimeNanoseconds: milliseconds * 1_000_000) }

    @Test func membersComeOutInDeadlineOrderOnlyOnceDue() {
        var heap = ConnectionDeadlines<Member>()
        let members = (0..<200).map(Member.init)
        // A fixed shuffle: deadlines 0...199 ms scheduled out of order.
        for member in members { heap.schedule(member, at: at(UInt64((member.name * 73) % 200))) }
        #expect(heap.count == 200)
        #expect(heap.earliest == at(0))
        #expect(heap.popDue(at: Deadline(uptimeNanoseconds: 0)) != nil)
        var popped: [UInt64] = [0]
        while let member = heap.popDue(at: at(99)) {
            #expect(member.deadlineHeapIndex == -1)
            popped.append(UInt64((member.name * 73) % 200))
        }
        #expect(popped == Array(0...99))
        #expect(heap.count == 100)
        #expect(heap.earliest == at(100))
    }

    @Test func aMemberMovesEarlierOrLaterAndIsRemovedWithoutASearch() {
        var heap = ConnectionDeadlines<Member>()
        let members = (0..<50).map(Member.init)
        for member in members { heap.schedule(member, at: at(1000 + UInt64(member.name))) }
        heap.schedule(members[40], at: at(5))
        #expect(heap.count == 50)
        #expect(heap.deadline(of: members[40]) == at(5))
        heap.schedule(members[40], at: at(5000))
        #expect(heap.earliest == at(1000))
        heap.remove(members[0])
        heap.remove(members[0])  // not in the heap any more: nothing happens
        #expect(members[0].deadlineHeapIndex == -1)
        #expect(heap.deadline(of: members[0]) == nil)
        #expect(heap.count == 49)
        var order: [Int] = []
        while let member = heap.popDue(at: at(10_000)) { order.append(member.name) }
        #expect(order == Array(1..<40) + Array(41..<50) + [40])
    }

    @Test func eachMemberKnowsItsPlaceAfterEveryChange() {
        var heap = ConnectionDeadlines<Member>()
        let members = (0..<64).map(Member.init)
        var generator = SplitMix(seed: 7)
        for step in 0..<2000 {
            let member = members[Int(generator.next() % 64)]
            switch generator.next() % 3 {
            case 0: heap.remove(member)
            default: heap.schedule(member, at: at(generator.next() % 10_000))
            }
            if step % 100 == 0 { _ = heap.popDue(at: at(generator.next() % 10_000)) }
        }
        // Every member in the heap is found at its own index, and the rest are marked out.
        let inHeap = members.filter { heap.deadline(of: $0) != nil }
        #expect(inHeap.count == heap.count)
        for member in members where heap.deadline(of: member) == nil { #expect(member.deadlineHeapIndex == -1) }
        var last = Deadline(uptimeNanoseconds: 0)
        while let member = heap.popDue(at: .distantFuture) {
            _ = member
            let next = heap.earliest ?? .distantFuture
            #expect(last <= next)
            last = next
        }
        #expect(heap.count == 0)
    }

    /// A small deterministic generator, so a failure repeats.
    private struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
