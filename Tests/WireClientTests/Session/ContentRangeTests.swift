import Testing
import WireClient
import WireTestSupport

/// `Content-Range` parsing (RFC 9110 §14.4): the three forms, and nil (never a trap) for anything else.
struct ContentRangeTests {
    @Test(
        arguments: [
            ("bytes 0-499/1234", 0...499, 1234),
            ("bytes 500-1233/1234", 500...1233, 1234),
            ("BYTES 7-7/8", 7...7, 8),
            ("  bytes 21010-47021/47022\t", 21010...47021, 47022),
        ] as [(String, ClosedRange<Int64>, Int64)])
    func aSatisfiedRangeWithItsCompleteLength(text: String, range: ClosedRange<Int64>, complete: Int64) throws {
        let parsed = try #require(ContentRange(text))
        #expect(parsed.range == range)
        #expect(parsed.completeLength == complete)
    }

    @Test func anUnknownCompleteLengthIsNil() throws {
        let parsed = try #require(ContentRange("bytes 42-1233/*"))
        #expect(parsed.range == 42...1233)
        #expect(parsed.completeLength == nil)
        #expect(parsed.description == "bytes 42-1233/*")
    }

    @Test func theUnsatisfiedFormOfA416() throws {
        let parsed = try #require(ContentRange("bytes */1234"))
        #expect(parsed.range == nil)
        #expect(parsed.completeLength == 1234)
        #expect(parsed == ContentRange(unsatisfiedOf: 1234))
        #expect(parsed.description == "bytes */1234")
    }

    @Test(arguments: [
        "", "bytes", "bytes ", "bytes */*", "bytes 5-4/10", "bytes 0-10/10", "bytes 0-9/", "bytes 0-/10", "bytes -9/10",
        "bytes 0-9", "bytes=0-9/10", "bits 0-9/10", "bytes 0 - 9/10", "bytes +0-9/10", "bytes 0-9/-10", "bytes 0x1-9/10",
        "bytes 0-99999999999999999999/*", "bytes 0-9/99999999999999999999", "bytes 0-9/10/11", "bytes ０-9/10",
        "bytes 1-2,3-4/10", "bytes  0-9/10",
    ])
    func malformedValuesAreNil(text: String) {
        #expect(ContentRange(text) == nil)
    }

    @Test func theLargestPositionsParse() throws {
        let max = Int64.max
        let parsed = try #require(ContentRange("bytes 0-\(max - 1)/\(max)"))
        #expect(parsed.range?.upperBound == max - 1)
        #expect(ContentRange("bytes 0-\(max)/*")?.range?.upperBound == max)
    }

    /// Random bytes and random mutations of a valid value: a value or nil, never a trap.
    @Test func randomInputNeverTraps() {
        var random = SplitMix64(seed: 0x5EED_C0DE)
        let alphabet = Array("bytes */-0123456789 \t,=xB".utf8)
        let valid = Array("bytes 100-199/200".utf8)
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...24, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            } else {
                bytes = valid
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let at = Int.random(in: 0..<bytes.count, using: &random)
                    bytes[at] = UInt8.random(in: 0...255, using: &random)
                }
            }
            let parsed = ContentRange(String(decoding: bytes, as: UTF8.self))
            if let parsed, let range = parsed.range, let complete = parsed.completeLength {
                #expect(range.upperBound < complete)
            }
        }
    }
}
