/// Byte classes used by the HTTP/1.1 parser and serializer.
///
/// Each byte maps to a bit set in one 256-entry table, so the hot loops classify a byte with one load and one mask
/// and never branch on ranges. Callers copy `table` (one pointer) into a local once per scan.
package enum CharacterClasses {
    /// `tchar` (RFC 9110 §5.6.2): method names, field names, transfer codings, chunk-extension names.
    static let token: UInt8 = 1 << 0
    /// `field-vchar` (RFC 9110 §5.5): VCHAR or obs-text. Whitespace is a separate class.
    static let fieldVChar: UInt8 = 1 << 1
    /// SP or HTAB, the only whitespace HTTP allows inside a line (RFC 9110 §5.6.3 OWS).
    static let whitespace: UInt8 = 1 << 2
    /// Bytes that may appear in a request-target (RFC 9112 §3.2, RFC 3986 §3): unreserved, sub-delims,
    /// ":" "@" "/" "?" "%" and "[" "]" for IP literals. Everything else, including "#" and non-ASCII, is refused.
    static let target: UInt8 = 1 << 3
    /// HEXDIG, either case.
    static let hexDigit: UInt8 = 1 << 4
    /// `qdtext` inside a quoted-string (RFC 9110 §5.6.4).
    static let quotedText: UInt8 = 1 << 5
    /// `reg-name` characters of a Host (RFC 3986 §3.2.2): unreserved, sub-delims and "%".
    static let regName: UInt8 = 1 << 6

    /// The class table, one bit set per byte value.
    package static let table = Table()

    /// A 256-entry byte-class table in constant, read-only data.
    ///
    /// Every class fits in the low 7 bits, so the table is a `StaticString` literal: its bytes sit in the
    /// binary's read-only data, a lookup is one load through `utf8Start`, and the type is `Sendable` as it
    /// stands. (An `InlineArray` static was tried first; the optimiser copied all 256 bytes per lookup.)
    /// `classify(_:)` is the readable definition; a test checks the literal against it for every byte.
    package struct Table: Sendable {
        private let bytes: StaticString = """
            \u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{24}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\
            \u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\
            \u{24}\u{6b}\u{2}\u{23}\u{6b}\u{6b}\u{6b}\u{6b}\u{6a}\u{6a}\u{6b}\u{6b}\u{6a}\u{6b}\u{6b}\u{2a}\
            \u{7b}\u{7b}\u{7b}\u{7b}\u{7b}\u{7b}\u{7b}\u{7b}\u{7b}\u{7b}\u{2a}\u{6a}\u{22}\u{6a}\u{22}\u{2a}\
            \u{2a}\u{7b}\u{7b}\u{7b}\u{7b}\u{7b}\u{7b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\
            \u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{2a}\u{2}\u{2a}\u{23}\u{6b}\
            \u{23}\u{7b}\u{7b}\u{7b}\u{7b}\u{7b}\u{7b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\
            \u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{6b}\u{22}\u{23}\u{22}\u{6b}\u{0}\
            \u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\
            \u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\
            \u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\
            \u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\
            \u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\
            \u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\
            \u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\
            \u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}\u{22}
            """

        init() {
            precondition(bytes.utf8CodeUnitCount == 256, "byte-class table must have 256 entries")
        }

        /// The class bits of `byte`.
        @inline(__always)
        package subscript(_ byte: UInt8) -> UInt8 { bytes.utf8Start[Int(byte)] }
    }

    package static func classify(_ byte: UInt8) -> UInt8 {
        var bits: UInt8 = 0
        let isAlpha = (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
        let isDigit = byte >= 0x30 && byte <= 0x39
        let isUnreserved = isAlpha || isDigit || "-._~".utf8.contains(byte)
        let isSubDelim = "!$&'()*+,;=".utf8.contains(byte)
        if isAlpha || isDigit || "!#$%&'*+-.^_`|~".utf8.contains(byte) {
            bits |= token
        }
        if (byte >= 0x21 && byte <= 0x7E) || byte >= 0x80 {
            bits |= fieldVChar
        }
        if byte == ASCII.space || byte == ASCII.tab {
            bits |= whitespace
        }
        if isUnreserved || isSubDelim || ":@/?%[]".utf8.contains(byte) {
            bits |= target
        }
        if isDigit || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66) {
            bits |= hexDigit
        }
        if byte == ASCII.tab || byte == ASCII.space || byte == 0x21 || (byte >= 0x23 && byte <= 0x5B)
            || (byte >= 0x5D && byte <= 0x7E) || byte >= 0x80
        {
            bits |= quotedText
        }
        if isUnreserved || isSubDelim || byte == UInt8(ascii: "%") {
            bits |= regName
        }
        return bits
    }

    /// Whether `byte` is a `tchar`.
    @inline(__always)
    static func isToken(_ byte: UInt8) -> Bool { table[byte] & token != 0 }

    /// Whether `byte` may appear in a field value: field-vchar, SP or HTAB.
    @inline(__always)
    static func isFieldValueByte(_ byte: UInt8) -> Bool { table[byte] & (fieldVChar | whitespace) != 0 }

    /// The value of a hexadecimal digit, or `nil`.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte &- 0x30
        case 0x41...0x46: return byte &- 0x41 &+ 10
        case 0x61...0x66: return byte &- 0x61 &+ 10
        default: return nil
        }
    }
}

