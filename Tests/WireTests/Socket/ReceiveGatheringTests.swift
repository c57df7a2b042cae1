import Testing
import Wire

struct ReceiveGatheringTests {
    static let largest = 256 * 1024

    /// A gathering that a full read at the largest size has started, owed `due` bytes.
    static func started(due: Int = 10 << 20) -> ReceiveGathering {
        var gathering = ReceiveGathering()
        gathering.didRead(largest, asked: largest, largest: largest)
        _ = gathering.expect(due, largest: largest)
        return gathering
    }

    @Test func itStartsOnlyOnceAReadFillsTheLargestSize() {
        var gathering = ReceiveGathering()
        gathering.didRead(64 * 1024, asked: 64 * 1024, largest: Self.largest)
        #expect(
            gathering.expect(10 << 20, largest: Self.largest) == nil, "a full read below the largest size is not a bulk transfer")
        gathering.didRead(200 * 1024, asked: Self.largest, largest: Self.largest)
        #expect(gathering.expect(10 << 20, largest: Self.largest) == nil, "nor is a short read at the largest size")
        gathering.didRead(Self.largest, asked: Self.largest, largest: Self.largest)
        #expect(gathering.expect(10 << 20, largest: Self.largest) == Self.largest)
        #expect(gathering.isGathering)
        #expect(gathering.expect(9 << 20, largest: Self.largest) == nil, "the same watermark is not set again")
    }

    @Test func itNeverWaitsForMoreThanIsDue() {
        var gathering = Self.started(due: 300 * 1024)
        #expect(gathering.watermark == Self.largest)
        #expect(gathering.expect(1000, largest: Self.largest) == 1000, "the end of the body is not waited past")
        #expect(gathering.expect(0, largest: Self.largest) == 1, "nothing due: any byte wakes the reader")
        #expect(!gathering.isGathering)
        #expect(gathering.expect(10 << 20, largest: Self.largest) == nil, "the next body needs a full read of its own")
        #expect(Self.started(due: 1).watermark == 1, "one byte due is the default")
    }

    @Test func aCheckWithReadsSinceKeepsGatheringOneWithoutStopsIt() {
        var gathering = Self.started()
        gathering.didRead(Self.largest, asked: Self.largest, largest: Self.largest)
        #expect(gathering.check() == nil)
        #expect(gathering.isGathering)
        #expect(gathering.check() == 1, "no read since the last check: the peer slowed down")
        #expect(!gathering.isGathering)
        #expect(gathering.check() == nil, "a check while not gathering changes nothing")
        #expect(gathering.expect(10 << 20, largest: Self.largest) == nil, "stopped until a full read starts it again")
        gathering.didRead(Self.largest, asked: Self.largest, largest: Self.largest)
        #expect(gathering.expect(10 << 20, largest: Self.largest) == Self.largest)
    }

    @Test func aDeclinedStartWaitsForAnotherFullRead() {
        var gathering = ReceiveGathering()
        gathering.didRead(Self.largest, asked: Self.largest, largest: Self.largest)
        #expect(gathering.expect(10 << 20, largest: Self.largest) == Self.largest)
        gathering.declined()
        #expect(!gathering.isGathering)
        #expect(gathering.expect(10 << 20, largest: Self.largest) == nil, "not again before another full read")
        gathering.didRead(Self.largest, asked: Self.largest, largest: Self.largest)
        #expect(gathering.expect(10 << 20, largest: Self.largest) == Self.largest)
    }

    @Test func aSocketThatRefusesAWatermarkNeverGathers() {
        var gathering = Self.started()
        gathering.becameUnavailable()
        #expect(!gathering.isGathering)
        gathering.didRead(Self.largest, asked: Self.largest, largest: Self.largest)
        #expect(gathering.expect(10 << 20, largest: Self.largest) == nil)
        #expect(!gathering.isAvailable)
    }

    @Test func aPauseStopsItAndTheReadAfterItIsNoEvidence() {
        var gathering = Self.started()
        #expect(gathering.readingPaused() == 1, "the consumer is behind: what is queued goes to it at once")
        #expect(gathering.readingPaused() == nil)
        gathering.didRead(Self.largest, asked: Self.largest, largest: Self.largest)
        #expect(gathering.expect(10 << 20, largest: Self.largest) == nil, "a full read of the backlog says nothing of the peer")
        gathering.didRead(Self.largest, asked: Self.largest, largest: Self.largest)
        #expect(gathering.expect(10 << 20, largest: Self.largest) == Self.largest)
    }

    @Test func readsBeforeGatheringStartsDoNotCountForItsFirstCheck() {
        var gathering = ReceiveGathering()
        gathering.didRead(Self.largest, asked: Self.largest, largest: Self.largest)
        _ = gathering.expect(10 << 20, largest: Self.largest)
        #expect(gathering.check() == 1, "the read that started it is not one since")
    }
}
