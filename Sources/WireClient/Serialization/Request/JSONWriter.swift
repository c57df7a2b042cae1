/// Writes `ParameterValue`s as JSON text the way NSJSONSerialization does, with object keys sorted.
struct JSONWriter {
    /// Why a value cannot be written.
    enum Failure: Error, Equatable {
        /// NaN or an infinity, which JSON cannot represent.
        case nonFiniteNumber(Double)
        /// Bytes, which JSON cannot represent.
        case data
    }

    /// Indent nested values by two spaces, one member or element per line, `" : "` between name and value.
    var prettyPrinted = false
    /// Write `/` as is rather than `\/`.
    var escapesSlashes = true

    /// The UTF-8 text of `value`.
    func write(_ value: ParameterValue) throws(Failure) -> [UInt8] {
        var output: [UInt8] = []
        try write(value, depth: 0, into: &output)
        return output
    }

    private func write(_ value: ParameterValue, depth: Int, into output: inout [UInt8]) throws(Failure) {
        switch value {
        case .null:
            output += Array("null".utf8)
        case .bool(let flag):
            output += Array((flag ? "true" : "false").utf8)
        case .int(let number):
            output += Array(String(number).utf8)
        case .double(let number):
            guard number.isFinite else { throw .nonFiniteNumber(number) }
            output += Array(NumberText.text(number).utf8)
        case .string(let text):
            writeString(text, into: &output)
        case .data:
            throw .data
        case .array(let elements):
            guard !elements.isEmpty else {
                output += Array("[]".utf8)
                return
            }
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(depth: depth + 1, into: &output)
                try write(element, depth: depth + 1, into: &output)
            }
            newline(depth: depth, into: &output)
            output.append(UInt8(ascii: "]"))
        case .dictionary(let members):
            guard !members.isEmpty else {
                output += Array("{}".utf8)
                return
            }
            output.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(depth: depth + 1, into: &output)
                writeString(key, into: &output)
                output += prettyPrinted ? Array(" : ".utf8) : [UInt8(ascii: ":")]
                if let member = members[key] { try write(member, depth: depth + 1, into: &output) }
            }
            newline(depth: depth, into: &output)
            output.append(UInt8(ascii: "}"))
        }
    }

    private func newline(depth: Int, into output: inout [UInt8]) {
        guard prettyPrinted else { return }
        output.append(UInt8(ascii: "\n"))
        output += repeatElement(UInt8(ascii: " "), count: 2 * depth)
    }

    /// A string literal: `"` and `\` escaped, `/` as `\/` unless disabled, `\b \f \n \r \t`, other control characters
    /// as `\u00xx`, everything else (non-ASCII included) raw UTF-8.
    private func writeString(_ text: String, into output: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): output += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case UInt8(ascii: "/") where escapesSlashes: output += [UInt8(ascii: "\\"), UInt8(ascii: "/")]
            case 0x08: output += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: output += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0A: output += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: output += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: output += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x00..<0x20:
                output += Array("\\u00".utf8)
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
