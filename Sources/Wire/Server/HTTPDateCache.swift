/// One loop's `Date` field line, rebuilt at most once per second: a response costs a clock read and a copy.
/// The text itself is `HTTPFieldDate`'s IMF-fixdate.
package struct HTTPDateCache {
    private var second = Int.min
    private var line: [UInt8] = []

    package init() {}

    /// Appends `Date: <now>\r\n`.
    package mutating func appendLine(to buffer: inout ByteBuffer) {
        let now = Posix.wallClockSeconds()
        if now != second {
            second = now
            line = Array("Date: \(HTTPFieldDate.format(unixSeconds: now))\r\n".utf8)
        }
        line.withUnsafeBytes { buffer.writeBytes($0) }
    }
}
