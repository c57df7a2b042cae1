import Testing
import Wire

/// `Proxy`, `ProxyCredentials`, `ProxyEnvironment`, `NoProxyList` and `ProxyConfiguration`: kinds, ports and
/// credentials read from URLs, secrets kept out of every description, the environment's variable order.
struct ProxyValueTests {
    struct KindCase: Sendable, CustomTestStringConvertible {
        var text: String
        var kind: Proxy.Kind
        var port: Int
        var testDescription: String { text }
    }

    @Test(arguments: [
        KindCase(text: "proxy.internal", kind: .http, port: 1080),
        KindCase(text: "http://proxy.internal", kind: .http, port: 1080),
        KindCase(text: "proxy.internal:3128", kind: .http, port: 3128),
        KindCase(text: "https://proxy.internal", kind: .https, port: 443),
        KindCase(text: "HTTPS://proxy.internal:8443", kind: .https, port: 8443),
        KindCase(text: "socks4://proxy.internal", kind: .socks4, port: 1080),
        KindCase(text: "socks://proxy.internal", kind: .socks4, port: 1080),
        KindCase(text: "socks4a://proxy.internal", kind: .socks4a, port: 1080),
        KindCase(text: "socks5://proxy.internal:1081", kind: .socks5, port: 1081),
        KindCase(text: "Socks5h://proxy.internal", kind: .socks5h, port: 1080),
    ])
    func schemesNameKindsAndDefaultPorts(_ row: KindCase) throws {
        let proxy = try Proxy(parsing: row.text)
        #expect(proxy.kind == row.kind)
        #expect(proxy.port == row.port)
        #expect(proxy.host == "proxy.internal")
    }

    @Test func anHTTPSchemeStandsForTheDefaultKindAsCurlsProxyTypeDoes() throws {
        #expect(try Proxy(parsing: "proxy:9050", defaultKind: .socks5h).kind == .socks5h)
        #expect(try Proxy(parsing: "http://proxy", defaultKind: .socks4a).kind == .socks4a)
        #expect(try Proxy(parsing: "socks5://proxy", defaultKind: .socks4).kind == .socks5)
        // The default port follows the kind: an HTTPS proxy type with no port is on 443.
        #expect(try Proxy(parsing: "proxy", defaultKind: .https).port == 443)
    }

    @Test func unknownSchemesAreRefusedByName() {
        #expect(throws: ProxyURLError.unsupportedScheme("gopher")) { try Proxy(parsing: "gopher://proxy") }
        #expect(throws: ProxyURLError.unsupportedScheme("ftp")) { try Proxy(parsing: "ftp.example.com:21") }
        #expect(throws: ProxyURLError.unsupportedScheme("socks6")) { try Proxy(parsing: "SOCKS6://proxy") }
        #expect(throws: ProxyURLError.malformed(.invalidPort)) { try Proxy(parsing: "proxy:http") }
        #expect(throws: ProxyURLError.malformed(.slashes)) { try Proxy(parsing: "http:////proxy") }
        #expect(throws: ProxyURLError.malformed(.noHost)) { try Proxy(parsing: "") }
        #expect(throws: ProxyURLError.malformed(.invalidIPv6Literal)) { try Proxy(parsing: "[fe80::1%]") }
    }

    @Test func credentialsInTheURLArePercentDecodedAndWin() throws {
        let given = ProxyCredentials(user: "given", password: "given-pw")
        let fromURL = try Proxy(parsing: "socks5://al%40ice:p%3Aw%20rd@proxy", credentials: given)
        #expect(fromURL.credentials == ProxyCredentials(user: "al@ice", password: "p:w rd"))
        let separate = try Proxy(parsing: "socks5://proxy", credentials: given)
        #expect(separate.credentials == given)
        // A user alone has the empty password; an empty login is still credentials, as curl takes it.
        #expect(try Proxy(parsing: "http://bob@proxy").credentials == ProxyCredentials(user: "bob", password: ""))
        #expect(try Proxy(parsing: "http://:pw@proxy").credentials == ProxyCredentials(user: "", password: "pw"))
        #expect(try Proxy(parsing: "http://@proxy", credentials: given).credentials == ProxyCredentials(user: "", password: ""))
        // Only the first colon separates user and password; a bad escape stays as written.
        #expect(try Proxy(parsing: "http://u:a:b%zz@proxy").credentials == ProxyCredentials(user: "u", password: "a:b%zz"))
        #expect(throws: ProxyURLError.malformed(.invalidCredentials)) { try Proxy(parsing: "http://u:%0a@proxy") }
        #expect(throws: ProxyURLError.malformed(.invalidCredentials)) { try Proxy(parsing: "http://u:%ff@proxy") }
    }

