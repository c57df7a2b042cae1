import Testing
import Wire

struct ReadSizerTests {
    static let maximum = 256 * 1024

    @Test func fullReadsDoubleTheSizeUpToTheMaximum() {
        var sizer = ReadSizer(minimum: 64 * 1024)
        #expect(sizer.current == 64 * 1024)
        sizer.record(64 * 1024, maximum: Self.maximum)
        #expect(sizer.current == 128 * 1024)
        sizer.record(128 * 1024, maximum: Self.maximum)
        sizer.record(256 * 1024, maximum: Self.maximum)
        #expect(sizer.current == 256 * 1024)
    }

    @Test func veryShortReadsHalveItButNeverBelowTheMinimum() {
        var sizer = ReadSizer(minimum: 64 * 1024)
        sizer.record(64 * 1024, maximum: Self.maximum)
        sizer.record(128 * 1024, maximum: Self.maximum)
        sizer.record(100 * 1024, maximum: Self.maximum)
        #expect(sizer.current == 256 * 1024, "a read of more than a quarter keeps the size")
        sizer.record(1000, maximum: Self.maximum)
        #expect(sizer.current == 128 * 1024)
        for _ in 0..<10 { sizer.record(10, maximum: Self.maximum) }
        #expect(sizer.current == 64 * 1024)
    }

    @Test func aMinimumAboveTheMaximumStaysPut() {
        var sizer = ReadSizer(minimum: 512 * 1024)
        sizer.record(512 * 1024, maximum: Self.maximum)
        #expect(sizer.current == 512 * 1024)
        #expect(ReadSizer(minimum: 0).current == 1)
        #expect(MemoryLayout<ReadSizer>.size == 8, "one per connection, idle or not")
    }
}
