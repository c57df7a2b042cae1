import FoundationEssentials
import Testing
import WireTestSupport
import Wire
import WireClient

/// The JSON response serializer: JSON into `JSONValue` and `Decodable` types.
@Suite struct JSONResponseSerializerTests {
    func serialize(
        _ text: String, status: Int = 200, type: String? = "application/json",
        _ serializer: JSONResponseSerializer = JSONResponseSerializer()
    )
        -> SerializedResponse
    {
        serializer.serialize(response: makeResponse(status, type), data: Data(text.utf8))
    }

    @Test func parsesIntoJSONValue() {
        let result = serialize(
            #"{"a":[1,-2.5,"x\u00e9\ud83d\ude00",true,false,null],"b":{"c":9223372036854775807,"d":9223372036854775808,"e":1e2}}"#
        )
        #expect(result.error == nil)
        #expect(
            result.value as? JSONValue == [
                "a": [1, -2.5, "xé😀", true, false, nil],
                "b": ["c": .int(Int.max), "d": .double(9_223_372_036_854_775_808), "e": .double(100)],
            ])
    }

    @Test func badStatusWithValidJSONGivesBoth() {
        let result = serialize(#"{"error":"nope"}"#, status: 422)
        #expect(result.value as? JSONValue == ["error": "nope"])
        #expect(result.error?.code == .unacceptableStatusCode(422))
        #expect(result.error?.responseData == Data(#"{"error":"nope"}"#.utf8))
    }

    @Test func contentTypeFailureStopsParsing() {
        let result = serialize(#"{"a":1}"#, type: "text/html")
        #expect(result.value == nil)
        #expect(result.error?.code == .unacceptableContentType("text/html"))
        let both = serialize(#"{"a":1}"#, status: 500, type: "text/plain")
        #expect(both.value == nil)
        #expect(both.error?.code == .unacceptableStatusCode(500))
    }

    @Test func emptyAndSingleSpaceBodiesAreNil() {
        for text in ["", " "] {
            let ok = serialize(text)
            #expect(ok.value == nil && ok.error == nil, "\(text.utf8.count) bytes")
            let bad = serialize(text, status: 500)
            #expect(bad.value == nil)
            #expect(bad.error?.code == .unacceptableStatusCode(500))
        }
        let none = JSONResponseSerializer().serialize(response: makeResponse(), data: nil)
        #expect(none.value == nil && none.error == nil)
        for text in ["  ", "\n", " \n", "\t"] {
            #expect(serialize(text).error?.code == .responseSerializationFailed, "\(Array(text.utf8))")
        }
    }

    @Test func malformedJSONIsAParseErrorChainedToValidation() throws {
        let result = serialize(#"{"a":"#)
        #expect(result.value == nil)
        let error = try #require(result.error)
        #expect(error.code == .responseSerializationFailed)
        #expect(error.urlErrorCode == -1017)
        #expect(error.responseData == Data(#"{"a":"#.utf8))
        #expect(error.response?.statusCode == 200)
        #expect(error.failingURL?.absoluteString == "http://h/r")
        let chained = try #require(serialize("nope", status: 500).error)
        #expect(chained.code == .responseSerializationFailed)
        #expect((chained.underlying as? ClientError)?.code == .unacceptableStatusCode(500))
    }

    @Test func strictRFC8259() {
        let invalid = [
            "[1,]", "{\"a\":1,}", "[01]", "[1.]", "[.5]", "[1e]", "[+1]", "[NaN]", "[Infinity]", "[1e400]", "{'a':1}",
            "[\"\u{1}\"]",
            "[\"\\x\"]", "[\"\\ud800\"]", "[\"\\udc00\"]", "[\"\\u12\"]", "[1] x", "{\"a\" 1}", "[tru]", "[nul]", "{1:2}",
            "[\"a]",
        ]
        for text in invalid {
            #expect(serialize(text).error?.code == .responseSerializationFailed, "\(text)")
        }
        #expect(serialize(#" [ 1 , { "a" : [ ] } ] "#).value as? JSONValue == [1, ["a": []]])
        let badUTF8 = JSONResponseSerializer().serialize(response: makeResponse(), data: Data([0x5B, 0x22, 0xFF, 0x22, 0x5D]))
        #expect(badUTF8.error?.code == .responseSerializationFailed)
    }

    @Test func fragmentsOnlyWhenAllowed() {
        #expect(serialize("\"s\"").error?.code == .responseSerializationFailed)
        #expect(serialize("3").error?.code == .responseSerializationFailed)
        let serializer = JSONResponseSerializer(readingOptions: .allowsFragments)
        #expect(serialize("\"s\"", serializer).value as? JSONValue == "s")
        #expect(serialize("3", serializer).value as? JSONValue == 3)
        #expect(serialize("null", serializer).value as? JSONValue == .null)
    }

    @Test func removesKeysWithNullValuesButKeepsArrayNulls() {
        let text = #"{"a":null,"b":[null,{"c":null,"d":1}],"e":{"f":null,"g":[null]}}"#
        let kept = serialize(text)
        #expect(kept.value as? JSONValue == ["a": nil, "b": [nil, ["c": nil, "d": 1]], "e": ["f": nil, "g": [nil]]])
        let removed = serialize(text, JSONResponseSerializer(removesKeysWithNullValues: true))
        #expect(removed.value as? JSONValue == ["b": [nil, ["d": 1]], "e": ["g": [nil]]])
    }

    @Test func utf16AndUTF32AreDetected() {
        let text = #"{"k":"é"}"#
        let expected: JSONValue = ["k": "é"]
        var utf16BE: [UInt8] = []
        var utf16LE: [UInt8] = []
        for unit in text.utf16 {
            utf16BE += [UInt8(unit >> 8), UInt8(unit & 0xFF)]
            utf16LE += [UInt8(unit & 0xFF), UInt8(unit >> 8)]
        }
        var utf32LE: [UInt8] = []
        for scalar in text.unicodeScalars { utf32LE += withUnsafeBytes(of: scalar.value.littleEndian, Array.init) }
        for bytes in [
            utf16BE, utf16LE, [0xFE, 0xFF] + utf16BE, [0xFF, 0xFE] + utf16LE, utf32LE, [0xEF, 0xBB, 0xBF] + Array(text.utf8),
        ] {
            let result = JSONResponseSerializer().serialize(response: makeResponse(), data: Data(bytes))
            #expect(result.value as? JSONValue == expected, "\(bytes.prefix(4))")
        }
        #expect(
            JSONResponseSerializer().serialize(response: makeResponse(), data: Data(utf16LE.dropLast())).error?.code
                == .responseSerializationFailed)
    }

    @Test func deepNestingFailsWithoutExhaustingTheStack() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(serialize(deep).error?.code == .responseSerializationFailed)
        let fine = String(repeating: "[", count: 256) + String(repeating: "]", count: 256)
        #expect(serialize("[" + fine + "]").error?.code == .responseSerializationFailed)
        #expect(serialize(fine).error == nil)
    }

    @Test func truncationsAndMutationsNeverTrap() {
        let text = Array(#"{"a":[1,2.5e-3,"\u00e9\ud83d\ude00",{"b":null}],"c":true}"#.utf8)
        for length in 0...text.count {
            _ = JSONResponseSerializer().serialize(response: makeResponse(), data: Data(text.prefix(length)))
        }
        var generator = SplitMix64(seed: 13)
        for _ in 0..<3_000 {
            var bytes = text
            for _ in 0..<1 + Int(generator.next() % 4) {
                bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
            }
            _ = JSONResponseSerializer(readingOptions: .allowsFragments).serialize(response: makeResponse(), data: Data(bytes))
        }
    }

    struct User: Decodable, Sendable, Equatable {
        var name: String
        var age: Int
    }

    @Test func decodableSerializer() {
        let serializer = DecodableResponseSerializer(User.self)
        let ok = serializer.serialize(response: makeResponse(), data: Data(#"{"name":"a","age":3}"#.utf8))
        #expect(ok.value as? User == User(name: "a", age: 3))
        #expect(ok.error == nil)
        let bad = serializer.serialize(response: makeResponse(500), data: Data(#"{"name":"a","age":3}"#.utf8))
        #expect(bad.value as? User == User(name: "a", age: 3))
        #expect(bad.error?.code == .unacceptableStatusCode(500))
        let mismatch = serializer.serialize(response: makeResponse(), data: Data(#"{"name":"a"}"#.utf8))
        #expect(mismatch.value == nil)
        #expect(mismatch.error?.code == .responseSerializationFailed)
        #expect(mismatch.error?.underlying is DecodingError)
        #expect(serializer.serialize(response: makeResponse(), data: Data(" ".utf8)).value == nil)
        #expect(
            serializer.serialize(response: makeResponse(200, "text/html"), data: Data("{}".utf8)).error?.code
                == .unacceptableContentType("text/html"))
        let snake = DecodableResponseSerializer(User.self) {
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            return decoder
        }
        #expect(
            snake.serialize(response: makeResponse(), data: Data(#"{"name":"b","age":1}"#.utf8)).value as? User
                == User(name: "b", age: 1))
    }
}
