/// A second, deliberately plain reading of the chunked coding (RFC 9112 §7.1), written from the grammar rather than
/// from Wire's state machine, for differential fuzzing:
///
///     chunked-body = *chunk last-chunk trailer-section CRLF
///     chunk        = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
///     chunk-size   = 1*HEXDIG
///     chunk-ext    = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
///     chunk-ext-val = token / quoted-string
///
/// It stops after the last-chunk line; the trailer section is the head scanner's business.
public enum ReferenceChunked {
    public enum Outcome: Equatable, Sendable {
        /// The chunks decode to `body`; the last-chunk line ends just before `end`.
        case decoded(body: [UInt8], end: Int)
        /// Malformed, or over a limit, at about this index.
        case invalid(at: Int)
        /// The input ends inside the chunks.
        case incomplete
    }

    static let tokenSymbols = Set("!#$%&'*+-.^_`|~".utf8)

    static func isToken(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || tokenSymbols.contains(byte)
    }

    static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case 0x30...0x39: return Int(byte - 0x30)
        case 0x41...0x46: return Int(byte - 0x41 + 10)
        case 0x61...0x66: return Int(byte - 0x61 + 10)
        default: return nil
        }
    }

    /// Decodes the chunks at the start of `bytes`.
    /// - Parameters:
    ///   - maxExtensionLength: Longest allowed run of bytes between the size digits and the CR.
    ///   - maxBodySize: Largest total of chunk sizes, or `nil`.
    public static func decode(_ bytes: [UInt8], maxExtensionLength: Int, maxBodySize: Int?) -> Outcome {
        var body: [UInt8] = []
        var total = 0
        var index = 0
        while true {
            // chunk-size
            var size = 0
            let sizeStart = index
            while index < bytes.count, let digit = hexValue(bytes[index]) {
                if size > Int.max >> 4 { return .invalid(at: index) }
                size = size << 4 | digit
                index += 1
            }
            if index == bytes.count { return .incomplete }
            if index == sizeStart { return .invalid(at: index) }
            // chunk-ext: everything up to CR must match the grammar; find the CR first, then check the span.
            let extensionStart = index
            var lineEnd = index
            while lineEnd < bytes.count && bytes[lineEnd] != 0x0D && bytes[lineEnd] != 0x0A { lineEnd += 1 }
            if lineEnd - extensionStart > maxExtensionLength { return .invalid(at: extensionStart + maxExtensionLength) }
            if lineEnd == bytes.count {
                // Unterminated: only incomplete if what is there could still become valid.
                return validPrefix(bytes[extensionStart..<lineEnd]) ? .incomplete : .invalid(at: extensionStart)
            }
            guard isValidExtension(bytes[extensionStart..<lineEnd]) else { return .invalid(at: extensionStart) }
            if bytes[lineEnd] == 0x0A { return .invalid(at: lineEnd) }
            guard lineEnd + 1 < bytes.count else { return .incomplete }
            guard bytes[lineEnd + 1] == 0x0A else { return .invalid(at: lineEnd) }
            index = lineEnd + 2
            if size == 0 { return .decoded(body: body, end: index) }
            if let maxBodySize, size > maxBodySize - total { return .invalid(at: index - 1) }
            total += size
            // chunk-data CRLF
            guard bytes.count - index >= size else { return .incomplete }
            body.append(contentsOf: bytes[index..<index + size])
            index += size
            guard index < bytes.count else { return .incomplete }
            guard bytes[index] == 0x0D else { return .invalid(at: index) }
            guard index + 1 < bytes.count else { return .incomplete }
            guard bytes[index + 1] == 0x0A else { return .invalid(at: index + 1) }
            index += 2
        }
    }

    /// Whether `text` is a complete chunk-ext.
    static func isValidExtension(_ text: ArraySlice<UInt8>) -> Bool {
        var parser = ExtensionParser(text: Array(text))
        return parser.parseAll() == .complete
    }

    /// Whether `text` could be the beginning of a chunk-ext.
    static func validPrefix(_ text: ArraySlice<UInt8>) -> Bool {
        var parser = ExtensionParser(text: Array(text))
        return parser.parseAll() != .invalid
    }

    /// Recursive-descent matcher for chunk-ext that tells a complete match, a viable prefix, and a mismatch apart.
    struct ExtensionParser {
        enum Result: Equatable { case complete, prefix, invalid }
        var text: [UInt8]
        var index = 0

        mutating func skipWhitespace() {
            while index < text.count && (text[index] == 0x20 || text[index] == 0x09) { index += 1 }
        }

        mutating func parseAll() -> Result {
            while true {
                if index == text.count { return .complete }
                // BWS ";" BWS name
                skipWhitespace()
                if index == text.count { return .prefix }
                guard text[index] == UInt8(ascii: ";") else { return .invalid }
                index += 1
                skipWhitespace()
                if index == text.count { return .prefix }
                let nameStart = index
                while index < text.count && ReferenceChunked.isToken(text[index]) { index += 1 }
                if index == nameStart { return .invalid }
                if index == text.count { return .complete }
                // [ BWS "=" BWS value ]
                let afterName = index
                skipWhitespace()
                if index == text.count { return .prefix }
                if text[index] != UInt8(ascii: "=") {
                    index = afterName
                    continue
                }
                index += 1
                skipWhitespace()
                if index == text.count { return .prefix }
                if text[index] == UInt8(ascii: "\"") {
                    index += 1
                    var closed = false
                    while index < text.count {
                        let byte = text[index]
                        if byte == UInt8(ascii: "\"") {
                            closed = true
                            index += 1
                            break
                        } else if byte == UInt8(ascii: "\\") {
                            // quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
                            guard index + 1 < text.count else { return .prefix }
                            let escaped = text[index + 1]
                            guard escaped == 0x09 || escaped == 0x20 || (escaped >= 0x21 && escaped != 0x7F) else {
                                return .invalid
                            }
                            index += 2
                        } else if byte == 0x09 || byte == 0x20 || byte == 0x21 || (byte >= 0x23 && byte <= 0x5B)
                            || (byte >= 0x5D && byte <= 0x7E) || byte >= 0x80
                        {
                            index += 1
                        } else {
                            return .invalid
                        }
                    }
                    if !closed { return .prefix }
                } else {
                    let valueStart = index
                    while index < text.count && ReferenceChunked.isToken(text[index]) { index += 1 }
                    if index == valueStart { return .invalid }
                }
            }
        }
    }
}
