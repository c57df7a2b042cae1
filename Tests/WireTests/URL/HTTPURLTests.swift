import Testing
import Wire

/// `HTTPURL`'s parser: what it keeps of each part of an absolute URL, and the error it names for each way one is wrong.
struct HTTPURLTests {
    struct Parsed: Sendable, CustomTestStringConvertible {
        let text: String
        let scheme: String
        let host: String
        let port: Int?
        let target: String
        let hostHeader: String
        var testDescription: String { text }
    }

    static let valid: [Parsed] = [
        Parsed(
            text: "http://example.com", scheme: "http", host: "example.com", port: 80, target: "/",
            hostHeader: "example.com"),
        Parsed(
            text: "HTTP://Example.COM:8080/a?b#frag", scheme: "http", host: "example.com", port: 8080, target: "/a?b",
            hostHeader: "example.com:8080"),
        Parsed(
            text: "hTtPs://example.com?x=1", scheme: "https", host: "example.com", port: 443, target: "/?x=1",
            hostHeader: "example.com"),
        Parsed(
            text: "https://user:pw@host.example:444/p", scheme: "https", host: "host.example", port: 444, target: "/p",
            hostHeader: "host.example:444"),
        Parsed(text: "http://a@b@c/", scheme: "http", host: "c", port: 80, target: "/", hostHeader: "c"),
        Parsed(
            text: "http://[::1]:8080/x", scheme: "http", host: "::1", port: 8080, target: "/x", hostHeader: "[::1]:8080"),
        Parsed(text: "https://[FE80::1]", scheme: "https", host: "fe80::1", port: 443, target: "/", hostHeader: "[fe80::1]"),
        Parsed(text: "http://host:/x", scheme: "http", host: "host", port: 80, target: "/x", hostHeader: "host"),
        Parsed(
            text: "http://host:000000000000000000000080/", scheme: "http", host: "host", port: 80, target: "/",
            hostHeader: "host"),
        Parsed(text: "http://h:65535", scheme: "http", host: "h", port: 65535, target: "/", hostHeader: "h:65535"),
        Parsed(text: "http://h:1", scheme: "http", host: "h", port: 1, target: "/", hostHeader: "h:1"),
        Parsed(text: "https://h:80", scheme: "https", host: "h", port: 80, target: "/", hostHeader: "h:80"),
        // Longer than a small string (15 bytes), with and without brackets.
        Parsed(
            text: "http://a-rather-long-host-name.example:10000/x", scheme: "http", host: "a-rather-long-host-name.example",
            port: 10000, target: "/x", hostHeader: "a-rather-long-host-name.example:10000"),
        Parsed(
            text: "http://[2001:db8:85a3::8a2e:370:7334]:8443/", scheme: "http", host: "2001:db8:85a3::8a2e:370:7334",
            port: 8443, target: "/", hostHeader: "[2001:db8:85a3::8a2e:370:7334]:8443"),
        Parsed(
            text: "http://example.com/a#b?c", scheme: "http", host: "example.com", port: 80, target: "/a",
            hostHeader: "example.com"),
        Parsed(
            text: "http://example.com#frag", scheme: "http", host: "example.com", port: 80, target: "/", hostHeader: "example.com"
        ),
        Parsed(
            text: "http://h/caf\u{E9}/\u{1F600}?q=\u{E9}", scheme: "http", host: "h", port: 80,
            target: "/caf\u{E9}/\u{1F600}?q=\u{E9}", hostHeader: "h"),
        Parsed(text: "http://h?\u{E9}", scheme: "http", host: "h", port: 80, target: "/?\u{E9}", hostHeader: "h"),
        Parsed(
            text: "http+unix://%2Fvar%2Frun%2Fdocker.sock/v1/info", scheme: "http+unix", host: "/var/run/docker.sock",
            port: nil, target: "/v1/info", hostHeader: "localhost"),
        Parsed(
            text: "HTTP+UNIX://.%2Fs.sock", scheme: "http+unix", host: "./s.sock", port: nil, target: "/", hostHeader: "localhost"
        ),
    ]

