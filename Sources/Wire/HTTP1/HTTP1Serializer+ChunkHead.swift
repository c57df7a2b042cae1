extension HTTP1Serializer {
    /// Appends a chunk's size line, `<size in lowercase hex>\r\n` (RFC 9112 §7.1), without extensions: the one copy
    /// of chunk-size framing, used by the serializer, the server's response writer and the client's body pump.
    ///
    /// Writes straight into the buffer's storage, no `String` on the way: the server frames every chunk of a
    /// streamed response in its loop's scratch buffer.
    /// - Parameters:
    ///   - size: The chunk's length in bytes; zero writes the last-chunk's `0\r\n`.
    ///   - buffer: The bytes to append to.
    package static func appendChunkHead(size: Int, to buffer: inout ByteBuffer) {
        forEachHexDigit(of: size) { buffer.writeInteger($0) }
        buffer.writeLiteral("\r\n")
    }

    /// Appends a chunk's size line with `extensions` (already validated) between the size and the CRLF.
    /// - Parameters:
    ///   - size: The chunk's length in bytes.
    ///   - extensions: `;name=value` text, or empty.
    ///   - buffer: The bytes to append to.
    package static func appendChunkHead(size: Int, extensions: String = "", to buffer: inout [UInt8]) {
        forEachHexDigit(of: size) { buffer.append($0) }
        buffer.append(contentsOf: extensions.utf8)
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
    }

    /// Calls `body` with each lowercase hex digit of `value`, most significant first, without leading zeros.
    @inline(__always)
    private static func forEachHexDigit(of value: Int, _ body: (UInt8) -> Void) {
        precondition(value >= 0, "a chunk size is never negative")
        let digits: StaticString = "0123456789abcdef"
        // The shift of the highest non-zero nibble; zero still has one digit.
        var shift = max(0, (Int.bitWidth - value.leadingZeroBitCount + 3) / 4 * 4 - 4)
        while shift >= 0 {
            body(digits.utf8Start[(value >> shift) & 0xF])
            shift -= 4
        }
    }
}
