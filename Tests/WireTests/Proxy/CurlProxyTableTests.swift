import Testing
import Wire

/// The route, the `no_proxy` matcher and proxy URL parsing against tables whose answers curl 7.88.1 gave: each row
/// was run through `curl -v` with loopback proxies (and `--connect-to` keeping direct connections on loopback), and
/// its expectation is what curl connected to or refused.
struct CurlProxyTableTests {
    struct RouteCase: Sendable, CustomTestStringConvertible {
        var url: String
        var environment: [String: String]
        var noProxy: String?
        var proxy: String?
        var expected: String?
        init(_ url: String, _ environment: [String: String], noProxy: String?, proxy: String?, expected: String?) {
            self.url = url
            self.environment = environment
            self.noProxy = noProxy
            self.proxy = proxy
            self.expected = expected
        }
        var testDescription: String {
            "\(url) \(environment) noproxy=\(noProxy ?? "-") x=\(proxy ?? "-") → \(expected ?? "direct")"
        }
    }

    struct MatchCase: Sendable, CustomTestStringConvertible {
        var host: String
        var list: String
        var bypasses: Bool
        init(_ host: String, _ list: String, _ bypasses: Bool) {
            self.host = host
            self.list = list
            self.bypasses = bypasses
        }
        var testDescription: String { "\(host) in '\(list)' → \(bypasses ? "direct" : "proxy")" }
    }

    struct ProxyURLCase: Sendable, CustomTestStringConvertible {
        enum Expected: Sendable {
            case authority(String)
            case unsupportedScheme
            case malformed
        }
        var text: String
        var expected: Expected
        init(_ text: String, _ expected: Expected) {
            self.text = text
            self.expected = expected
        }
        var testDescription: String { "\(text) → \(expected)" }
    }

