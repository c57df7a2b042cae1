import Testing
@testable import Wire

struct ReadSizerTests {
    @Test func fullReadsDoubleTheSizeUpToTheMaximum() {
        var sizer = ReadSizer(minimum: 64 * 1024, maximum: 256 * 1024)
        #expect(sizer.current == 64 * 1024)
        sizer.record(64 * 1024)
        #expect(sizer.current == 128 * 1024)
        sizer.record(128 * 1024)
        sizer.record(256 * 1024)
        #expect(sizer.current == 256 * 1024)
    }

    @Test func twoSmallReadsInARowHalveItButNeverBelowTheMinimum() {
        var sizer = ReadSizer(minimum: 64 * 1024, maximum: 256 * 1024)
        sizer.record(64 * 1024)
        sizer.record(128 * 1024)
        sizer.record(1000)
        #expect(sizer.current == 256 * 1024, "one short read (the end of a burst) keeps the size")
        sizer.record(200 * 1024)
        sizer.record(1000)
        #expect(sizer.current == 256 * 1024, "a read that needed more than half breaks the run")
        sizer.record(1000)
        #expect(sizer.current == 128 * 1024)
        for _ in 0..<10 { sizer.record(10) }
        #expect(sizer.current == 64 * 1024)
    }

    @Test func boundsAreSane() {
        let sizer = ReadSizer(minimum: 0, maximum: -5)
        #expect(sizer.minimum == 1 && sizer.maximum == 1 && sizer.current == 1)
    }
}
