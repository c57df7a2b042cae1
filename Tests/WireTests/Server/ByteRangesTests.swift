import Testing
import Wire

/// `ByteRanges.parse`: what a `Range` field asks of a file, clipped to it, and the shapes that are ignored.
@Suite struct ByteRangesTests {
    @Test func rangesAreClippedToTheFile() {
        #expect(ByteRanges.parse("bytes=0-99", size: 1000) == .satisfiable([0...99]))
        #expect(ByteRanges.parse("bytes=900-", size: 1000) == .satisfiable([900...999]))
        #expect(ByteRanges.parse("bytes=-100", size: 1000) == .satisfiable([900...999]))
        #expect(ByteRanges.parse("bytes=-5000", size: 1000) == .satisfiable([0...999]))
        #expect(ByteRanges.parse("bytes=990-5000", size: 1000) == .satisfiable([990...999]))
        #expect(ByteRanges.parse("bytes=0-9, 500-509", size: 1000) == .satisfiable([0...9, 500...509]))
        // Out of order but disjoint: kept, in request order.
        #expect(ByteRanges.parse("bytes=500-509,0-9", size: 1000) == .satisfiable([500...509, 0...9]))
    }

    @Test func unsatisfiableAndIgnoredShapes() {
        #expect(ByteRanges.parse("bytes=1000-", size: 1000) == .unsatisfiable)
        #expect(ByteRanges.parse("bytes=-0", size: 1000) == .unsatisfiable)
        #expect(ByteRanges.parse("bytes=0-", size: 0) == .unsatisfiable)
        #expect(ByteRanges.parse("bytes=5-1", size: 1000) == .ignore)
        #expect(ByteRanges.parse("bytes=99999999999999999999-", size: 1000) == .ignore)
        #expect(ByteRanges.parse("bytes=+1-2", size: 1000) == .ignore)
        #expect(ByteRanges.parse("items=0-1", size: 1000) == .ignore)
        let many = "bytes=" + (0...ByteRanges.maxRanges).map { "\($0 * 10)-\($0 * 10 + 1)" }.joined(separator: ",")
        #expect(ByteRanges.parse(many, size: 1000) == .ignore)
    }

    /// `bytes=0-,0-,…`: sixteen parts of the whole file for one small request. The file is sent once instead.
    @Test func overlappingRangesThatAskForMoreThanTheFileAreIgnored() {
        let whole = "bytes=" + Array(repeating: "0-", count: ByteRanges.maxRanges).joined(separator: ",")
        #expect(ByteRanges.parse(whole, size: 1 << 30) == .ignore)
        #expect(ByteRanges.parse("bytes=0-599,400-999", size: 1000) == .ignore)
        #expect(ByteRanges.parse("bytes=-1000,0-0", size: 1000) == .ignore)
        // Overlapping but no more than the file in total: served in parts.
        #expect(ByteRanges.parse("bytes=0-9,5-14", size: 1000) == .satisfiable([0...9, 5...14]))
    }
}
