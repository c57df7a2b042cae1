import FoundationEssentials
import Testing
import Wire
import WireClient

/// The form-style query and its escaping, exactly as AFNetworking writes it.
@Suite struct QueryStringTests {
    @Test func escapingTableIsExact() {
        let table: [(String, String)] = [
            ("[", "%5B"), ("]", "%5D"), ("=", "%3D"), ("&", "%26"), ("+", "%2B"), ("#", "%23"), ("@", "%40"),
            (":", "%3A"), ("!", "%21"), ("$", "%24"), ("'", "%27"), ("(", "%28"), (")", "%29"), ("*", "%2A"),
            (",", "%2C"), (";", "%3B"), (" ", "%20"), ("/", "/"), ("?", "?"), ("%", "%25"), ("\"", "%22"),
            ("\n", "%0A"), ("é", "%C3%A9"),
            ("ABCXYZabcxyz0189-._~", "ABCXYZabcxyz0189-._~"),
        ]
        for (input, expected) in table {
            #expect(percentEscaped(input) == expected, "\(input)")
        }
    }

    @Test func composedCharactersAndEmojiAreNeverSplit() {
        #expect(percentEscaped("👴🏻👮🏽") == "%F0%9F%91%B4%F0%9F%8F%BB%F0%9F%91%AE%F0%9F%8F%BD")
        #expect(percentEscaped("e\u{301}") == "e%CC%81")
        // AF batched 50 UTF-16 units: an emoji sequence straddling unit 50 must come out whole, with no U+FFFD.
        for padding in 45...52 {
            let text = String(repeating: "a", count: padding) + "👴🏻👮🏽" + "🇫🇷" + "b"
            let escaped = percentEscaped(text)
            #expect(!escaped.contains("%EF%BF%BD"))
            #expect(PercentEncoding.decode(escaped) == text)
        }
    }

    @Test func keysAreSortedByCodePointAndNestedNamesAreEscaped() throws {
        #expect(try queryString(from: ["b": "2", "a": "1"]) == "a=1&b=2")
        #expect(try queryString(from: ["a": "1", "_": "2", "B": "3", "9": "4", "10": "5"]) == "10=5&9=4&B=3&_=2&a=1")
        #expect(try queryString(from: ["a": ["b": "c"]]) == "a%5Bb%5D=c")
        #expect(try queryString(from: ["a": [1, 2]]) == "a%5B%5D=1&a%5B%5D=2")
        #expect(try queryString(from: ["a": [["b": 1], ["b": 2]]]) == "a%5B%5D%5Bb%5D=1&a%5B%5D%5Bb%5D=2")
        #expect(try queryString(from: ["a": ["y": ["z": 1], "x": [true]]]) == "a%5Bx%5D%5B%5D=1&a%5By%5D%5Bz%5D=1")
        #expect(
            try queryString(from: ["key with space": "a value/with?slash&amp"]) == "key%20with%20space=a%20value/with?slash%26amp"
        )
    }

    @Test func scalarsAndNullAndEmptyContainers() throws {
        #expect(try queryString(from: ["t": true, "f": false]) == "f=0&t=1")
        #expect(try queryString(from: ["n": nil, "a": "x"]) == "a=x&n")
        #expect(
            try queryString(from: ["i": -42, "d": 1.0, "e": 0.1, "g": -0.0, "h": 1e20, "k": 2.5e-7])
                == "d=1&e=0.1&g=-0&h=1e%2B20&i=-42&k=2.5e-07")
        #expect(try queryString(from: ["big": .double(1e300)]) == "big=1e%2B300")
        #expect(try queryString(from: ["a": [], "b": [:], "c": "x"]) == "c=x")
        #expect(try queryString(from: [:]) == "")
    }

    @Test func topLevelMustBeADictionaryAndDataIsRefused() {
        #expect(throws: ClientError(.requestSerializationFailed)) { try queryString(from: ["a", "b"]) }
        #expect(throws: ClientError(.requestSerializationFailed)) { try queryString(from: "a") }
        #expect(throws: ClientError(.requestSerializationFailed)) { try queryString(from: ["a": .data(Data([1]))]) }
        do {
            _ = try queryString(from: ["a": .data(Data([1]))])
        } catch {
            #expect(error.urlErrorCode == -1016)
        }
    }
}
