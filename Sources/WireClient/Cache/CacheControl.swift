import Wire

/// The `Cache-Control` directives a private client cache acts on (RFC 9111 §5.2), read from every field of that name.
/// Unknown directives are ignored; a malformed delta-seconds value reads as 0 (stale), as RFC 9111 §1.2.2 advises.
/// Parsed from the fields' bytes, without making strings: every cache lookup reads the stored response's and the
/// request's.
struct CacheControl: Sendable, Hashable {
    var noStore = false
    var noCache = false
    var isPublic = false
    var isPrivate = false
    var mustRevalidate = false
    var maxAge: Int?
    var sMaxAge: Int?

    init(_ headers: HTTPHeaders) {
        var found = false
        for position in headers.indices
        where headers.withNameBytes(at: position, { Self.equals($0, 0..<$0.count, "cache-control") }) {
            found = true
            headers.withValueBytes(at: position) { parse($0) }
        }
        // HTTP/1.0's `Pragma: no-cache` counts only where no `Cache-Control` says otherwise (RFC 9111 §5.4).
        if !found, headers.containsToken("no-cache", inFieldsNamed: "Pragma") {
            noCache = true
        }
    }

    /// The comma-separated directives of one field value.
    private mutating func parse(_ value: Span<UInt8>) {
        var start = 0
        while start <= value.count {
            var end = start
            while end < value.count, value[end] != UInt8(ascii: ",") { end += 1 }
            apply(value, Self.trimmed(value, start..<end))
            start = end + 1
        }
    }

    /// One directive: `name` or `name=argument`, the argument maybe quoted.
    private mutating func apply(_ value: Span<UInt8>, _ directive: Range<Int>) {
        guard !directive.isEmpty else { return }
        var equals = directive.lowerBound
        while equals < directive.upperBound, value[equals] != UInt8(ascii: "=") { equals += 1 }
        let name = Self.trimmed(value, directive.lowerBound..<equals)
        var argument: Range<Int>?
        if equals < directive.upperBound {
            var range = Self.trimmed(value, (equals + 1)..<directive.upperBound)
            if range.count >= 2, value[range.lowerBound] == UInt8(ascii: "\""), value[range.upperBound - 1] == UInt8(ascii: "\"")
            {
                range = (range.lowerBound + 1)..<(range.upperBound - 1)
            }
            argument = range
        }
        if Self.equals(value, name, "no-store") {
            noStore = true
        } else if Self.equals(value, name, "no-cache") {
            noCache = true
        } else if Self.equals(value, name, "public") {
            isPublic = true
        } else if Self.equals(value, name, "private") {
            isPrivate = true
        } else if Self.equals(value, name, "must-revalidate") {
            mustRevalidate = true
        } else if Self.equals(value, name, "max-age") {
            // RFC 9111 §4.2.1: of repeated directives, the first is used.
            if maxAge == nil { maxAge = Self.deltaSeconds(value, argument) }
        } else if Self.equals(value, name, "s-maxage") {
            if sMaxAge == nil { sMaxAge = Self.deltaSeconds(value, argument) }
        }
    }

    /// `range` without leading and trailing spaces and tabs.
    private static func trimmed(_ bytes: Span<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
        while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
        return lower..<upper
    }

    /// Whether `bytes[range]` is `lowercase`, ASCII letters compared case-insensitively.
    private static func equals(_ bytes: Span<UInt8>, _ range: Range<Int>, _ lowercase: StaticString) -> Bool {
        guard range.count == lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { expected in
            for index in 0..<expected.count {
                var byte = bytes[range.lowerBound + index]
                if byte >= 0x41, byte <= 0x5a { byte |= 0x20 }
                if byte != expected[index] { return false }
            }
            return true
        }
    }

    /// Digits only; a value too large for `Int32` is as good as infinite (RFC 9111 §1.2.2 caps at 2^31).
    private static func deltaSeconds(_ bytes: Span<UInt8>, _ range: Range<Int>?) -> Int {
        guard let range, !range.isEmpty else { return 0 }
        var value = 0
        for index in range {
            let byte = bytes[index]
            guard byte >= 0x30, byte <= 0x39 else { return 0 }
            value = min(value * 10 + Int(byte - 0x30), Int(Int32.max))
        }
        return value
    }
}