    @Test func hostsAreKeptAsCurlsURLParserLeavesThem() throws {
        #expect(try Proxy(parsing: "[0:0::1]:3128").host == "::1")
        #expect(try Proxy(parsing: "[2001:DB8::1]").host == "2001:DB8::1", "not shorter, so kept as written")
        #expect(try Proxy(parsing: "[fe80::1%25eth0]:1").host == "fe80::1%eth0")
        #expect(try Proxy(parsing: "0x7f.1").host == "127.0.0.1")
        #expect(try Proxy(parsing: "http://pr%6Fxy").host == "proxy")
        #expect(try Proxy(parsing: "[::1]:3128").authority == "[::1]:3128")
        #expect(Proxy(kind: .socks5, host: "[::1]").host == "::1")
    }

    @Test func noDescriptionShowsCredentials() throws {
        let proxy = try Proxy(parsing: "socks5h://alice:hunter2@proxy:1080")
        #expect(proxy.description == "socks5h://***@proxy:1080")
        #expect(ProxyRoute.proxy(proxy).description == "via socks5h://***@proxy:1080")
        let credentials = try #require(proxy.credentials)
        for text in ["\(credentials)", String(reflecting: credentials), "\(proxy)", String(reflecting: proxy)] {
            #expect(!text.contains("hunter2") && !text.contains("alice"), "\(text)")
        }
        var dumped = ""
        dump(proxy, to: &dumped)
        #expect(!dumped.contains("hunter2") && !dumped.contains("alice"), "\(dumped)")
        // Errors never repeat the URL.
        do {
            _ = try Proxy(parsing: "gopher://alice:hunter2@proxy")
        } catch {
            #expect(!"\(error)".contains("hunter2"))
        }
        #expect(try Proxy(parsing: "socks5://proxy").description == "socks5://proxy:1080")
    }

    @Test func theEnvironmentIsReadInCurlsOrder() {
        let environment = ProxyEnvironment([
            "HTTP_PROXY": "cgi-set", "HTTPS_PROXY": "upper", "ALL_PROXY": "all-upper", "no_proxy": "", "NO_PROXY": "upper-list",
        ])
        #expect(environment.proxyVariable(forScheme: "http")?.name == "ALL_PROXY")
        #expect(environment.proxyVariable(forScheme: "HTTPS")?.name == "HTTPS_PROXY")
        #expect(environment.proxyVariable(forScheme: "https")?.value == "upper")
        #expect(environment.noProxyVariable?.name == "NO_PROXY")
        #expect(environment.value("no_proxy") == nil, "empty counts as unset")
        #expect(ProxyEnvironment([:]).proxyVariable(forScheme: "http") == nil)
        #expect(ProxyEnvironment(lookup: { $0 == "ws_proxy" ? "p" : nil }).proxyVariable(forScheme: "ws")?.value == "p")
    }