/// Named ASCII bytes, so the parser reads as the grammar does.
package enum ASCII {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A
    static let semicolon: UInt8 = 0x3B
    static let comma: UInt8 = 0x2C
    static let equals: UInt8 = 0x3D
    static let quote: UInt8 = 0x22
    static let backslash: UInt8 = 0x5C
    static let slash: UInt8 = 0x2F
    static let dot: UInt8 = 0x2E
    static let asterisk: UInt8 = 0x2A
    static let percent: UInt8 = 0x25
    static let leftBracket: UInt8 = 0x5B
    static let rightBracket: UInt8 = 0x5D
    static let at: UInt8 = 0x40
    static let verticalTab: UInt8 = 0x0B
    static let formFeed: UInt8 = 0x0C

    /// ASCII lowercase of `byte`; other bytes unchanged.
    @inline(__always)
    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    /// Whether `byte` is a decimal digit.
    @inline(__always)
    package static func isDigit(_ byte: UInt8) -> Bool { byte &- 0x30 < 10 }

    /// Whether `byte` is an ASCII letter.
    @inline(__always)
    package static func isAlpha(_ byte: UInt8) -> Bool { (byte | 0x20) &- 0x61 < 26 }

    /// Case-insensitive comparison of `bytes` with `lowercaseLiteral`, which must already be lowercase ASCII.
    @inline(__always)
    static func equalsCaseInsensitive(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercaseLiteral: StaticString) -> Bool {
        let count = lowercaseLiteral.utf8CodeUnitCount
        guard bytes.count == count else { return false }
        let literal = lowercaseLiteral.utf8Start
        if count >= 8, let start = bytes.baseAddress {
            // Eight bytes at a time, the last eight overlapping the ones before (a byte at a time cost about 20
            // instructions per byte, and a response's framing fields are compared on every message).
            let input = UnsafeRawPointer(start)
            let expected = UnsafeRawPointer(literal)
            var offset = 0
            while offset &+ 8 < count {
                guard
                    sameIgnoringCase(
                        input.loadUnaligned(fromByteOffset: offset, as: UInt64.self),
                        expected.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                else { return false }
                offset &+= 8
            }
            return sameIgnoringCase(
                input.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self),
                expected.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self))
        }
        for index in 0..<bytes.count where lowercased(bytes[index]) != literal[index] {
            return false
        }
        return true
    }

    /// Whether eight bytes equal eight bytes of a lowercase ASCII literal, ASCII case aside: they may differ only in
    /// bit 5 (0x20), and only in lanes where the literal has a letter, so `[` never matches `{` nor CR match `-`.
    @inline(__always)
    package static func sameIgnoringCase(_ word: UInt64, _ lowercase: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        // 0x80 in each lane whose literal byte is a to z: the literal's bytes are below 0x80, so the sums carry
        // into no other lane (x + 0x1F has its high bit set iff x >= 0x61, x + 0x05 iff x > 0x7A).
        let letters = (lowercase &+ ones &* 0x1F) & ~(lowercase &+ ones &* 0x05) & (ones &* 0x80)
        return (word ^ lowercase) & ~(letters >> 2) == 0
    }

    /// Case-insensitive comparison of two byte buffers.
    @inline(__always)
    static func equalsCaseInsensitive(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for index in 0..<lhs.count where lowercased(lhs[index]) != lowercased(rhs[index]) {
            return false
        }
        return true
    }
}
