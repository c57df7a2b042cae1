import Foundation
import Testing
import WireTool

/// The streaming base64 of `--json-summary` agrees with Foundation's however the input is split into chunks.
struct Base64EncoderTests {
    @Test(arguments: [0, 1, 2, 3, 4, 5, 100, 1000])
    func matchesFoundationForEverySplit(length: Int) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let expected = Data(bytes).base64EncodedString()
        for chunkSize in [1, 2, 3, 4, 7, 64] {
            var encoder = Base64Encoder()
            var output: [UInt8] = []
            var start = 0
            while start < bytes.count {
                let end = min(start + chunkSize, bytes.count)
                bytes[start..<end].withUnsafeBufferPointer { encoder.encode($0, into: &output) }
                start = end
            }
            encoder.finish(into: &output)
            #expect(String(decoding: output, as: UTF8.self) == expected, "length \(length), chunks of \(chunkSize)")
        }
    }
}
