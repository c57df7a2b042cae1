import Testing
import Wire

struct TimerQueueTests {
    private func at(_ milliseconds: UInt64) -> Deadline { Deadline(uptimeNanoseconds: milliseconds * 1_000_000) }

    @Test func popsInDeadlineOrderThenSchedulingOrder() {
        var queue = TimerQueue<String>()
        _ = queue.schedule(at: at(30), "c")
        _ = queue.schedule(at: at(10), "a")
        _ = queue.schedule(at: at(20), "b1")
        _ = queue.schedule(at: at(20), "b2")
        #expect(queue.nextDeadline() == at(10))
        var fired: [String] = []
        while let next = queue.popExpired(now: at(100)) { fired.append(next) }
        #expect(fired == ["a", "b1", "b2", "c"])
        #expect(queue.count == 0)
    }

    @Test func theCoarseClockIsTheSameClockNeverAheadAndAtMostATickBehind() {
        for _ in 0..<1_000 {
            let before = Deadline.now()
            let coarse = Deadline.coarseNow()
            let after = Deadline.now()
            #expect(coarse <= after)
            // A tick is 1 to 10 ms (CONFIG_HZ); 50 ms leaves room for a preempted thread.
            #expect(before.uptimeNanoseconds < coarse.uptimeNanoseconds + 50_000_000)
        }
    }

    @Test func nothingIsDueBeforeItsDeadline() {
        var queue = TimerQueue<Int>()
        _ = queue.schedule(at: at(50), 1)
        #expect(queue.popExpired(now: at(49)) == nil)
        #expect(queue.popExpired(now: at(50)) == 1)
    }

    @Test func cancelledTimersNeverFireAndDoNotHideLaterOnes() {
        var queue = TimerQueue<Int>()
        let first = queue.schedule(at: at(10), 1)
        _ = queue.schedule(at: at(20), 2)
        #expect(queue.cancel(first) == 1)
        #expect(queue.cancel(first) == nil, "cancelling twice is a no-op")
        #expect(queue.nextDeadline() == at(20))
        #expect(queue.popExpired(now: at(15)) == nil)
        #expect(queue.popExpired(now: at(25)) == 2)
    }

    /// The top is remembered as live once looked at; cancelling it after that must still hide it.
    @Test func cancellingTheTopAfterItWasLookedAtHidesIt() {
        var queue = TimerQueue<Int>()
        let first = queue.schedule(at: at(10), 1)
        let second = queue.schedule(at: at(20), 2)
        _ = queue.schedule(at: at(30), 3)
        #expect(queue.nextDeadline() == at(10))
        #expect(queue.popExpired(now: at(5)) == nil)
        #expect(queue.cancel(first) == 1)
        #expect(queue.nextDeadline() == at(20))
        #expect(queue.popExpired(now: at(5)) == nil)
        #expect(queue.cancel(second) == 2)
        #expect(queue.popExpired(now: at(25)) == nil)
        #expect(queue.nextDeadline() == at(30))
        // A timer scheduled ahead of a checked top becomes the top and is checked in its turn.
        let early = queue.schedule(at: at(15), 4)
        #expect(queue.nextDeadline() == at(15))
        #expect(queue.cancel(early) == 4)
        #expect(queue.nextDeadline() == at(30))
        #expect(queue.popExpired(now: at(30)) == 3)
        #expect(queue.nextDeadline() == nil)
    }

    @Test func manyRandomTimersComeOutSorted() {
        var queue = TimerQueue<UInt64>()
        var generator = SystemRandomNumberGenerator()
        var ids: [TimerQueue<UInt64>.ID] = []
        for _ in 0..<2000 {
            let deadline = UInt64.random(in: 0..<10_000, using: &generator)
            ids.append(queue.schedule(at: at(deadline), deadline))
        }
        for id in ids.shuffled().prefix(500) { queue.cancel(id) }
        var last: UInt64 = 0
        var count = 0
        while let value = queue.popExpired(now: .distantFuture) {
            #expect(value >= last)
            last = value
            count += 1
        }
        #expect(count == 1500)
    }

    /// An idle timeout rescheduled on every request, with one long-lived timer keeping the queue non-empty:
    /// the dead entries must not pile up until their far deadlines.
    @Test func reschedulingUnderALiveTimerKeepsTheHeapSmall() {
        var queue = TimerQueue<Int>()
        _ = queue.schedule(at: at(1_000_000), -1)
        var idle = queue.schedule(at: at(60_000), 0)
        for request in 1...100_000 {
            queue.cancel(idle)
            idle = queue.schedule(at: at(60_000 + UInt64(request)), request)
        }
        #expect(queue.count == 2)
        #expect(queue.storedEntryCount <= 130, "dead entries kept: \(queue.storedEntryCount)")
        #expect(queue.popExpired(now: at(200_000)) == 100_000)
        #expect(queue.popExpired(now: .distantFuture) == -1)
        #expect(queue.popExpired(now: .distantFuture) == nil)
    }

    @Test func compactionKeepsFiringOrderWithEqualDeadlines() {
        var queue = TimerQueue<Int>()
        var ids: [TimerQueue<Int>.ID] = []
        for index in 0..<1000 { ids.append(queue.schedule(at: at(UInt64(index % 7)), index)) }
        for (index, id) in ids.enumerated() where index % 3 != 0 { queue.cancel(id) }
        var fired: [Int] = []
        while let value = queue.popExpired(now: .distantFuture) { fired.append(value) }
        let expected = (0..<1000).filter { $0 % 3 == 0 }.sorted { ($0 % 7, $0) < ($1 % 7, $1) }
        #expect(fired == expected)
    }
}
