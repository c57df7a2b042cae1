import FoundationEssentials
import Testing
import Wire
import WireClient

/// §2.2 items 2–3 and §16 item 2: base-URL normalisation and RFC 3986 §5.2 resolution.
@Suite struct URLResolutionTests {
    static let rfcBase = "http://a/b/c/d;p?q"

    /// RFC 3986 §5.4.1, every normal example.
    static let normal: [(String, String)] = [
        ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
        ("/g", "http://a/g"), ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
        ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"),
        (";x", "http://a/b/c/;x"), ("g;x", "http://a/b/c/g;x"), ("g;x?y#s", "http://a/b/c/g;x?y#s"),
        ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"), ("..", "http://a/b/"),
        ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../", "http://a/"),
        ("../../g", "http://a/g"),
    ]

    /// RFC 3986 §5.4.2, every abnormal example (strict parser: `http:g` keeps its scheme).
    static let abnormal: [(String, String)] = [
        ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"),
        ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."),
        ("..g", "http://a/b/c/..g"), ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"),
        ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"), ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
        ("g;x=1/../y", "http://a/b/c/y"), ("g?y/./x", "http://a/b/c/g?y/./x"), ("g?y/../x", "http://a/b/c/g?y/../x"),
        ("g#s/./x", "http://a/b/c/g#s/./x"), ("g#s/../x", "http://a/b/c/g#s/../x"), ("http:g", "http:g"),
    ]

    @Test(arguments: normal + abnormal)
    func rfc3986Examples(reference: String, expected: String) throws {
        let base = try #require(URIReference(parsing: Self.rfcBase))
        let parsed = try #require(URIReference(parsing: reference))
        #expect(parsed.resolved(against: base).description == expected)
        // The URL made from the result is exactly that text.
        #expect(URL(string: parsed.resolved(against: base).description)?.absoluteString == expected)
    }

    @Test func removeDotSegmentsFollowsTheRFCWalkthrough() {
        #expect(URIReference.removingDotSegments("/a/b/c/./../../g") == "/a/g")
        #expect(URIReference.removingDotSegments("mid/content=5/../6") == "mid/6")
        #expect(URIReference.removingDotSegments("/..") == "/")
        #expect(URIReference.removingDotSegments("") == "")
    }

    @Test func parsingSplitsTheFiveComponents() throws {
        let full = try #require(URIReference(parsing: "http://u@h:8/p/q?x=1#f"))
        #expect(full == URIReference(scheme: "http", authority: "u@h:8", path: "/p/q", query: "x=1", fragment: "f"))
        let emptyParts = try #require(URIReference(parsing: "//?#"))
        #expect(emptyParts == URIReference(authority: "", path: "", query: "", fragment: ""))
        #expect(URIReference(parsing: "a/b:c") == URIReference(path: "a/b:c"))
        // A colon in the first segment that is not a scheme is no relative reference (RFC 3986 §4.2).
        #expect(URIReference(parsing: "1a:b") == nil)
        #expect(URIReference(parsing: ":x") == nil)
    }

    /// AFHTTPSessionManager.h's examples, with `foo/` as RFC 3986 (and NSURL) give it.
    @Test(arguments: [
        ("foo", "http://example.com/v1/foo"), ("foo?bar=baz", "http://example.com/v1/foo?bar=baz"),
        ("/foo", "http://example.com/foo"), ("/foo/", "http://example.com/foo/"), ("foo/", "http://example.com/v1/foo/"),
        ("http://example2.com/", "http://example2.com/"), ("", "http://example.com/v1/"),
    ])
    func afHeaderExamples(reference: String, expected: String) throws {
        let base = try BaseURL("http://example.com/v1/")
        #expect(try base.resolve(reference).absoluteString == expected)
    }

    @Test func baseGetsATerminalSlashOnlyOnANonEmptyPath() throws {
        #expect(try BaseURL("http://example.com/v1").url.absoluteString == "http://example.com/v1/")
        #expect(try BaseURL("http://example.com/v1/").url.absoluteString == "http://example.com/v1/")
        #expect(try BaseURL("http://h/v1?x=1").url.absoluteString == "http://h/v1/?x=1")
        #expect(try BaseURL("http://h").url.absoluteString == "http://h")
        #expect(try BaseURL("http://h?x=1").url.absoluteString == "http://h?x=1")
        // Without the slash `foo` would replace `v1`; with it, it goes below.
        #expect(try BaseURL("http://example.com/v1").resolve("foo").absoluteString == "http://example.com/v1/foo")
        // An empty path merges as "/" (RFC 3986 §5.2.3).
        #expect(try BaseURL("http://h").resolve("foo").absoluteString == "http://h/foo")
        #expect(try BaseURL("http://h").resolve("").absoluteString == "http://h")
        // The base's query is kept for an empty or fragment-only reference and replaced otherwise.
        #expect(try BaseURL("http://h/v1?x=1").resolve("").absoluteString == "http://h/v1/?x=1")
        #expect(try BaseURL("http://h/v1?x=1").resolve("?y=2").absoluteString == "http://h/v1/?y=2")
        #expect(try BaseURL("http://h/v1?x=1").resolve("a").absoluteString == "http://h/v1/a")
    }

    @Test func emptyReferenceDropsTheBaseFragment() throws {
        let base = try BaseURL("http://h/v1/?q#top")
        #expect(try base.resolve("").absoluteString == "http://h/v1/?q")
        #expect(try base.resolve("#s").absoluteString == "http://h/v1/?q#s")
        // The fragment is never part of what is sent: the path and query alone.
        let url = try base.resolve("a#s")
        #expect(url.path(percentEncoded: true) == "/v1/a" && url.query(percentEncoded: true) == nil)
    }

    @Test func prePassEscapesWhatIsNotAURICharacter() throws {
        #expect(BaseURL.escapingDisallowedBytes("a b") == "a%20b")
        #expect(BaseURL.escapingDisallowedBytes("café") == "caf%C3%A9")
        #expect(BaseURL.escapingDisallowedBytes("100%") == "100%25")
        #expect(BaseURL.escapingDisallowedBytes("%zz%4") == "%25zz%254")
        #expect(BaseURL.escapingDisallowedBytes("%41%c3%A9") == "%41%c3%A9")
        #expect(BaseURL.escapingDisallowedBytes(#"a"<>\^`{|}"#) == "a%22%3C%3E%5C%5E%60%7B%7C%7D")
        let reserved = ":/?#[]@!$&'()*+,;=-._~AZaz09"
        #expect(BaseURL.escapingDisallowedBytes(reserved) == reserved)
        let base = try BaseURL("http://example.com/v1/")
        #expect(try base.resolve("a b/é?q=x y&p=50%").absoluteString == "http://example.com/v1/a%20b/%C3%A9?q=x%20y&p=50%25")
        #expect(try BaseURL("http://h/a b").url.absoluteString == "http://h/a%20b/")
    }

    @Test func unparsableBaseIsBadURL() {
        for text in ["", "example.com/v1", "/v1", "1http://h/", "http:/h", "http://", "http:h"] {
            #expect(throws: ClientError(.badURL), "\(text)") { try BaseURL(text) }
        }
        #expect(throws: ClientError(.badURL)) { try BaseURL("http://h/").resolve("1a:b") }
    }
}
