/// Percent-encoding (RFC 3986 §2.1) and form-style queries: the one place Wire, its tool and the layers above
/// escape and unescape URL text.
///
/// Encoding works on UTF-8 bytes, never on characters, so composed characters and emoji are escaped whole and never
/// split or replaced; hexadecimal digits are upper case (RFC 3986 §2.1 recommends it).
///
/// ```swift
/// PercentEncoding.encode("a b/c?d&e", allowing: .queryComponent)   // "a%20b/c?d%26e"
/// PercentEncoding.decode("caf%C3%A9")                              // "café"
/// PercentEncoding.formQuery([("q", "1 2"), ("tag", nil)])          // "q=1%202&tag"
/// ```
public enum PercentEncoding {
    /// The bytes that stay as they are when encoding; every other byte becomes `%XX`.
    public struct AllowedBytes: Sendable, Hashable {
        /// One bit per byte value.
        private var low: UInt64
        private var high: UInt64

        /// The unreserved characters of RFC 3986 §2.3 (`A–Z a–z 0–9 - . _ ~`) and `extra`.
        /// - Parameter extra: More ASCII characters to leave unescaped.
        public init(unreservedAnd extra: String = "") {
            low = 0
            high = 0
            for byte in UInt8(ascii: "0")...UInt8(ascii: "9") { insert(byte) }
            for byte in UInt8(ascii: "A")...UInt8(ascii: "Z") { insert(byte) }
            for byte in UInt8(ascii: "a")...UInt8(ascii: "z") { insert(byte) }
            for byte in "-._~".utf8 { insert(byte) }
            for byte in extra.utf8 where byte < 0x80 { insert(byte) }
        }

        /// Whether `byte` stays as it is.
        public func contains(_ byte: UInt8) -> Bool {
            byte < 64 ? low & (1 << UInt64(byte)) != 0 : byte < 128 ? high & (1 << UInt64(byte - 64)) != 0 : false
        }

        private mutating func insert(_ byte: UInt8) {
            if byte < 64 { low |= 1 << UInt64(byte) } else { high |= 1 << UInt64(byte - 64) }
        }

        /// Only the unreserved characters: what a path segment, a Unix socket path in a host, or any opaque value
        /// needs.
        public static let unreserved = AllowedBytes()

        /// A name or value inside a query: the unreserved characters plus `/` and `?`, which RFC 3986 §3.4 lets a
        /// query hold (so a URL can be a query value). Every delimiter (`:#[]@!$&'()*+,;=`) and space (`%20`,
        /// never `+`) are escaped: AFNetworking's and Alamofire's set.
        public static let queryComponent = AllowedBytes(unreservedAnd: "/?")

        /// A whole path: the unreserved characters, `/`, and the sub-delimiters and `:` and `@` that RFC 3986 §3.3
        /// allows in segments.
        public static let path = AllowedBytes(unreservedAnd: "/!$&'()*+,;=:@")
    }

    /// `text`'s UTF-8 bytes with every byte outside `allowed` written as `%XX`.
    /// - Parameters:
    ///   - text: The text to escape.
    ///   - allowed: The bytes left as they are.
    /// - Returns: The escaped text (ASCII).
    public static func encode(_ text: some StringProtocol, allowing allowed: AllowedBytes) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        append(text.utf8, allowing: allowed, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends `bytes` escaped to `output`.
    /// - Parameters:
    ///   - bytes: The bytes to escape.
    ///   - allowed: The bytes left as they are.
    ///   - output: Where the escaped bytes go.
    public static func append(_ bytes: some Sequence<UInt8>, allowing allowed: AllowedBytes, to output: inout [UInt8]) {
        let hex: StaticString = "0123456789ABCDEF"
        for byte in bytes {
            if allowed.contains(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hex.utf8Start[Int(byte >> 4)])
                output.append(hex.utf8Start[Int(byte & 0x0F)])
            }
        }
    }

    /// The bytes `text` stands for, each `%XX` replaced by its byte.
    /// - Parameter text: Escaped text.
    /// - Returns: The bytes, or nil when a `%` is not followed by two hexadecimal digits.
    public static func decodeBytes(_ text: some StringProtocol) -> [UInt8]? {
        decodeBytes(utf8: text.utf8)
    }

    /// The bytes `escaped` stands for, each `%XX` replaced by its byte.
    /// - Parameter escaped: Escaped text's bytes.
    /// - Returns: The bytes, or nil when a `%` is not followed by two hexadecimal digits.
    public static func decodeBytes(utf8 escaped: some Collection<UInt8>) -> [UInt8]? {
        decoded(escaped, keepingMalformedEscapes: false)
    }

    /// The bytes `escaped` stands for, as curl decodes a URL's parts: each `%XX` replaced by its byte, a `%` not
    /// followed by two hexadecimal digits kept as it is.
    /// - Parameter escaped: Escaped text's bytes.
    /// - Returns: The bytes.
    public static func decodeBytesLeniently(utf8 escaped: some Collection<UInt8>) -> [UInt8] {
        decoded(escaped, keepingMalformedEscapes: true) ?? []
    }

    /// The one decoder behind the strict and the lenient forms: nil only when a malformed escape is refused.
    private static func decoded(_ escaped: some Collection<UInt8>, keepingMalformedEscapes: Bool) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(escaped.count)
        var index = escaped.startIndex
        while index != escaped.endIndex {
            let byte = escaped[index]
            escaped.formIndex(after: &index)
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            var next = index
            if next != escaped.endIndex, let high = hexValue(escaped[next]) {
                escaped.formIndex(after: &next)
                if next != escaped.endIndex, let low = hexValue(escaped[next]) {
                    bytes.append(high << 4 | low)
                    index = escaped.index(after: next)
                    continue
                }
            }
            guard keepingMalformedEscapes else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    /// The text `text` stands for.
    /// - Parameters:
    ///   - text: Escaped text.
    ///   - allowingNUL: Whether `%00` may appear; false refuses it (a NUL would end a file name or a C string).
    /// - Returns: The decoded text, or nil for a malformed escape, a refused NUL, or bytes that are not UTF-8.
    public static func decode(_ text: some StringProtocol, allowingNUL: Bool = true) -> String? {
        guard let bytes = decodeBytes(text), allowingNUL || !bytes.contains(0) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// A form-style query (`application/x-www-form-urlencoded` as AFNetworking writes it): each name and value
    /// escaped with `.queryComponent`, joined by `=`, pairs joined by `&`, in the order given; a pair whose value is
    /// nil is its escaped name alone.
    /// - Parameter pairs: Names and values.
    /// - Returns: The query, without a leading `?`.
    public static func formQuery(_ pairs: [(name: String, value: String?)]) -> String {
        var output: [UInt8] = []
        for (index, pair) in pairs.enumerated() {
            if index > 0 { output.append(UInt8(ascii: "&")) }
            append(pair.name.utf8, allowing: .queryComponent, to: &output)
            if let value = pair.value {
                output.append(UInt8(ascii: "="))
                append(value.utf8, allowing: .queryComponent, to: &output)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The value of one hexadecimal digit, either case; nil for any other byte.
    package static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