    /// (URL, environment, --noproxy, -x) → the proxy's address, or nil for direct: each row as curl 7.88.1 took it.
    static let routes: [RouteCase] = [
        RouteCase("http://example.com/", [:], noProxy: nil, proxy: nil, expected: nil),
        RouteCase("http://example.com/", ["http_proxy": "127.0.0.11:9"], noProxy: nil, proxy: nil, expected: "127.0.0.11:9"),
        RouteCase("http://example.com/", ["HTTP_PROXY": "127.0.0.12:9"], noProxy: nil, proxy: nil, expected: nil),
        RouteCase(
            "http://example.com/", ["HTTP_PROXY": "127.0.0.12:9", "all_proxy": "127.0.0.15:9"], noProxy: nil, proxy: nil,
            expected: "127.0.0.15:9"),
        RouteCase(
            "http://example.com/", ["http_proxy": "", "all_proxy": "127.0.0.15:9"], noProxy: nil, proxy: nil,
            expected: "127.0.0.15:9"),
        RouteCase(
            "http://example.com/", ["http_proxy": "127.0.0.11:9", "all_proxy": "127.0.0.15:9"], noProxy: nil, proxy: nil,
            expected: "127.0.0.11:9"),
        RouteCase("http://example.com/", ["https_proxy": "127.0.0.13:9"], noProxy: nil, proxy: nil, expected: nil),
        RouteCase("https://example.com/", ["https_proxy": "127.0.0.13:9"], noProxy: nil, proxy: nil, expected: "127.0.0.13:9"),
        RouteCase("https://example.com/", ["HTTPS_PROXY": "127.0.0.14:9"], noProxy: nil, proxy: nil, expected: "127.0.0.14:9"),
        RouteCase(
            "https://example.com/", ["https_proxy": "127.0.0.13:9", "HTTPS_PROXY": "127.0.0.14:9"], noProxy: nil, proxy: nil,
            expected: "127.0.0.13:9"),
        RouteCase(
            "https://example.com/", ["https_proxy": "", "HTTPS_PROXY": "127.0.0.14:9"], noProxy: nil, proxy: nil,
            expected: "127.0.0.14:9"),
        RouteCase("https://example.com/", ["http_proxy": "127.0.0.11:9"], noProxy: nil, proxy: nil, expected: nil),
        RouteCase("https://example.com/", ["all_proxy": "127.0.0.15:9"], noProxy: nil, proxy: nil, expected: "127.0.0.15:9"),
        RouteCase("https://example.com/", ["ALL_PROXY": "127.0.0.16:9"], noProxy: nil, proxy: nil, expected: "127.0.0.16:9"),
        RouteCase(
            "https://example.com/", ["all_proxy": "127.0.0.15:9", "ALL_PROXY": "127.0.0.16:9"], noProxy: nil, proxy: nil,
            expected: "127.0.0.15:9"),
        RouteCase(
            "https://example.com/", ["all_proxy": "", "ALL_PROXY": "127.0.0.16:9"], noProxy: nil, proxy: nil,
            expected: "127.0.0.16:9"),
        RouteCase(
            "https://example.com/", ["HTTPS_PROXY": "127.0.0.14:9", "all_proxy": "127.0.0.15:9"], noProxy: nil, proxy: nil,
            expected: "127.0.0.14:9"),
        RouteCase("HTTP://example.com/", ["http_proxy": "127.0.0.11:9"], noProxy: nil, proxy: nil, expected: "127.0.0.11:9"),
        RouteCase(
            "http://example.com/", ["http_proxy": "127.0.0.11:9", "no_proxy": "example.com"], noProxy: nil, proxy: nil,
            expected: nil),
        RouteCase(
            "http://www.example.com/", ["http_proxy": "127.0.0.11:9", "no_proxy": "example.com"], noProxy: nil, proxy: nil,
            expected: nil),
        RouteCase(
            "http://notexample.com/", ["http_proxy": "127.0.0.11:9", "no_proxy": "example.com"], noProxy: nil, proxy: nil,
            expected: "127.0.0.11:9"),
        RouteCase(
            "http://example.com/", ["http_proxy": "127.0.0.11:9", "NO_PROXY": "example.com"], noProxy: nil, proxy: nil,
            expected: nil),
        RouteCase(
            "http://example.com/", ["http_proxy": "127.0.0.11:9", "no_proxy": "other.com", "NO_PROXY": "example.com"],
            noProxy: nil, proxy: nil, expected: "127.0.0.11:9"),
        RouteCase(
            "http://example.com/", ["http_proxy": "127.0.0.11:9", "no_proxy": "", "NO_PROXY": "example.com"], noProxy: nil,
            proxy: nil, expected: nil),
        RouteCase(
            "http://example.com/", ["http_proxy": "127.0.0.11:9", "no_proxy": "*"], noProxy: nil, proxy: nil, expected: nil),
        RouteCase(
            "https://example.com/", ["ALL_PROXY": "127.0.0.16:9", "NO_PROXY": "*"], noProxy: nil, proxy: nil, expected: nil),
        RouteCase(
            "http://example.com/", ["http_proxy": "127.0.0.11:9", "no_proxy": " *"], noProxy: nil, proxy: nil,
            expected: "127.0.0.11:9"),
        RouteCase(
            "http://example.com/", ["http_proxy": "127.0.0.11:9", "no_proxy": "*,example.org"], noProxy: nil, proxy: nil,
            expected: "127.0.0.11:9"),
        RouteCase(
            "http://example.com/", ["http_proxy": "127.0.0.11:9", "no_proxy": "example.com"], noProxy: "", proxy: nil,
            expected: "127.0.0.11:9"),
        RouteCase(
            "http://example.com/", ["http_proxy": "127.0.0.11:9", "no_proxy": "example.com"], noProxy: "other.org", proxy: nil,
            expected: "127.0.0.11:9"),
        RouteCase("http://example.com/", ["no_proxy": "example.com"], noProxy: nil, proxy: "127.0.0.17:9", expected: nil),
        RouteCase(
            "http://example.com/", ["no_proxy": "other.com"], noProxy: nil, proxy: "127.0.0.17:9", expected: "127.0.0.17:9"),
        RouteCase("http://example.com/", ["http_proxy": "127.0.0.11:9"], noProxy: nil, proxy: "", expected: nil),
        RouteCase(
            "http://example.com/", ["http_proxy": "127.0.0.11:9"], noProxy: nil, proxy: "127.0.0.17:9", expected: "127.0.0.17:9"),
        RouteCase("http://example.com/", [:], noProxy: "*", proxy: "127.0.0.17:9", expected: nil),
        RouteCase(
            "http://10.1.2.3/", ["http_proxy": "127.0.0.11:9", "no_proxy": "10.0.0.0/8"], noProxy: nil, proxy: nil, expected: nil),
        RouteCase(
            "http://[::1]:8080/", ["http_proxy": "127.0.0.11:9", "no_proxy": "::1"], noProxy: nil, proxy: nil, expected: nil),
        RouteCase(
            "http://localhost/", ["http_proxy": "127.0.0.11:9", "no_proxy": "localhost,127.0.0.1"], noProxy: nil, proxy: nil,
            expected: nil),
        RouteCase(
            "http://127.0.0.1/", ["http_proxy": "127.0.0.11:9", "no_proxy": "localhost,127.0.0.1"], noProxy: nil, proxy: nil,
            expected: nil),
        RouteCase(
            "http://example.com/", ["http_proxy": "socks5h://127.0.0.18:9"], noProxy: nil, proxy: nil, expected: "127.0.0.18:9"),
    ]

