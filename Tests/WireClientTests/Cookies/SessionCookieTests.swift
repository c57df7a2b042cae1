import Foundation
import Testing
import WireTestSupport
import Wire
import WireClient

/// Cookies through a `SessionManager` against Python's http.server: every attribute, every redirect hop,
/// the caller's own `Cookie`, the per-request and per-session opt-outs, and curl's cookie file.
@Suite(.sharedIO(minutes: 1))
struct SessionCookieTests {
    static func manager(_ storage: CookieStorage?, configure: (inout SessionConfiguration) -> Void = { _ in }) -> SessionManager {
        var configuration = SessionConfiguration.default
        configuration.httpCookieStorage = storage
        configure(&configuration)
        let manager = SessionManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        return manager
    }

    /// What the peer received in `Cookie`, as the body it echoes.
    static func fetch(_ manager: SessionManager, _ request: ClientRequest) async throws -> String {
        let result = try await manager.data(for: request)
        return String(decoding: result.data ?? Data(), as: UTF8.self)
    }

    @Test func everyAttributeFromPythonIsStoredAndSentByTheRules() async throws {
        let peer = try await CookiePeer()
        defer { peer.stop() }
        let storage = CookieStorage()
        let manager = Self.manager(storage)
        #expect(try await Self.fetch(manager, ClientRequest(url: peer.url("/set-all"))) == "cookie:")
        #expect(Set(storage.cookies.map(\.name)) == ["plain1", "deep06", "ipdom3", "secur4", "htonl5", "maxag7", "futur8"])
        let byName = Dictionary(uniqueKeysWithValues: storage.cookies.map { ($0.name, $0) })
        #expect(byName["htonl5"]?.isHTTPOnly == true && byName["htonl5"]?.sameSite == "Lax")
        #expect(
            byName["ipdom3"]?.isHostOnly == true && byName["plain1"]?.isHostOnly == true && byName["secur4"]?.isSecure == true)
        #expect(byName["deep06"]?.path == "/app" && byName["maxag7"]?.expires != nil && byName["plain1"]?.expires == nil)
        #expect(byName["futur8"]?.expires == Date(timeIntervalSince1970: 4_116_219_494))

