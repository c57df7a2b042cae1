import WireClient

/// The tool's writing of a JSON document built in memory (WireClient's `JSONValue`, the one JSON tree of the
/// package): sorted keys and two-space indentation, for summaries small enough to hold whole (`wire bench --json`).
/// A `.double` is written with a fraction or exponent (`2.0`, `1e-05`), so readers see a floating-point number; not
/// finite is `null`, which JSON has no number for. Streams of body bytes use their own writers.
extension JSONValue {
    /// The document, pretty-printed, without a final newline.
    package var text: String {
        var output: [UInt8] = []
        write(to: &output, indent: 0)
        return String(decoding: output, as: UTF8.self)
    }

    private func write(to output: inout [UInt8], indent: Int) {
        switch self {
        case .null: output += "null".utf8
        case .bool(let value): output += (value ? "true" : "false").utf8
        case .int(let value): output += String(value).utf8
        case .double(let value): output += (value.isFinite ? String(value) : "null").utf8
        case .string(let value): JSONString.append(value, to: &output)
        case .array(let values):
            guard !values.isEmpty else {
                output += "[]".utf8
                return
            }
            output += "[\n".utf8
            for (position, value) in values.enumerated() {
                output += repeatElement(UInt8(ascii: " "), count: indent + 2)
                value.write(to: &output, indent: indent + 2)
                output += (position == values.count - 1 ? "\n" : ",\n").utf8
            }
            output += repeatElement(UInt8(ascii: " "), count: indent)
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            guard !members.isEmpty else {
                output += "{}".utf8
                return
            }
            output += "{\n".utf8
            let keys = members.keys.sorted()
            for (position, key) in keys.enumerated() {
                output += repeatElement(UInt8(ascii: " "), count: indent + 2)
                JSONString.append(key, to: &output)
                output += ": ".utf8
                members[key]!.write(to: &output, indent: indent + 2)
                output += (position == keys.count - 1 ? "\n" : ",\n").utf8
            }
            output += repeatElement(UInt8(ascii: " "), count: indent)
            output.append(UInt8(ascii: "}"))
        }
    }
}
