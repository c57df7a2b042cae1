import Wire

/// A URL with curl's globbing (`man curl`, "URL"): ranges `[1-100]`, `[001-100]` (zero-padded to the first number's
/// width), `[a-z]`, `[1-100:10]` and `[a-z:2]` (steps), sets `{one,two}`, several of them in one URL, and `\[`, `\]`,
/// `\{`, `\}` for the characters themselves (in a set, `\` takes any character literally).
///
/// The URLs come out in curl's order, an odometer whose last pattern turns fastest; `outputName` fills `#1`, `#2`, …
/// of an `-o` name with the current values. A malformed pattern is refused with curl's reason and curl's position,
/// counted as curl counts it (a set's closing brace and a bracketed IPv6 address are not counted, as in curl 7.88).
package struct URLGlob: Equatable, Sendable {
    /// One piece of the URL: text, or a pattern with its values.
    enum Piece: Equatable, Sendable {
        /// Text as written (escapes removed).
        case literal(String)
        /// `{a,b,c}`: the elements in order.
        case set([String])
        /// `[first-last:step]` of numbers, each written with at least `width` digits (zeros in front).
        case numbers(first: UInt64, last: UInt64, step: UInt64, width: Int)
        /// `[first-last:step]` of letters (any bytes between two letters' codes, as curl takes them).
        case letters(first: UInt8, last: UInt8, step: UInt8)

        /// How many values the piece has.
        var count: UInt64 {
            switch self {
            case .literal: 1
            case .set(let elements): UInt64(elements.count)
            case .numbers(let first, let last, let step, _): (last - first) / step + 1
            case .letters(let first, let last, let step): UInt64((last - first) / step) + 1
            }
        }

        /// The `index`th value.
        func value(_ index: UInt64) -> String {
            switch self {
            case .literal(let text):
                return text
            case .set(let elements):
                return elements[Int(index)]
            case .numbers(let first, _, let step, let width):
                let digits = String(first + index * step)
                return digits.count < width ? String(repeating: "0", count: width - digits.count) + digits : digits
            case .letters(let first, _, let step):
                return String(decoding: [first + UInt8(index) * step], as: UTF8.self)
            }
        }
    }

    /// The pieces in order.
    let pieces: [Piece]
    /// How many URLs the glob stands for (1 without patterns), counted in 64 bits without sign as curl 7.88 counts.
    package let count: UInt64

    /// curl refuses a URL of this many pieces (text runs and patterns together) or more.
    static let pieceLimit = 100

    /// Parses `url` as curl 7.88 does.
    ///
    /// - Throws: `URLGlobError` with curl's reason and position.
    package init(_ url: String) throws(URLGlobError) {
        var parser = Parser(bytes: Array(url.utf8), url: url)
        (pieces, count) = try parser.parse()
    }

    /// Whether the URL has any pattern (a URL without one expands to itself, escapes removed).
    package var hasPatterns: Bool {
        pieces.contains { if case .literal = $0 { false } else { true } }
    }

    /// One URL of the glob.
    package struct Expansion: Equatable, Sendable {
        /// The URL.
        package var url: String
        /// The patterns' values in it, in the order the patterns are written (`#1` is the first).
        package var values: [String]
    }

    /// The URLs in curl's order, made one at a time (a glob may stand for more URLs than fit in memory).
    package var expansions: some Sequence<Expansion> {
        AnySequence { [pieces] in
            var odometer = [UInt64](repeating: 0, count: pieces.count)
            var done = false
            return AnyIterator { () -> Expansion? in
                guard !done else { return nil }
                var url = ""
                var values: [String] = []
                for (index, piece) in pieces.enumerated() {
                    let value = piece.value(odometer[index])
                    url += value
                    if case .literal = piece { continue }
                    values.append(value)
                }
                // The last piece turns fastest; past the first piece's last value, the glob is done.
                done = true
                for index in pieces.indices.reversed() where odometer[index] + 1 < pieces[index].count {
                    odometer[index] += 1
                    for later in (index + 1)..<pieces.count { odometer[later] = 0 }
                    done = false
                    break
                }
                return Expansion(url: url, values: values)
            }
        }
    }

    /// `-o`'s name for one URL: each `#N` (N from 1) is the Nth pattern's current value; a `#` followed by no digit,
    /// by 0 or by a number past the last pattern stays as written, as in curl.
    package static func outputName(_ template: String, values: [String]) -> String {
        var result: [UInt8] = []
        let bytes = Array(template.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            guard byte == UInt8(ascii: "#"), index < bytes.count, Self.isDigit(bytes[index]) else {
                result.append(byte)
                continue
            }
            var end = index
            while end < bytes.count && Self.isDigit(bytes[end]) { end += 1 }
            let number = Int(String(decoding: bytes[index..<end], as: UTF8.self)) ?? 0
            if number >= 1 && number <= values.count {
                result.append(contentsOf: values[number - 1].utf8)
                index = end
            } else {
                // Only the `#` is taken as text; the digits are read again as text next.
                result.append(byte)
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") }

    /// The parse, byte by byte, with curl's position counter beside the index.
    private struct Parser {
        let bytes: [UInt8]
        let url: String
        var index = 0
        /// curl's 1-based position: it follows `index`, but skips a set's `}` and a bracketed IPv6 address.
        var position = 1
        var pieces: [Piece] = []
        var count: UInt64 = 1

        init(bytes: [UInt8], url: String) {
            self.bytes = bytes
            self.url = url
        }

        func failure(_ reason: String, at position: Int) -> URLGlobError {
            URLGlobError(reason: reason, position: position, url: url)
        }

        mutating func parse() throws(URLGlobError) -> ([Piece], UInt64) {
            while index < bytes.count {
                var text: [UInt8] = []
                while index < bytes.count && bytes[index] != UInt8(ascii: "{") {
                    let byte = bytes[index]
                    if byte == UInt8(ascii: "[") {
                        // An IPv6 address in brackets, or `[]`, is text.
                        let skip =
                            ipv6Length(at: index) ?? (index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "]") ? 2 : 0)
                        if skip == 0 { break }
                        text += bytes[index..<(index + skip)]
                        index += skip
                        continue
                    }
                    if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                        throw failure("unmatched close brace/bracket", at: position)
                    }
                    if byte == UInt8(ascii: "\\"), index + 1 < bytes.count, "{[}]".utf8.contains(bytes[index + 1]) {
                        index += 1
                        position += 1
                    }
                    text.append(bytes[index])
                    index += 1
                    position += 1
                }
                if !text.isEmpty {
                    pieces.append(.literal(String(decoding: text, as: UTF8.self)))
                } else if index < bytes.count {
                    let opening = bytes[index]
                    index += 1
                    position += 1
                    pieces.append(opening == UInt8(ascii: "{") ? try set() : try range())
                }
                if pieces.count >= URLGlob.pieceLimit { throw failure("too many globs", at: position) }
            }
            return (pieces, count)
        }

        /// The length of `[address]` at `start` when it holds an IPv6 address (with a zone), as curl's URL parser
        /// would take it for a host; nil otherwise.
        func ipv6Length(at start: Int) -> Int? {
            guard let close = bytes[start...].firstIndex(of: UInt8(ascii: "]")) else { return nil }
            let length = close - start + 1
            guard length < 128 else { return nil }
            var address = String(decoding: bytes[(start + 1)..<close], as: UTF8.self)
            guard address.contains(":") else { return nil }
            if let percent = address.firstIndex(of: "%") {
                var zone = address[address.index(after: percent)...]
                if zone.hasPrefix("25") { zone = zone.dropFirst(2) }
                guard !zone.isEmpty, zone.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._~".contains($0)) }) else {
                    return nil
                }
                address = String(address[..<percent])
            }
            guard let parsed = try? SocketAddress(ipAddress: address, port: 0), parsed.family == .ipv6 else { return nil }
            return length
        }

        mutating func multiply(by factor: UInt64, position: Int) throws(URLGlobError) {
            let (product, overflow) = count.multipliedReportingOverflow(by: factor)
            guard !overflow else { throw failure("range overflow", at: position) }
            count = product
        }

        /// `{a,b}`, after its `{`.
        mutating func set() throws(URLGlobError) -> Piece {
            let openingPosition = position - 1
            let start = index
            var elements: [String] = []
            var element: [UInt8] = []
            while true {
                guard index < bytes.count else { throw failure("unmatched brace", at: openingPosition) }
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    throw failure("nested brace", at: position)
                case UInt8(ascii: "]"):
                    throw failure("unexpected close bracket", at: position)
                case UInt8(ascii: "}"):
                    if index == start { throw failure("empty string within braces", at: position) }
                    elements.append(String(decoding: element, as: UTF8.self))
                    // curl's set check: no position.
                    try multiply(by: UInt64(elements.count), position: 0)
                    // The closing brace is not counted, as curl 7.88 counts.
                    index += 1
                    return .set(elements)
                case UInt8(ascii: ","):
                    elements.append(String(decoding: element, as: UTF8.self))
                    element = []
                    index += 1
                    position += 1
                default:
                    if byte == UInt8(ascii: "\\") && index + 1 < bytes.count {
                        index += 1
                        position += 1
                    }
                    element.append(bytes[index])
                    index += 1
                    position += 1
                }
            }
        }

        /// `[first-last]` or `[first-last:step]`, after its `[`. curl reports a bad range at the position its reading
        /// stopped: after `]` when the range was read whole, else where the text stopped making sense.
        mutating func range() throws(URLGlobError) -> Piece {
            let start = index
            guard index < bytes.count else { throw failure("bad range specification", at: position) }
            if URLGlob.isLetter(bytes[index]) {
                var step: UInt64 = 1
                var well = index + 3 < bytes.count && bytes[index + 1] == UInt8(ascii: "-")
                if well {
                    switch bytes[index + 3] {
                    case UInt8(ascii: "]"):
                        index += 4
                    case UInt8(ascii: ":"):
                        if let (value, end) = Self.unsignedNumber(bytes, from: index + 4), end < bytes.count,
                            bytes[end] == UInt8(ascii: "]")
                        {
                            step = value
                            index = end + 1
                        } else {
                            step = 0
                        }
                    default:
                        well = false
                    }
                }
                position += index - start
                let first = bytes[start]
                let last = well ? bytes[start + 2] : 0
                // curl compares signed chars: a last byte past ASCII is below any letter.
                guard well, step > 0, step <= UInt64(Int32.max), last < 0x80,
                    first == last ? step == 1 : first < last && step <= UInt64(last - first) && last - first <= 25
                else {
                    throw failure("bad range", at: position)
                }
                let piece = Piece.letters(first: first, last: last, step: UInt8(step))
                try multiply(by: piece.count, position: position)
                return piece
            }
            guard URLGlob.isDigit(bytes[index]) else { throw failure("bad range specification", at: position) }
            // A first number with a leading zero sets the width: every digit of it counts.
            var width = 0
            if bytes[index] == UInt8(ascii: "0") {
                while index + width < bytes.count && URLGlob.isDigit(bytes[index + width]) { width += 1 }
            }
            var parsed: (first: UInt64, last: UInt64, step: UInt64)?
            if let (first, afterFirst) = Self.unsignedNumber(bytes, from: index), afterFirst < bytes.count,
                bytes[afterFirst] == UInt8(ascii: "-")
            {
                index = afterFirst + 1
                while index < bytes.count && (bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t")) {
                    index += 1
                }
                if index < bytes.count, URLGlob.isDigit(bytes[index]),
                    let (last, afterLast) = Self.unsignedNumber(bytes, from: index)
                {
                    var step: UInt64? = 1
                    var end = afterLast
                    if afterLast < bytes.count && bytes[afterLast] == UInt8(ascii: ":") {
                        index = afterLast + 1
                        if let (value, afterStep) = Self.unsignedNumber(bytes, from: index) {
                            (step, end) = (value, afterStep)
                        } else if Self.overflows(bytes, from: index) {
                            step = nil
                        } else {
                            // No digits: curl reads a step of 0 and stops where it began.
                            (step, end) = (0, index)
                        }
                    }
                    if let step, end < bytes.count, bytes[end] == UInt8(ascii: "]") {
                        index = end + 1
                        parsed = (first, last, step)
                    }
                }
            }
            position += index - start
            guard let (first, last, step) = parsed, step > 0,
                first == last ? step == 1 : first < last && step <= last - first
            else {
                throw failure("bad range", at: position)
            }
            // More values than a 64-bit count holds (curl 7.88 counts 0 of them and never ends).
            guard (last - first) / step < UInt64.max else { throw failure("range overflow", at: position) }
            let piece = Piece.numbers(first: first, last: last, step: step, width: width)
            try multiply(by: piece.count, position: position)
            return piece
        }

        /// `strtoul(3)` in base 10 from `start`: blanks, a sign (`-` negates, wrapping), digits. The value and the
        /// index after it; nil when there are no digits or the value does not fit 64 bits.
        static func unsignedNumber(_ bytes: [UInt8], from start: Int) -> (UInt64, Int)? {
            var index = start
            while index < bytes.count && [0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D].contains(bytes[index]) { index += 1 }
            var negative = false
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                negative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            let digitsStart = index
            var value: UInt64 = 0
            var overflow = false
            while index < bytes.count && URLGlob.isDigit(bytes[index]) {
                let (times, o1) = value.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                overflow = overflow || o1 || o2
                value = sum
                index += 1
            }
            guard index > digitsStart, !overflow else { return nil }
            return (negative ? 0 &- value : value, index)
        }

        /// Whether the number at `start` has digits but does not fit 64 bits (curl's `ERANGE`).
        static func overflows(_ bytes: [UInt8], from start: Int) -> Bool {
            var index = start
            while index < bytes.count
                && [0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, UInt8(ascii: "+"), UInt8(ascii: "-")].contains(bytes[index])
            {
                index += 1
            }
            return index < bytes.count && URLGlob.isDigit(bytes[index])
        }
    }
}

/// A URL's glob that curl would refuse (exit 3): curl's reason and its 1-based position in the URL (0 for none).
package struct URLGlobError: Error, Equatable, Sendable {
    /// curl's words: `bad range`, `unmatched brace`, `nested brace`, …
    package var reason: String
    /// The position curl names; 0 when it names none.
    package var position: Int
    /// The URL as given.
    package var url: String

    /// curl's text: `REASON in URL position N:`, the URL, and a caret under position N.
    package var message: String {
        guard position > 0 else { return reason }
        // curl pads with at least one blank (printf's width of one " "), so position 1 shows its caret under 2.
        return "\(reason) in URL position \(position):\n\(url)\n" + String(repeating: " ", count: max(1, position - 1)) + "^"
    }
}
