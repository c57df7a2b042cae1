import Foundation
import Testing
import WireTool
import WireClient

/// The small pieces that replace Foundation in the `wire` tool, checked against Foundation itself.
struct ToolSupportTests {
    @Test func fixedPointMatchesPrintf() {
        var values: [Double] = [
            0, -0.0, 1, -1, 0.5, 1.5, 2.5, 0.004, 0.005, 0.006, 9.995, 99.999, 123_456.789, -3.14159,
            1e-9, 1e12, 1_378.4, 0.47, 21.0 / 3,
        ]
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<2000 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            values.append(Double(seed >> 11) / Double(1 << 53) * pow(10, Double(seed % 12)) - 50)
        }
        for value in values {
            for decimals in 0...3 {
                let expected = String(format: "%.\(decimals)f", value)
                let actual = DecimalText.fixed(value, decimals: decimals)
                // Away from a halfway case the digits are printf's exactly.
                let scaled = value.magnitude * pow(10, Double(decimals))
                let nearHalf = abs(scaled - scaled.rounded(.down) - 0.5) < 1e-6
                if !nearHalf { #expect(actual == expected, "\(value) with \(decimals) decimals") }
            }
        }
        #expect(DecimalText.fixed(.nan, decimals: 2) == "nan")
        #expect(DecimalText.fixed(-.infinity, decimals: 2) == "-inf")
        #expect(DecimalText.fixed(-0.001, decimals: 2) == "-0.00")
    }

    @Test func shortDropsTrailingZeros() {
        #expect(DecimalText.short(0.25) == "0.25")
        #expect(DecimalText.short(2) == "2")
        #expect(DecimalText.short(0.1 + 0.2) == "0.3")
        #expect(DecimalText.short(0.000001) == "0.000001")
        #expect(DecimalText.short(-1.5) == "-1.5")
    }

    @Test func base64KnownVectors() {
        // RFC 4648 §10.
        let vectors = [
            "": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
            "foobar": "Zm9vYmFy",
        ]
        for (plain, encoded) in vectors { #expect(Base64Encoder.encode(Array(plain.utf8)) == encoded) }
        #expect(Base64Encoder.encode([0xFB, 0xFF, 0xBF]) == "+/+/")
    }

    @Test func jsonStringMapsEveryByteToTheCodePointOfTheSameValue() throws {
        var bytes: [UInt8] = []
        JSONString.append([0x22, 0x5C, 0x0A, 0x0D, 0x09, 0x00, 0x1F, 0x20, 0x7E, 0x7F, 0x80, 0xC3, 0xA9, 0xFF], to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == #""\"\\\n\r\t\u0000\u001f ~\u007f\u0080\u00c3\u00a9\u00ff""#)
        // All 256 bytes round-trip through a JSON reader, one code point each.
        let all = (0...255).map { UInt8($0) }
        let decoded = try #require(
            try JSONSerialization.jsonObject(with: Data(JSONString.quoted(all).utf8), options: .fragmentsAllowed) as? String)
        #expect(decoded.unicodeScalars.map { UInt8($0.value) } == all)
    }

    @Test func jsonValueIsSortedAndParses() throws {
        let value = JSONValue.object([
            "b": .array([.int(1), .double(2), .double(.infinity), .null]),
            "a": .string("q\"\\\n\u{1}é"),
            "c": .object([:]),
            "d": .bool(true),
            "e": .array([]),
        ])
        let text = value.text
        #expect(text.firstRange(of: "\"a\"")!.lowerBound < text.firstRange(of: "\"b\"")!.lowerBound)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        // JSONString's one mapping: each UTF-8 byte of "é" (0xC3 0xA9) is the code point of the same value.
        #expect(parsed["a"] as? String == "q\"\\\n\u{1}\u{C3}\u{A9}")
        #expect(text.contains(#""q\"\\\n\u0001\u00c3\u00a9""#))
        let array = try #require(parsed["b"] as? [Any])
        #expect(array[0] as? Int == 1)
        #expect(array[1] as? Double == 2)
        #expect(array[2] is NSNull && array[3] is NSNull)
        #expect(parsed["d"] as? Bool == true)
        #expect(JSONValue.double(2).text == "2.0")
    }

    @Test func trimsOptionalWhitespaceOnly() {
        #expect(" \t a b \t".trimmingOptionalWhitespace == "a b")
        #expect("  ".trimmingOptionalWhitespace == "")
        #expect("\u{A0}x".trimmingOptionalWhitespace == "\u{A0}x")
        #expect("ab".padded(to: 4) == "ab  ")
        #expect("abcdef".padded(to: 4) == "abcdef")
    }
}