    /// (URL host, no_proxy list) → whether curl 7.88.1 went direct.
    static let matches: [MatchCase] = [
        MatchCase("example.com", "example.com", true),
        MatchCase("www.example.com", "example.com", true),
        MatchCase("notexample.com", "example.com", false),
        MatchCase("example.com", ".example.com", true),
        MatchCase("www.example.com", ".example.com", true),
        MatchCase("a.b.example.com", "example.com", true),
        MatchCase("example.com", "www.example.com", false),
        MatchCase("EXAMPLE.COM", "example.com", true),
        MatchCase("example.com", "EXAMPLE.com", true),
        MatchCase("example.com.", "example.com", true),
        MatchCase("example.com", "example.com.", true),
        MatchCase("example.com", ".example.com.", true),
        MatchCase("example.com.", ".example.com.", true),
        MatchCase("www.example.com.", "example.com", true),
        MatchCase("example.com", "other.com, example.com", true),
        MatchCase("example.com", "other.com,,  ,example.com", true),
        MatchCase("example.com", "other.com example.com", true),
        MatchCase("example.com", "other.com\texample.com", true),
        MatchCase("example.com", " example.com ", true),
        MatchCase("example.com", "\texample.com\t,", true),
        MatchCase("example.com", "example.com:80", false),
        MatchCase("example.com", "example.co", false),
        MatchCase("example.com", "xample.com", false),
        MatchCase("example.com", "com", true),
        MatchCase("example.com", ".", false),
        MatchCase("example.com", ".com", true),
        MatchCase("example.com", "*.example.com", false),
        MatchCase("www.example.com", "*.example.com", false),
        MatchCase("example.com", "example.com,*", true),
        MatchCase("example.com", "*", true),
        MatchCase("example.com", "**", false),
        MatchCase("example.com", ",,,,", false),
        MatchCase("example.com", "example.com/24", false),
        MatchCase("a.example.com", "b.example.com", false),
        MatchCase("example.com", "ample.com", false),
        MatchCase("example.com", "e.com", false),
        MatchCase("localhost", "localhost", true),
        MatchCase("localhost", "LOCALHOST", true),
        MatchCase("localhost", "localhost.localdomain", false),
        MatchCase("10.1.2.3", "10.1.2.3", true),
        MatchCase("10.1.2.3", "10.0.0.0/8", true),
        MatchCase("10.1.2.3", "10.0.0.0/16", false),
        MatchCase("10.1.2.3", "10.1.2.0/24", true),
        MatchCase("10.1.2.3", "10.1.2.3/32", true),
        MatchCase("10.1.2.3", "10.0.0.0/0", false),
        MatchCase("10.1.2.3", "0.0.0.0/0", false),
        MatchCase("10.1.2.3", "10.1.2.3/33", false),
        MatchCase("10.1.2.3", "10.1.2.3:80", false),
        MatchCase("10.1.2.3", "10.1.2", false),
        MatchCase("10.1.2.3", "10", false),
        MatchCase("10.1.2.3", "10.1.2.3/", true),
        MatchCase("10.1.2.3", "10.1.2.0/24x", true),
        MatchCase("10.1.2.3", "10.1.2.0/-8", false),
        MatchCase("10.1.2.3", ".2.3", false),
        MatchCase("10.1.2.3", "1.2.3", false),
        MatchCase("10.1.2.3", "010.1.2.3", false),
        MatchCase("10.1.2.3", "10.1.2.3.", false),
        MatchCase("10.1.2.3", "10.1.2.0/ 24", false),
        MatchCase("10.1.2.3", "10.1.2.0/+24", true),
        MatchCase("10.255.255.255", "10.0.0.0/8", true),
        MatchCase("11.0.0.0", "10.0.0.0/8", false),
        MatchCase("10.1.2.3", "10.1.2.2/31", true),
        MatchCase("10.1.2.3", "10.1.2.2/32", false),
        MatchCase("10.1.2.3", "10.1.2.3/1", true),
        MatchCase("200.1.2.3", "128.0.0.0/1", true),
        MatchCase("100.1.2.3", "128.0.0.0/1", false),
        MatchCase("127.1", "127.0.0.1", true),
        MatchCase("0x7f000001", "127.0.0.1", true),
        MatchCase("127.0.0.1", "127.1", false),
        MatchCase("0177.0.0.1", "127.0.0.1", true),
        MatchCase("192.168.1.1", "192.168.0.0/16", true),
        MatchCase("192.168.1.1", "foo, bar, 192.168.0.0/24", false),
        MatchCase("[::1]", "::1", true),
        MatchCase("[::1]", "[::1]", false),
        MatchCase("[::1]", "::1/128", false),
        MatchCase("[::1]", "0:0::1", false),
        MatchCase("[0:0::1]", "::1", true),
        MatchCase("[2001:db8::1]", "2001:db8::1", true),
        MatchCase("[2001:DB8::1]", "2001:db8::1", true),
        MatchCase("[2001:db8::1]", "2001:db8::/32", false),
        MatchCase("[2001:db8::1]", "db8::1", false),
        MatchCase("[2001:db8::1]", "::1", false),
        MatchCase("[::ffff:10.1.2.3]", "10.1.2.3", false),
        MatchCase("[::ffff:10.1.2.3]", "::ffff:10.1.2.3", true),
        MatchCase("[::1]", "::1,localhost", true),
        MatchCase("xn--nxasmq6b.com", "xn--nxasmq6b.com", true),
        MatchCase("under_score.example", "example", true),
    ]

