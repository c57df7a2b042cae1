/// Standard base64 (RFC 4648 §4, with padding) over a stream of chunks: each chunk is encoded as it comes, holding
/// back at most two bytes that do not yet fill a 3-byte group, so a body of any size is encoded in flat memory.
package struct Base64Encoder {
    private static let alphabet: [UInt8] =
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private var carry: (UInt8, UInt8) = (0, 0)
    private var carried = 0

    package init() {}

    /// `bytes` encoded whole, padded.
    package static func encode(_ bytes: [UInt8]) -> String {
        var encoder = Base64Encoder()
        var output: [UInt8] = []
        bytes.withUnsafeBufferPointer { encoder.encode($0, into: &output) }
        encoder.finish(into: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Encodes `bytes` after whatever was carried, appending to `output`.
    package mutating func encode(_ bytes: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        var index = 0
        output.reserveCapacity(output.count + (bytes.count + carried) / 3 * 4 + 4)
        // Complete the carried group first; afterwards either nothing is carried or the chunk is used up.
        if carried == 1 && index < bytes.count {
            carry.1 = bytes[index]
            carried = 2
            index += 1
        }
        if carried == 2 && index < bytes.count {
            appendGroup(carry.0, carry.1, bytes[index], into: &output)
            carried = 0
            index += 1
        }
        while index + 3 <= bytes.count {
            appendGroup(bytes[index], bytes[index + 1], bytes[index + 2], into: &output)
            index += 3
        }
        while index < bytes.count {
            if carried == 0 { carry.0 = bytes[index] } else { carry.1 = bytes[index] }
            carried += 1
            index += 1
        }
    }

    /// Encodes the carried bytes with padding; the encoder is then empty.
    package mutating func finish(into output: inout [UInt8]) {
        let table = Self.alphabet
        switch carried {
        case 1:
            output += [
                table[Int(carry.0 >> 2)], table[Int((carry.0 & 0x03) << 4)],
                UInt8(ascii: "="), UInt8(ascii: "="),
            ]
        case 2:
            output += [
                table[Int(carry.0 >> 2)], table[Int((carry.0 & 0x03) << 4 | carry.1 >> 4)],
                table[Int((carry.1 & 0x0F) << 2)], UInt8(ascii: "="),
            ]
        default:
            break
        }
        carried = 0
    }

    private func appendGroup(_ a: UInt8, _ b: UInt8, _ c: UInt8, into output: inout [UInt8]) {
        let table = Self.alphabet
        output.append(table[Int(a >> 2)])
        output.append(table[Int((a & 0x03) << 4 | b >> 4)])
        output.append(table[Int((b & 0x0F) << 2 | c >> 6)])
        output.append(table[Int(c & 0x3F)])
    }
}