    @Test func theRouteParsesTheEnvironmentsProxyWithTheGivenKindAndCredentials() throws {
        let environment = ProxyEnvironment(["https_proxy": "proxy:9050", "no_proxy": "internal"])
        let credentials = ProxyCredentials(user: "u", password: "p")
        let route = try ProxyRoute.resolve(
            scheme: "https", host: "example.com", environment: environment, defaultKind: .socks5h, credentials: credentials)
        #expect(route == .proxy(Proxy(kind: .socks5h, host: "proxy", port: 9050, credentials: credentials)))
        #expect(try ProxyRoute.resolve(scheme: "https", host: "db.internal", environment: environment) == .direct)
        #expect(throws: ProxyURLError.unsupportedScheme("gopher")) {
            try ProxyRoute.resolve(scheme: "http", host: "a", environment: ProxyEnvironment(["http_proxy": "gopher://p"]))
        }
    }

    @Test func aConfigurationRoutesEachRequest() throws {
        let proxy = Proxy(kind: .http, host: "proxy", port: 3128)
        #expect(try ProxyConfiguration.none.route(scheme: "http", host: "a") == .direct)
        let configured = ProxyConfiguration.proxy(proxy, noProxy: NoProxyList("localhost,10.0.0.0/8"))
        #expect(try configured.route(scheme: "https", host: "example.com") == .proxy(proxy))
        #expect(try configured.route(scheme: "https", host: "localhost") == .direct)
        #expect(try configured.route(scheme: "https", host: "10.9.8.7") == .direct)
        #expect(try ProxyConfiguration.proxy(proxy).route(scheme: "http", host: "localhost") == .proxy(proxy))
        let environment = ProxyConfiguration.environment(ProxyEnvironment(["http_proxy": "http://proxy:3128"]))
        #expect(try environment.route(scheme: "http", host: "a") == .proxy(proxy))
        #expect(try environment.route(scheme: "https", host: "a") == .direct)
    }

    @Test func aBracketedIPv6HostIsMatchedAsAnAddressWithCIDRRanges() {
        let list = NoProxyList("fe80::/10, 2001:db8::1, 2001:db9::/33")
        #expect(list.matches(host: "[fe80::1234]"))
        #expect(!list.matches(host: "[fec0::1]"))
        #expect(list.matches(host: "[2001:0db8:0::1]"))
        #expect(list.matches(host: "[2001:db9:7fff::1]"))
        #expect(!list.matches(host: "[2001:db9:8000::1]"))
        #expect(NoProxyList("::1").matches(host: "[::1]"))
        #expect(!NoProxyList("::1").matches(host: "[::2]"))
        #expect(!NoProxyList("::1").matches(host: "[::1"))
        // Without brackets, as curl 7.88 passes a URL's host: compared as text.
        #expect(!list.matches(host: "fe80::1234"))
    }

    @Test func blankSeparatedListsAreReadAndReported() {
        #expect(NoProxyList("a b").usesBlankSeparators)
        #expect(NoProxyList("a\tb").usesBlankSeparators)
        #expect(!NoProxyList(" a , b ,").usesBlankSeparators)
        #expect(!NoProxyList("").usesBlankSeparators)
    }

    @Test(arguments: ["example.com", "a", "10.1.2.3", "::1", "localhost.", "xn--nxasmq6b.com", "under_score"])
    func aHostListedMatchesAndStarMatchesAll(_ host: String) {
        #expect(NoProxyList(host).matches(host: host))
        #expect(NoProxyList("other, \(host)").matches(host: host))
        #expect(NoProxyList("*").matches(host: host))
        #expect(!NoProxyList("").matches(host: host))
        #expect(!NoProxyList("*").matches(host: ""))
    }

    @Test func aProxyReadsBackFromItsURL() throws {
        let proxy = Proxy(
            kind: .socks5h, host: "fe80::1", port: 9050, credentials: ProxyCredentials(user: "a@b:c", password: "p w/%"))
        #expect(try Proxy(parsing: proxy.urlIncludingCredentials) == proxy)
    }

    @Test func aHostNameWithAPercentSignReadsBackFromItsURL() throws {
        // FuzzProxyRules' finding: `%25` decodes to a `%`, which the URL must escape again.
        let proxy = try Proxy(parsing: "http://%250e...")
        #expect(proxy.host == "%0e...")
        #expect(try Proxy(parsing: proxy.urlIncludingCredentials) == proxy)
    }
}
