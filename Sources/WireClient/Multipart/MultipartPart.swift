import FoundationEssentials

/// One part of a multipart body: its header fields and where its body comes from, with the body's length fixed
/// when the part was appended.
struct MultipartPart: Sendable {
    /// Where a part's body comes from.
    enum Source: Sendable {
        /// Bytes in memory.
        case data(Data)
        /// A file, read at offsets when the body is sent; `size` is its size when appended.
        case file(path: String, size: Int64)
        /// A stream made anew for each pass, which must yield exactly `length` bytes.
        case stream(length: Int64, make: @Sendable () -> AsyncThrowingStream<Data, any Error>)
    }

    /// The header fields in order.
    var headers: [(name: String, value: String)]
    /// The body's source.
    var source: Source

    /// The body's length.
    var bodyLength: Int64 {
        switch source {
        case .data(let data): Int64(data.count)
        case .file(_, let size): size
        case .stream(let length, _): length
        }
    }

    /// The header block: each `Name: value\r\n`, then `\r\n`.
    var headerBytes: Data {
        var text = ""
        for field in headers { text += "\(field.name): \(field.value)\r\n" }
        text += "\r\n"
        return Data(text.utf8)
    }

    /// `Content-Disposition: form-data; name="…"[; filename="…"]` with both quoted by the WHATWG rule.
    static func disposition(name: String, fileName: String?) -> (name: String, value: String) {
        var value = "form-data; name=\"\(quoted(name))\""
        if let fileName { value += "; filename=\"\(quoted(fileName))\"" }
        return ("Content-Disposition", value)
    }

    /// `text` with `"` → `%22`, CR → `%0D`, LF → `%0A` (the WHATWG form-data rule) and NUL → `%00`, so it cannot
    /// end the quoted string or the header line (a deviation from AFNetworking, which inserts names raw).
    static func quoted(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "%22"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            case "\0": result += "%00"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Whether `byte` may be in a field name (RFC 9110 §5.6.2 `tchar`).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// The `name` parameter of a `Content-Disposition` value as `disposition(name:fileName:)` writes it, for messages.
    static func formName(in disposition: String) -> String? {
        guard let start = disposition.firstRange(of: "name=\"")?.upperBound,
            let end = disposition[start...].firstIndex(of: "\"")
        else { return nil }
        return String(disposition[start..<end])
    }
}