        #expect(
            try await Self.fetch(manager, ClientRequest(url: peer.url("/app/echo")))
                == "cookie:deep06=2; plain1=1; ipdom3=3; secur4=4; htonl5=5; maxag7=7; futur8=8")
        #expect(
            try await Self.fetch(manager, ClientRequest(url: peer.url("/echo")))
                == "cookie:plain1=1; ipdom3=3; secur4=4; htonl5=5; maxag7=7; futur8=8")
        _ = try await Self.fetch(manager, ClientRequest(url: peer.url("/delete")))
        #expect(
            try await Self.fetch(manager, ClientRequest(url: peer.url("/echo")))
                == "cookie:ipdom3=3; secur4=4; htonl5=5; maxag7=7; futur8=8")
    }

    @Test func aRedirectSetsACookieThatTheNextHopSends() async throws {
        let peer = try await CookiePeer()
        defer { peer.stop() }
        let storage = CookieStorage()
        let result = try await Self.manager(storage).data(for: ClientRequest(url: peer.url("/redirect")))
        #expect(result.response?.url.path == "/landing")
        #expect(String(decoding: result.data ?? Data(), as: UTF8.self) == "cookie:hop=1")
        #expect(storage.cookies.map(\.name) == ["hop"])
    }

    @Test func aCookieFieldSetByTheCallerIsLeftAlone() async throws {
        let peer = try await CookiePeer()
        defer { peer.stop() }
        let storage = CookieStorage()
        storage.setCookie(Cookie(name: "stored", value: "1", domain: "127.0.0.1"))
        var request = ClientRequest(url: peer.url("/echo"))
        request.setValue("mine=2", forHTTPHeaderField: "Cookie")
        #expect(try await Self.fetch(Self.manager(storage), request) == "cookie:mine=2")
        #expect(try await Self.fetch(Self.manager(storage), ClientRequest(url: peer.url("/echo"))) == "cookie:stored=1")
    }

    @Test func shouldHandleCookiesFalseSendsNoneAndStoresNone() async throws {
        let peer = try await CookiePeer()
        defer { peer.stop() }
        let storage = CookieStorage()
        storage.setCookie(Cookie(name: "stored", value: "1", domain: "127.0.0.1"))
        var request = ClientRequest(url: peer.url("/set-all"))
        request.shouldHandleCookies = false
        #expect(try await Self.fetch(Self.manager(storage), request) == "cookie:")
        var redirect = ClientRequest(url: peer.url("/redirect"))
        redirect.shouldHandleCookies = false
        #expect(try await Self.fetch(Self.manager(storage), redirect) == "cookie:")
        #expect(storage.cookies.map(\.name) == ["stored"])

        // The session's switch, and a request overriding it.
        let off = Self.manager(storage) { $0.shouldHandleCookies = false }
        #expect(try await Self.fetch(off, ClientRequest(url: peer.url("/set-all"))) == "cookie:")
        #expect(storage.cookies.map(\.name) == ["stored"])
        var on = ClientRequest(url: peer.url("/echo"))
        on.shouldHandleCookies = true
        #expect(try await Self.fetch(off, on) == "cookie:stored=1")
    }

    @Test func theNeverAcceptPolicySendsButStoresNothing() async throws {
        let peer = try await CookiePeer()
        defer { peer.stop() }
        let storage = CookieStorage()
        storage.setCookie(Cookie(name: "stored", value: "1", domain: "127.0.0.1"))
        let manager = Self.manager(storage) { $0.httpCookieAcceptPolicy = .never }
        #expect(try await Self.fetch(manager, ClientRequest(url: peer.url("/set-all"))) == "cookie:stored=1")
        #expect(storage.cookies.map(\.name) == ["stored"])
    }

    @Test func theDefaultConfigurationSharesTheProcessStorageAndEphemeralOnesDoNot() {
        #expect(SessionConfiguration.default.httpCookieStorage === CookieStorage.shared)
        #expect(
            SessionConfiguration.default.shouldHandleCookies && SessionConfiguration.default.httpCookieAcceptPolicy == .always)
        let first = SessionConfiguration.ephemeral.httpCookieStorage
        let second = SessionConfiguration.ephemeral.httpCookieStorage
        #expect(first != nil && first !== CookieStorage.shared && first !== second)
    }

    /// curl stores the peer's cookies with `-c`; Wire loads that file and sends what `curl -b` sends.
    @Test func aCookieFileWrittenByCurlGivesWireCurlsCookieField() async throws {
        let peer = try await CookiePeer()
        defer { peer.stop() }
        let jar = peer.temporaryFolder + "/curl-jar.txt"
        let sent = peer.temporaryFolder + "/curl-sent.txt"
        for path in ["/set-all", "/redirect"] {
            #expect(try runBash("curl -sS -L -b '\(jar)' -c '\(jar)' -o /dev/null '\(peer.url(path))'") == 0)
        }
        #expect(try runBash("curl -sS -b '\(jar)' -o '\(sent)' '\(peer.url("/app/echo"))'") == 0)
        let curlSent = try String(contentsOfFile: sent, encoding: .utf8)
        #expect(curlSent.contains("deep06=2; ") && curlSent.contains("hop=1"))

        let storage = CookieStorage()
        let contents = try storage.loadCookies(fromFile: jar)
        #expect(contents.malformedLines == 0)
        let wireSent = try await Self.fetch(Self.manager(storage), ClientRequest(url: peer.url("/app/echo")))
        // The same cookies, the longer path first. Among equal paths curl puts longer domains and names first, then
        // the newest; RFC 6265 (and Wire) the oldest: so the rest is compared as a set.
        #expect(Self.pairs(wireSent) == Self.pairs(curlSent))
        #expect(wireSent.hasPrefix("cookie:deep06=2; ") && curlSent.hasPrefix("cookie:deep06=2; "))
        #expect(Self.pairs(curlSent).count == 8)
    }

    /// The cookie bomb: ten redirects, each setting 80 cookies of 700 bytes. Unbounded, the last hop's `Cookie`
    /// field would be 566 KB; bounded, no request carries more than 8 KiB or 150 cookies, and the storage keeps 180.
    /// `/bomb/<n>` below 10 redirects to the next and sets 80 cookies of 700 bytes (name and value); anything else
    /// answers with how many cookies and bytes its `Cookie` field had.
    static func bomb(_ request: LoopbackServer.Recorded, _ writer: HTTPResponseWriter) async throws {
        guard request.target.hasPrefix("/bomb/"), let hop = Int(request.target.dropFirst("/bomb/".count)), hop < 10 else {
            let field = request.headers.first(name: "Cookie") ?? ""
            try await writer.reply(200, "\(field.split(separator: "; ").count) \(field.utf8.count)")
            return
        }
        var headers: HTTPHeaders = ["Location": "/bomb/\(hop + 1)"]
        for index in 0..<80 {
            let name = "h\(hop)c\(index)"
            headers.add(name: "Set-Cookie", value: name + "=" + String(repeating: "x", count: 700 - name.utf8.count) + "; Path=/")
        }
        try await writer.reply(302, headers: headers)
    }

    /// The cookie bomb of ten redirects: unbounded, the last hop's `Cookie` field would carry 800 cookies, about 560 KB
    /// (and the server refuses it); bounded, no request carries more than 8 KiB or 150 cookies, and the storage keeps 180.
    @Test func aCookieBombThroughRedirectsStaysWithinTheLimits() async throws {
        try await LoopbackServer.with(Self.bomb) { server in
            let storage = CookieStorage()
            let manager = Self.manager(storage)
            // 11 cookies of 701 bytes and their separators: a twelfth would pass 8192.
            let last = try await Self.fetch(manager, ClientRequest(url: server.url("/bomb/0")))
            #expect(last == "11 7731")
            #expect(server.requests.count == 11)
            for request in server.requests {
                let field = request.headers.first(name: "Cookie") ?? ""
                #expect(field.utf8.count <= 8192 && field.split(separator: "; ").count <= 150)
            }
            // Each response gave 50; the site keeps 180, the most recently used.
            #expect(storage.cookies.count == 180)
            let next = try await Self.fetch(manager, ClientRequest(url: server.url("/echo")))
            #expect(next == "11 7731")
        }
    }

    /// The `name=value` pairs of an echoed `Cookie` field.
    static func pairs(_ echoed: String) -> Set<String> {
        Set(echoed.dropFirst("cookie:".count).split(separator: "; ").map(String.init))
    }
}
