import Testing
import Wire

/// The per-loop `Date` line: `HTTPFieldDate`'s IMF-fixdate of the present, framed as a field line.
struct HTTPDateCacheTests {
    @Test func appendsTheCurrentDateLine() {
        var cache = HTTPDateCache()
        var buffer = ByteBuffer(string: "prefix|")
        let before = Posix.wallClockSeconds()
        cache.appendLine(to: &buffer)
        cache.appendLine(to: &buffer)
        let after = Posix.wallClockSeconds()
        let text = String(decoding: buffer.readableBytesArray, as: UTF8.self)
        // The clock may tick between the two lines, so each is the date of some second in [before, after].
        let lines = (before...after).map { "Date: \(HTTPFieldDate.format(unixSeconds: $0))\r\n" }
        let possible = Set(lines.flatMap { first in lines.map { "prefix|" + first + $0 } })
        #expect(possible.contains(text), "\(text)")
    }
}