    /// A proxy URL → the address curl 7.88.1 connected to (or tried to resolve), or the error it gave.
    static let proxyURLs: [ProxyURLCase] = [
        ProxyURLCase("127.0.0.2", .authority("127.0.0.2:1080")),
        ProxyURLCase("127.0.0.2:3128", .authority("127.0.0.2:3128")),
        ProxyURLCase("http://127.0.0.2", .authority("127.0.0.2:1080")),
        ProxyURLCase("https://127.0.0.2", .authority("127.0.0.2:443")),
        ProxyURLCase("HTTPS://127.0.0.2:8443", .authority("127.0.0.2:8443")),
        ProxyURLCase("socks4://127.0.0.2", .authority("127.0.0.2:1080")),
        ProxyURLCase("socks4a://127.0.0.2", .authority("127.0.0.2:1080")),
        ProxyURLCase("socks5://127.0.0.2", .authority("127.0.0.2:1080")),
        ProxyURLCase("socks5h://127.0.0.2", .authority("127.0.0.2:1080")),
        ProxyURLCase("socks://127.0.0.2", .authority("127.0.0.2:1080")),
        ProxyURLCase("SOCKS5H://127.0.0.2:9050", .authority("127.0.0.2:9050")),
        ProxyURLCase("ftp://127.0.0.2", .unsupportedScheme),
        ProxyURLCase("foo://127.0.0.2", .unsupportedScheme),
        ProxyURLCase("socks6://127.0.0.2", .unsupportedScheme),
        ProxyURLCase("ftp.example.com:3128", .unsupportedScheme),
        ProxyURLCase("FTP.example.com", .unsupportedScheme),
        ProxyURLCase("dict.example", .unsupportedScheme),
        ProxyURLCase("ldap.example", .unsupportedScheme),
        ProxyURLCase("imap.example", .unsupportedScheme),
        ProxyURLCase("smtp.example", .unsupportedScheme),
        ProxyURLCase("pop3.example", .unsupportedScheme),
        ProxyURLCase("http://127.0.0.2:", .authority("127.0.0.2:1080")),
        ProxyURLCase("127.0.0.2:", .malformed),
        ProxyURLCase("127.0.0.2:abc", .malformed),
        ProxyURLCase("127.0.0.2:65536", .malformed),
        ProxyURLCase("127.0.0.2:65535", .authority("127.0.0.2:65535")),
        ProxyURLCase("127.0.0.2:0080", .authority("127.0.0.2:80")),
        ProxyURLCase("127.0.0.2:99999999999999999999", .malformed),
        ProxyURLCase("127.0.0.2:+80", .malformed),
        ProxyURLCase("127.0.0.2:8 0", .malformed),
        ProxyURLCase("http:/127.0.0.2", .authority("127.0.0.2:1080")),
        ProxyURLCase("http:///127.0.0.2", .authority("127.0.0.2:1080")),
        ProxyURLCase("http:////127.0.0.2", .malformed),
        ProxyURLCase("http:127.0.0.2", .malformed),
        ProxyURLCase("http://", .malformed),
        ProxyURLCase("socks5h://", .malformed),
        ProxyURLCase("user:pw@127.0.0.2:3128", .authority("127.0.0.2:3128")),
        ProxyURLCase("http://us%40er:p%3Aw@127.0.0.2", .authority("127.0.0.2:1080")),
        ProxyURLCase("http://@127.0.0.2", .authority("127.0.0.2:1080")),
        ProxyURLCase("http://user@127.0.0.2", .authority("127.0.0.2:1080")),
        ProxyURLCase("http://:pw@127.0.0.2", .authority("127.0.0.2:1080")),
        ProxyURLCase("http://user@host@127.0.0.2", .malformed),
        ProxyURLCase("127.1", .authority("127.0.0.1:1080")),
        ProxyURLCase("0x7f.1:3128", .authority("127.0.0.1:3128")),
        ProxyURLCase("2130706433", .authority("127.0.0.1:1080")),
        ProxyURLCase("0177.0.0.02", .authority("127.0.0.2:1080")),
        ProxyURLCase("127.0.0.256", .authority("127.0.0.256:1080")),
        ProxyURLCase("127.0.0.1.", .authority("127.0.0.1.:1080")),
        ProxyURLCase("[::1]:3128", .authority("[::1]:3128")),
        ProxyURLCase("http://[::1]", .authority("[::1]:1080")),
        ProxyURLCase("[0:0::1]", .authority("[::1]:1080")),
        ProxyURLCase("[::1", .malformed),
        ProxyURLCase("[::1]x", .malformed),
        ProxyURLCase("[zz::1]", .malformed),
        ProxyURLCase("[::1]:", .malformed),
        ProxyURLCase("http://[::1]:", .authority("[::1]:1080")),
        ProxyURLCase("[]", .malformed),
        ProxyURLCase("http://127.0.0.2/path?q#f", .authority("127.0.0.2:1080")),
        ProxyURLCase("http://127.0.0.2?x", .authority("127.0.0.2:1080")),
        ProxyURLCase("http://127.0.0.2#x", .authority("127.0.0.2:1080")),
        ProxyURLCase("http://exa mple", .malformed),
        ProxyURLCase("http://a{b", .malformed),
        ProxyURLCase("http://a\tb", .malformed),
        ProxyURLCase("file:///tmp/x", .unsupportedScheme),
        ProxyURLCase("http://127.0.0.2:3128:80", .malformed),
        ProxyURLCase("http://127%2e0.0.2", .authority("127.0.0.2:1080")),
        ProxyURLCase("http://%31%32%37.0.0.2", .authority("127.0.0.2:1080")),
        ProxyURLCase("socks5h://127.0.0.2/", .authority("127.0.0.2:1080")),
        ProxyURLCase("https://127.0.0.2:443", .authority("127.0.0.2:443")),
        ProxyURLCase("[::ffff:127.0.0.2]:3128", .authority("[::ffff:127.0.0.2]:3128")),
    ]

