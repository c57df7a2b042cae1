/// A strict RFC 8259 parser from bytes to `JSONValue`, safe on any input: every read is bounds-checked, nesting is
/// limited (so hostile input cannot exhaust the stack), and each failure names its byte offset.
///
/// UTF-8 is the format; UTF-16 and UTF-32 (with or without a byte-order mark) are detected as NSJSONSerialization
/// does and converted first.
struct JSONParser {
    /// Why the text is not JSON.
    struct Failure: Error, Equatable, CustomStringConvertible {
        /// What was wrong.
        var reason: String
        /// The byte offset (in the UTF-8 text) where it was found.
        var offset: Int

        var description: String { "invalid JSON at byte \(offset): \(reason)" }
    }

    /// Nesting deeper than this fails rather than recursing further.
    static let maximumDepth = 256

    private let bytes: [UInt8]
    private var position = 0

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The value `input` holds.
    /// - Parameters:
    ///   - input: The text, UTF-8, UTF-16 or UTF-32.
    ///   - allowsFragments: Whether the top level may be a scalar (string, number, boolean, null).
    static func parse(_ input: [UInt8], allowsFragments: Bool) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes: try utf8(input))
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.position == parser.bytes.count else {
            throw Failure(reason: "unexpected data after the value", offset: parser.position)
        }
        switch value {
        case .array, .object: break
        default: guard allowsFragments else { throw Failure(reason: "the top level is not an object or an array", offset: 0) }
        }
        return value
    }

    // MARK: Encodings

    /// `input` as UTF-8: a UTF-8 byte-order mark is dropped, UTF-16 and UTF-32 are converted (detected by their mark,
    /// else by the zero bytes around the first character, RFC 4627 §3).
    private static func utf8(_ input: [UInt8]) throws(Failure) -> [UInt8] {
        let prefix = Array(input.prefix(4)) + [UInt8](repeating: 0xAA, count: max(0, 4 - input.count))
        switch (prefix[0], prefix[1], prefix[2], prefix[3]) {
        case (0xEF, 0xBB, 0xBF, _): return Array(input.dropFirst(3))
        case (0x00, 0x00, 0xFE, 0xFF): return try convert(input.dropFirst(4), width: 4, bigEndian: true)
        case (0xFF, 0xFE, 0x00, 0x00) where input.count >= 4: return try convert(input.dropFirst(4), width: 4, bigEndian: false)
        case (0xFE, 0xFF, _, _): return try convert(input.dropFirst(2), width: 2, bigEndian: true)
        case (0xFF, 0xFE, _, _): return try convert(input.dropFirst(2), width: 2, bigEndian: false)
        case (0x00, 0x00, 0x00, let first) where first != 0 && input.count >= 4:
            return try convert(input[...], width: 4, bigEndian: true)
        case (let first, 0x00, 0x00, 0x00) where first != 0 && input.count >= 4:
            return try convert(input[...], width: 4, bigEndian: false)
        case (0x00, let first, _, _) where first != 0 && input.count >= 2:
            return try convert(input[...], width: 2, bigEndian: true)
        case (let first, 0x00, _, _) where first != 0 && input.count >= 2:
            return try convert(input[...], width: 2, bigEndian: false)
        default: return input
        }
    }

    private static func convert(_ input: ArraySlice<UInt8>, width: Int, bigEndian: Bool) throws(Failure) -> [UInt8] {
        guard input.count % width == 0 else {
            throw Failure(reason: "a UTF-\(width * 8) text with a partial code unit", offset: input.count)
        }
        var units: [UInt32] = []
        units.reserveCapacity(input.count / width)
        var index = input.startIndex
        while index < input.endIndex {
            var unit: UInt32 = 0
            for byteIndex in 0..<width {
                let byte = UInt32(input[index + (bigEndian ? byteIndex : width - 1 - byteIndex)])
                unit = unit << 8 | byte
            }
            units.append(unit)
            index += width
        }
        let text: String?
        if width == 2 {
            text = String(validating: units.map { UInt16(truncatingIfNeeded: $0) }, as: UTF16.self)
        } else {
            text = String(validating: units, as: UTF32.self)
        }
        guard let text else { throw Failure(reason: "invalid UTF-\(width * 8)", offset: 0) }
        return Array(text.utf8)
    }

    // MARK: Values

    private mutating func parseValue(depth: Int) throws(Failure) -> JSONValue {
        guard position < bytes.count else { throw Failure(reason: "unexpected end of text", offset: position) }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case let byte: throw Failure(reason: "unexpected byte 0x\(String(byte, radix: 16))", offset: position)
        }
    }

    private mutating func parseObject(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= Self.maximumDepth else {
            throw Failure(reason: "nested deeper than \(Self.maximumDepth) levels", offset: position)
        }
        position += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw Failure(reason: "expected a member name", offset: position) }
            let name = try parseString()
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw Failure(reason: "expected ':'", offset: position) }
            position += 1
            skipWhitespace()
            members[name] = try parseValue(depth: depth)
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                return .object(members)
            default: throw Failure(reason: "expected ',' or '}'", offset: position)
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= Self.maximumDepth else {
            throw Failure(reason: "nested deeper than \(Self.maximumDepth) levels", offset: position)
        }
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                return .array(elements)
            default: throw Failure(reason: "expected ',' or ']'", offset: position)
            }
        }
    }

    private mutating func parseString() throws(Failure) -> String {
        let start = position
        position += 1
        var text: [UInt8] = []
        while true {
            guard let byte = peek() else { throw Failure(reason: "unterminated string", offset: start) }
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = String(validating: text, as: UTF8.self) else {
                    throw Failure(reason: "a string that is not UTF-8", offset: start)
                }
                return string
            case UInt8(ascii: "\\"):
                try parseEscape(into: &text)
            case 0x00..<0x20:
                throw Failure(reason: "an unescaped control character in a string", offset: position - 1)
            default:
                text.append(byte)
            }
        }
    }

    private mutating func parseEscape(into text: inout [UInt8]) throws(Failure) {
        guard let byte = peek() else { throw Failure(reason: "unterminated escape", offset: position) }
        position += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(byte)
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "u"):
            let escapeStart = position - 2
            var scalar = UInt32(try parseHex4())
            if (0xD800..<0xDC00).contains(scalar) {
                guard peek() == UInt8(ascii: "\\"), peek(offset: 1) == UInt8(ascii: "u") else {
                    throw Failure(reason: "a high surrogate without its low surrogate", offset: escapeStart)
                }
                position += 2
                let low = UInt32(try parseHex4())
                guard (0xDC00..<0xE000).contains(low) else {
                    throw Failure(reason: "an invalid low surrogate", offset: escapeStart)
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw Failure(reason: "a lone low surrogate", offset: escapeStart)
            }
            guard let unicode = Unicode.Scalar(scalar) else {
                throw Failure(reason: "an invalid code point", offset: escapeStart)
            }
            text += Array(String(Character(unicode)).utf8)
        default:
            throw Failure(reason: "an invalid escape", offset: position - 2)
        }
    }

    private mutating func parseHex4() throws(Failure) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let byte = peek() else { throw Failure(reason: "a short \\u escape", offset: position) }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Failure(reason: "a non-hexadecimal digit in a \\u escape", offset: position)
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }

    private mutating func parseNumber() throws(Failure) -> JSONValue {
        let start = position
        var isIntegral = true
        if peek() == UInt8(ascii: "-") { position += 1 }
        if peek() == UInt8(ascii: "0") {
            position += 1
        } else {
            guard skipDigits() > 0 else { throw Failure(reason: "a number without digits", offset: start) }
        }
        if peek() == UInt8(ascii: ".") {
            isIntegral = false
            position += 1
            guard skipDigits() > 0 else { throw Failure(reason: "a fraction without digits", offset: position) }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isIntegral = false
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            guard skipDigits() > 0 else { throw Failure(reason: "an exponent without digits", offset: position) }
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if isIntegral, let integer = Int(text) { return .int(integer) }
        guard let number = Double(text), number.isFinite else { throw Failure(reason: "a number out of range", offset: start) }
        return .double(number)
    }

    // MARK: Bytes

    private func peek(offset: Int = 0) -> UInt8? {
        position + offset < bytes.count ? bytes[position + offset] : nil
    }

    private mutating func skipDigits() -> Int {
        let start = position
        while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { position += 1 }
        return position - start
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
    }

    private mutating func expectLiteral(_ literal: String) throws(Failure) {
        let expected = Array(literal.utf8)
        guard bytes.count - position >= expected.count else { throw Failure(reason: "unexpected end of text", offset: position) }
        guard bytes[position..<position + expected.count].elementsEqual(expected) else {
            throw Failure(reason: "an invalid literal", offset: position)
        }
        position += expected.count
    }
}
