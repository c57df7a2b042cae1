import Glibc
import Wire

/// Builds JSON lines in a byte buffer and writes them to standard output in large blocks.
///
/// Objects print as `{"key": value, ...}` with `", "` and `": "` separators (the shape of the error line), one object
/// per line.
struct JSONLineWriter {
    private var buffer: [UInt8] = []
    /// Whether the next value or key in the current container needs a separator first.
    private var needsComma = false

    init() {
        buffer.reserveCapacity(1 << 16)
    }

    mutating func beginObject() {
        separate()
        buffer.append(UInt8(ascii: "{"))
        needsComma = false
    }

    mutating func endObject() {
        buffer.append(UInt8(ascii: "}"))
        needsComma = true
        // Only top-level objects end lines; nested ones are followed by `,` or `]`.
        if depth == 0 { endLine() }
    }

    mutating func beginArray() {
        separate()
        buffer.append(UInt8(ascii: "["))
        depth += 1
        needsComma = false
    }

    mutating func endArray() {
        buffer.append(UInt8(ascii: "]"))
        depth -= 1
        needsComma = true
    }

    /// Array nesting depth: objects inside arrays are not lines of their own.
    private var depth = 0

    mutating func key(_ name: String) {
        separate()
        JSONString.append(name, to: &buffer)
        buffer.append(contentsOf: ": ".utf8)
        needsComma = false
    }

    /// Writes the UTF-8 bytes of `text` as a JSON string (`JSONString`'s byte mapping).
    mutating func string(_ text: String) {
        separate()
        JSONString.append(text, to: &buffer)
        needsComma = true
    }

    /// Writes `bytes` as a JSON string, each byte as the code point of the same value (`JSONString`).
    mutating func bytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        separate()
        JSONString.append(bytes, to: &buffer)
        needsComma = true
    }

    mutating func integer(_ value: Int) {
        separate()
        buffer.append(contentsOf: String(value).utf8)
        needsComma = true
    }

    mutating func boolean(_ value: Bool) {
        separate()
        buffer.append(contentsOf: (value ? "true" : "false").utf8)
        needsComma = true
    }

    /// Writes `bytes` as a base64 (RFC 4648 §4, padded) JSON string.
    mutating func base64(_ bytes: [UInt8]) {
        separate()
        needsComma = true
        let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        let table = UnsafeBufferPointer(start: alphabet.utf8Start, count: 64)
        buffer.append(UInt8(ascii: "\""))
        buffer.reserveCapacity(buffer.count + (bytes.count + 2) / 3 * 4 + 1)
        var index = 0
        while index + 3 <= bytes.count {
            let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            buffer.append(table[Int(group >> 18)])
            buffer.append(table[Int(group >> 12 & 63)])
            buffer.append(table[Int(group >> 6 & 63)])
            buffer.append(table[Int(group & 63)])
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            let group = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            buffer.append(table[Int(group >> 18)])
            buffer.append(table[Int(group >> 12 & 63)])
            buffer.append(rest == 2 ? table[Int(group >> 6 & 63)] : UInt8(ascii: "="))
            buffer.append(UInt8(ascii: "="))
        }
        buffer.append(UInt8(ascii: "\""))
        if buffer.count >= 1 << 20 { flush() }
    }

    /// Writes what is buffered to standard output.
    mutating func flush() {
        guard !buffer.isEmpty else { return }
        StandardStreams.output(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private mutating func endLine() {
        buffer.append(UInt8(ascii: "\n"))
        needsComma = false
        if buffer.count >= 1 << 16 { flush() }
    }

    private mutating func separate() {
        if needsComma { buffer.append(contentsOf: ", ".utf8) }
    }
}