    @Test(arguments: routes)
    func routeIsCurls(_ row: RouteCase) throws {
        let url = try HTTPURL(row.url)
        let route = try ProxyRoute.resolve(
            scheme: url.scheme, host: url.host, proxy: row.proxy, noProxy: row.noProxy,
            environment: ProxyEnvironment(row.environment))
        switch route {
        case .direct: #expect(row.expected == nil)
        case .proxy(let proxy): #expect(proxy.authority == row.expected)
        }
    }

    @Test(arguments: matches)
    func noProxyMatchIsCurls(_ row: MatchCase) throws {
        let route = try ProxyRoute.resolve(
            scheme: "http", host: row.host, proxy: "127.0.0.17:9", noProxy: row.list, environment: ProxyEnvironment([:]))
        #expect((route == .direct) == row.bypasses)
        #expect(NoProxyList(row.list).matches(host: ProxyRoute.canonicalHost(row.host)) == row.bypasses)
    }

    @Test(arguments: proxyURLs)
    func proxyURLIsReadAsCurlReadsIt(_ row: ProxyURLCase) {
        let result = Result { () throws(ProxyURLError) in try Proxy(parsing: row.text) }
        switch (row.expected, result) {
        case (.authority(let authority), .success(let proxy)):
            #expect(proxy.authority == authority)
        case (.unsupportedScheme, .failure(.unsupportedScheme)), (.malformed, .failure(.malformed)):
            break
        default:
            Issue.record("\(row.text): expected \(row.expected), got \(result)")
        }
    }
}
