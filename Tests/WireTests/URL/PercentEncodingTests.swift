import Testing
import Wire

/// `PercentEncoding` through its public API only: the sets, whole UTF-8 escapes, strict decoding, form queries.
struct PercentEncodingTests {
    @Test func queryComponentsEscapeEveryDelimiterButSlashAndQuestionMark() {
        #expect(PercentEncoding.encode("a b/c?d&e=f", allowing: .queryComponent) == "a%20b/c?d%26e%3Df")
        #expect(
            PercentEncoding.encode(":#[]@!$&'()*+,;=", allowing: .queryComponent)
                == "%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D")
        #expect(PercentEncoding.encode("AZaz09-._~", allowing: .queryComponent) == "AZaz09-._~")
    }

    @Test func composedCharactersAndEmojiAreEscapedWholeInUpperCaseHex() {
        #expect(PercentEncoding.encode("café", allowing: .unreserved) == "caf%C3%A9")
        // A man with a skin-tone modifier and a police officer: four code points, never split.
        let emoji = "👴🏻👮🏽"
        let escaped = PercentEncoding.encode(emoji, allowing: .queryComponent)
        #expect(escaped == "%F0%9F%91%B4%F0%9F%8F%BB%F0%9F%91%AE%F0%9F%8F%BD")
        #expect(PercentEncoding.decode(escaped) == emoji)
    }

    @Test func theUnreservedSetEscapesSlashesAndThePathSetKeepsThem() {
        #expect(PercentEncoding.encode("/var/run/docker.sock", allowing: .unreserved) == "%2Fvar%2Frun%2Fdocker.sock")
        #expect(PercentEncoding.encode("/a b/c:d@e;f", allowing: .path) == "/a%20b/c:d@e;f")
    }

    @Test func decodingRefusesMalformedEscapesAndOptionallyNUL() {
        #expect(PercentEncoding.decode("%41%42c") == "ABc")
        #expect(PercentEncoding.decode("%4") == nil)
        #expect(PercentEncoding.decode("%zz") == nil)
        #expect(PercentEncoding.decode("%+f") == nil)
        #expect(PercentEncoding.decode("%FF") == nil, "not UTF-8")
        #expect(PercentEncoding.decodeBytes("%FF%00") == [0xFF, 0x00])
        #expect(PercentEncoding.decode("a%00b") == "a\u{0}b")
        #expect(PercentEncoding.decode("a%00b", allowingNUL: false) == nil)
    }

    @Test func lenientDecodingKeepsMalformedEscapesAsCurlDoes() {
        #expect(PercentEncoding.decodeBytesLeniently(utf8: Array("%41%4".utf8)) == Array("A%4".utf8))
        #expect(PercentEncoding.decodeBytesLeniently(utf8: Array("%zz%2".utf8)) == Array("%zz%2".utf8))
        #expect(PercentEncoding.decodeBytesLeniently(utf8: Array("a%%41".utf8)) == Array("a%A".utf8))
        #expect(PercentEncoding.decodeBytesLeniently(utf8: Array("%".utf8)) == Array("%".utf8))
        // A slice that does not start at zero, as the proxy parser and the tool pass.
        #expect(PercentEncoding.decodeBytes(utf8: Array("u%3Av".utf8)[1...]) == Array(":v".utf8))
        #expect(PercentEncoding.decodeBytes(utf8: Array("a%4".utf8)) == nil)
    }

    @Test func formQueriesKeepOrderAndWriteANilValueAsTheNameAlone() {
        let query = PercentEncoding.formQuery([("q", "1 2"), ("a[b]", "x&y"), ("flag", nil), ("url", "http://h/p?x=1")])
        #expect(query == "q=1%202&a%5Bb%5D=x%26y&flag&url=http%3A//h/p?x%3D1")
        #expect(PercentEncoding.formQuery([]) == "")
    }

    @Test func everyByteRoundTrips() {
        let bytes = (0...255).map { UInt8($0) }
        var escaped: [UInt8] = []
        PercentEncoding.append(bytes, allowing: .unreserved, to: &escaped)
        #expect(escaped.allSatisfy { $0 < 0x80 })
        #expect(PercentEncoding.decodeBytes(String(decoding: escaped, as: UTF8.self)) == bytes)
    }
}
