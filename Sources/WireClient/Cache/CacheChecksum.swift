/// FNV-1a, 64 bits, a byte at a time: names entry files (`fileName(for:)`), where the input is a short key.
package struct Checksum {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    init(seed: UInt64 = 0) { value ^= seed }

    mutating func add<C: Sequence<UInt8>>(_ bytes: C) {
        for byte in bytes { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
    }

    /// The file name of the entry for `key`: two independent 64-bit hashes in hex, 32 characters.
    package static func fileName(for key: String) -> String {
        var first = Checksum()
        var second = Checksum(seed: 0x9e37_79b9_7f4a_7c15)
        first.add(key.utf8)
        second.add(key.utf8)
        return hex(first.value) + hex(second.value)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// The checksum of an entry file's header and body: detects torn, zeroed and foreign files (not an adversary, who
/// could only poison their own cache directory). Eight bytes at a time (little-endian) into four interleaved lanes,
/// each a multiply-rotate round in the manner of xxHash (so a flipped high bit reaches the low ones), then the tail
/// byte by byte and the length: about 0.1 ns a byte where FNV-1a's one multiply per byte cost 1.1.
enum EntryChecksum {
    private static let prime1: UInt64 = 0x9e37_79b1_85eb_ca87
    private static let prime2: UInt64 = 0xc2b2_ae3d_27d4_eb4f
    private static let prime3: UInt64 = 0x1656_67b1_9e37_79f9

    /// The checksum of `bytes[range]`.
    static func value(of bytes: [UInt8], in range: Range<Int>) -> UInt64 {
        value(of: bytes.span.extracting(range))
    }

    /// The checksum of `span`.
    static func value(of span: Span<UInt8>) -> UInt64 {
        let count = span.count
        var lane0 = prime1 &+ prime2
        var lane1 = prime2
        var lane2: UInt64 = 0
        var lane3 = 0 &- prime1
        var offset = 0
        while count - offset >= 32 {
            lane0 = round(lane0, word(span, offset))
            lane1 = round(lane1, word(span, offset + 8))
            lane2 = round(lane2, word(span, offset + 16))
            lane3 = round(lane3, word(span, offset + 24))
            offset += 32
        }
        var hash = lane0.rotated(1) &+ lane1.rotated(7) &+ lane2.rotated(12) &+ lane3.rotated(18)
        hash = (hash ^ UInt64(count)) &* prime1
        while count - offset >= 8 {
            hash = (hash ^ round(0, word(span, offset))).rotated(27) &* prime1 &+ prime3
            offset += 8
        }
        while offset < count {
            hash = (hash ^ UInt64(span[offset]) &* prime3).rotated(11) &* prime1
            offset += 1
        }
        hash ^= hash >> 33
        hash = hash &* prime2
        hash ^= hash >> 29
        return hash
    }

    private static func round(_ lane: UInt64, _ input: UInt64) -> UInt64 {
        (lane &+ input &* prime2).rotated(31) &* prime1
    }

    /// The little-endian word at `offset`; the caller checked that eight bytes are there.
    private static func word(_ span: Span<UInt8>, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: span.bytes.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}

extension UInt64 {
    fileprivate func rotated(_ bits: UInt64) -> UInt64 { self << bits | self >> (64 - bits) }
}
