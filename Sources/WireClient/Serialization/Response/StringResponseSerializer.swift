import FoundationEssentials

/// The body as text, decoded with the charset of `Content-Type` (a Swift addition; AFNetworking left this to apps).
///
/// Supported charsets: `utf-8`, `us-ascii`, `iso-8859-1`/`latin1`, `utf-16`, `utf-16le`, `utf-16be`, `utf-32`,
/// `utf-32le`, `utf-32be` (names case-insensitive). Without a charset the body is UTF-8 (RFC 9110 dropped HTTP/1.1's
/// ISO-8859-1 default). A byte-order mark that matches the charset is dropped.
public struct StringResponseSerializer: ResponseSerializer, Codable, Hashable {
    /// Acceptable status codes; 200…299 by default.
    public var acceptableStatusCodes: Set<Int>? = successfulStatusCodes
    /// Acceptable media types; nil (any) by default.
    public var acceptableContentTypes: Set<String>?

    /// Creates a serializer with the defaults.
    public init() {}

    /// The decoded text (an empty body is `""`), and the validation error; an unknown charset or bytes invalid in it
    /// give `.responseSerializationFailed`. A content-type failure stops decoding.
    /// - Parameters:
    ///   - response: The response.
    ///   - data: The body.
    /// - Returns: The text and the error.
    public func serialize(response: ClientResponse?, data: Data?) -> SerializedResponse {
        let validation = validate(response: response, data: data)
        if let validation, validation.hasContentTypeFailure { return (nil, validation) }
        guard let data else { return (nil, validation) }
        let charset = response?.textEncodingName ?? "utf-8"
        guard let text = Self.decode(Array(data), charset: charset) else {
            let cause = ClientError(.responseSerializationFailed, failureReason: "The body is not valid \(charset) text.")
            return (nil, .parseFailure(cause, response: response, data: data, validation: validation))
        }
        return (text, validation)
    }

    /// `bytes` decoded as `charset`; nil for an unknown charset or invalid bytes.
    static func decode(_ bytes: [UInt8], charset: String) -> String? {
        switch charset.lowercased() {
        case "utf-8", "utf8":
            return String(validating: bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes, as: UTF8.self)
        case "us-ascii", "ascii":
            return bytes.allSatisfy({ $0 < 0x80 }) ? String(decoding: bytes, as: UTF8.self) : nil
        case "iso-8859-1", "iso8859-1", "latin1", "l1", "iso_8859-1":
            return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        case "utf-16":
            if bytes.starts(with: [0xFF, 0xFE]) { return units(bytes.dropFirst(2), width: 2, bigEndian: false) }
            if bytes.starts(with: [0xFE, 0xFF]) { return units(bytes.dropFirst(2), width: 2, bigEndian: true) }
            return units(bytes[...], width: 2, bigEndian: true)
        case "utf-16le":
            return units(bytes.starts(with: [0xFF, 0xFE]) ? bytes.dropFirst(2) : bytes[...], width: 2, bigEndian: false)
        case "utf-16be":
            return units(bytes.starts(with: [0xFE, 0xFF]) ? bytes.dropFirst(2) : bytes[...], width: 2, bigEndian: true)
        case "utf-32":
            if bytes.starts(with: [0xFF, 0xFE, 0x00, 0x00]) { return units(bytes.dropFirst(4), width: 4, bigEndian: false) }
            if bytes.starts(with: [0x00, 0x00, 0xFE, 0xFF]) { return units(bytes.dropFirst(4), width: 4, bigEndian: true) }
            return units(bytes[...], width: 4, bigEndian: true)
        case "utf-32le":
            return units(
                bytes.starts(with: [0xFF, 0xFE, 0x00, 0x00]) ? bytes.dropFirst(4) : bytes[...], width: 4, bigEndian: false)
        case "utf-32be":
            return units(
                bytes.starts(with: [0x00, 0x00, 0xFE, 0xFF]) ? bytes.dropFirst(4) : bytes[...], width: 4, bigEndian: true)
        default: return nil
        }
    }

    private static func units(_ bytes: ArraySlice<UInt8>, width: Int, bigEndian: Bool) -> String? {
        guard bytes.count % width == 0 else { return nil }
        var values: [UInt32] = []
        values.reserveCapacity(bytes.count / width)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            var value: UInt32 = 0
            for offset in 0..<width { value = value << 8 | UInt32(bytes[index + (bigEndian ? offset : width - 1 - offset)]) }
            values.append(value)
            index += width
        }
        return width == 2
            ? String(validating: values.map { UInt16(truncatingIfNeeded: $0) }, as: UTF16.self)
            : String(validating: values, as: UTF32.self)
    }
}