    @Test(arguments: valid) func keepsEachPart(_ expected: Parsed) throws {
        let url = try HTTPURL(expected.text)
        #expect(url.scheme == expected.scheme)
        #expect(url.host == expected.host)
        #expect(url.port == expected.port)
        #expect(url.target == expected.target)
        #expect(url.hostHeader == expected.hostHeader)
        #expect(url.isTLS == (expected.scheme == "https"))
        #expect(try HTTPURL(url.description) == url, "its text reads back as the same URL")
    }

    static let invalid: [(String, String)] = [
        ("example.com", "no scheme"),
        ("http:/x", "no scheme"),
        ("://x", "no scheme"),
        ("ht tp://x", "no scheme"),
        ("ftp://x/", "unsupported scheme ftp"),
        ("FTP://x", "unsupported scheme ftp"),
        ("httpx://x", "unsupported scheme httpx"),
        ("http://", "no host"),
        ("http:///path", "no host"),
        ("http://user@/p", "no host"),
        ("http://:80/", "no host"),
        ("http://[]/", "no host"),
        ("http://[::1/", "unclosed IPv6 bracket"),
        ("http://[::1]x/", "junk after IPv6 literal"),
        ("http://host:99999/", "invalid port 99999"),
        ("http://host:65536", "invalid port 65536"),
        ("http://host:0/", "invalid port 0"),
        ("http://host:8a/", "invalid port 8a"),
        ("http://host:-1/", "invalid port -1"),
        ("http://a b/", "invalid character in host"),
        ("http://h\\x/", "invalid character in host"),
        ("http://caf\u{E9}.example/", "invalid character in host"),
        ("http://h/a b", "spaces or control characters in the path"),
        ("http://h/a\u{7F}", "spaces or control characters in the path"),
        ("http://h?a\tb", "spaces or control characters in the path"),
        ("http+unix://relative/x", "the host of an http+unix URL must be a percent-encoded socket path"),
        ("http+unix://%2/x", "the host of an http+unix URL must be a percent-encoded socket path"),
    ]

    @Test(arguments: invalid) func namesWhatIsWrong(_ text: String, _ why: String) {
        #expect {
            _ = try HTTPURL(text)
        } throws: { error in
            guard let error = error as? HTTPClientError else { return false }
            return error.code == .invalidURL && error.detail == "\(why): \(text)"
        }
    }

    /// A URL is a value: parsed twice it is equal and hashes alike, and URLs that differ in any part differ, whether or
    /// not they were parsed from one text (the parts are shared by copies).
    @Test func comparesAndHashesByItsParts() throws {
        let one = try HTTPURL("http://example.com:8080/a?b")
        let again = try HTTPURL("http://EXAMPLE.com:8080/a?b")
        let copy = one
        #expect(one == again && one == copy)
        #expect(one.hashValue == again.hashValue)
        #expect(Set([one, again, copy]).count == 1)
        let others = try [
            "https://example.com:8080/a?b", "http://example.org:8080/a?b", "http://example.com:8081/a?b",
            "http://example.com:8080/a?c", "http://example.com/a?b",
        ].map(HTTPURL.init)
        for other in others { #expect(other != one, "\(other)") }
        #expect(Set(others + [one]).count == others.count + 1)
    }

    @Test func resolvesReferencesAgainstItself() throws {
        let base = try HTTPURL("https://Example.com:8443/a/b?q")
        #expect(try base.resolving("c").description == "https://example.com:8443/a/c")
        #expect(try base.resolving("/d?e").description == "https://example.com:8443/d?e")
        #expect(try base.resolving("?z").description == "https://example.com:8443/a/b?z")
        #expect(try base.resolving("//other.example/x").description == "https://other.example/x")
        #expect(try base.resolving("HTTP://third.example").description == "http://third.example/")
    }
}
