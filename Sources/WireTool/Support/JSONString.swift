import Wire

/// The one way the `wire` tool writes a JSON string (RFC 8259 §7), in every JSON it prints: `wire parse`,
/// `wire serve --echo`, `wire get --json-summary` and `wire bench --json`.
///
/// A string is a sequence of bytes, and each byte 0xNN becomes the code point U+00NN (the Latin-1 mapping), so
/// what a peer sent survives losslessly and unambiguously whether or not it is UTF-8 (obs-text is legal in field
/// values and reason phrases, RFC 9110 §5.5). Quote and backslash are escaped, LF, CR and HTAB as `\n`, `\r`, `\t`,
/// every other byte below 0x20 and every byte from 0x7F as `\u00nn`: the output is plain ASCII, and a reader gets the
/// bytes back by taking each code point of the decoded string as one byte (`"caf\u00c3\u00a9"` is `café` in UTF-8).
package enum JSONString {
    /// Appends `bytes` as a quoted JSON string.
    /// - Parameters:
    ///   - bytes: The string's bytes.
    ///   - output: Where the JSON text goes.
    package static func append(_ bytes: some Sequence<UInt8>, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in bytes {
            switch byte {
            case 0x20..<0x7F where byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\"): output.append(byte)
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): appendEscape(byte, to: &output)
            case 0x0A: appendEscape(UInt8(ascii: "n"), to: &output)
            case 0x0D: appendEscape(UInt8(ascii: "r"), to: &output)
            case 0x09: appendEscape(UInt8(ascii: "t"), to: &output)
            default:
                // Controls, DEL and every byte from 0x80: the code point of the same value, escaped.
                let hex: StaticString = "0123456789abcdef"
                appendEscape(UInt8(ascii: "u"), to: &output)
                output.append(UInt8(ascii: "0"))
                output.append(UInt8(ascii: "0"))
                output.append(hex.utf8Start[Int(byte >> 4)])
                output.append(hex.utf8Start[Int(byte & 0x0F)])
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    private static func appendEscape(_ byte: UInt8, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\\"))
        output.append(byte)
    }

    /// Appends the UTF-8 bytes of `text` as a quoted JSON string, by the same byte mapping.
    /// - Parameters:
    ///   - text: The text; the tool's own keys and messages are ASCII, so they read as themselves.
    ///   - output: Where the JSON text goes.
    static func append(_ text: String, to output: inout [UInt8]) {
        append(text.utf8, to: &output)
    }

    /// Appends header fields as `[["name","value"],...]`, from their exact bytes (their decoded strings would
    /// repair obs-text to U+FFFD).
    /// - Parameters:
    ///   - fields: The fields, in order.
    ///   - output: Where the JSON text goes.
    static func appendFields(_ fields: HTTPHeaders, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "["))
        for position in fields.indices {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            output.append(UInt8(ascii: "["))
            fields.withNameBytes(at: position) { span in span.withUnsafeBufferPointer { append($0, to: &output) } }
            output.append(UInt8(ascii: ","))
            fields.withValueBytes(at: position) { span in span.withUnsafeBufferPointer { append($0, to: &output) } }
            output.append(UInt8(ascii: "]"))
        }
        output.append(UInt8(ascii: "]"))
    }

    /// `bytes` as a quoted JSON string.
    /// - Parameter bytes: The string's bytes.
    /// - Returns: The JSON text.
    package static func quoted(_ bytes: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
        append(bytes, to: &output)
        return String(decoding: output, as: UTF8.self)
    }
}
