import FoundationEssentials

/// Appends the fields of an entry file's header: big-endian integers and length-prefixed UTF-8 strings.
struct EntryWriter {
    private(set) var bytes: [UInt8]

    init(reserving capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func append(_ value: UInt64, width: Int) {
        for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    mutating func append(_ raw: [UInt8]) {
        bytes.append(contentsOf: raw)
    }

    mutating func append(_ data: Data) {
        bytes.append(contentsOf: data)
    }

    /// Its UTF-8 length in four bytes, then the bytes.
    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            append(UInt64(utf8.count), width: 4)
            bytes.append(contentsOf: utf8)
        }
    }

    /// Overwrites `width` bytes at `offset` with `value`, big-endian.
    mutating func set(_ value: UInt64, width: Int, at offset: Int) {
        for index in 0..<width { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> UInt64((width - 1 - index) * 8)) }
    }
}

/// Reads an entry file's header fields from `bytes` up to `end`: every read checks that its bytes are there and
/// returns nil when they are not, so a short or hostile header is a miss, never a trap.
struct EntryReader {
    let bytes: [UInt8]
    private(set) var offset: Int
    let end: Int

    init(_ bytes: [UInt8], from offset: Int, to end: Int) {
        self.bytes = bytes
        self.offset = offset
        self.end = min(end, bytes.count)
    }

    /// Whether every byte up to `end` was read.
    var isAtEnd: Bool { offset == end }

    mutating func integer(width: Int) -> UInt64? {
        guard end - offset >= width else { return nil }
        var value: UInt64 = 0
        for index in offset..<(offset + width) { value = value << 8 | UInt64(bytes[index]) }
        offset += width
        return value
    }

    /// The range of a length-prefixed string's bytes, without making the string.
    mutating func stringRange() -> Range<Int>? {
        guard let length = integer(width: 4), UInt64(end - offset) >= length else { return nil }
        let range = offset..<(offset + Int(length))
        offset = range.upperBound
        return range
    }

    /// A length-prefixed string; nil when short or not UTF-8.
    mutating func string() -> String? {
        guard let range = stringRange() else { return nil }
        guard let text = try? UTF8Span(validating: bytes.span.extracting(range)) else { return nil }
        return String(copying: text)
    }

    /// A count of items each at least `minimumSize` bytes long; nil when the rest of the header cannot hold them.
    mutating func count(ofItemsAtLeast minimumSize: Int) -> Int? {
        guard let count = integer(width: 4), count <= UInt64((end - offset) / minimumSize) else { return nil }
        return Int(count)
    }
}
