import Foundation
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireClient

/// Matching, ordering, replacement and expiry of `CookieStorage`, with an injected clock.
@Suite struct CookieStorageTests {
    /// A clock the test moves.
    final class TestClock: Sendable {
        private let time = Lock(Date(timeIntervalSince1970: 1_700_000_000))
        var now: Date { time.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
    }

    static func headers(_ fields: String...) -> HTTPHeaders {
        HTTPHeaders(fields.map { (name: "Set-Cookie", value: $0) })
    }

    @Test(arguments: [
        // (cookie domain, host-only, request host, sent)
        ("example.com", false, "example.com", true),
        ("example.com", false, "www.example.com", true),
        ("example.com", false, "a.b.example.com", true),
        ("example.com", false, "notexample.com", false),
        ("example.com", false, "example.com.evil.net", false),
        ("example.com", true, "example.com", true),
        ("example.com", true, "www.example.com", false),
        ("0.0.1", false, "127.0.0.1", false),
        ("127.0.0.1", false, "127.0.0.1", true),
    ])
    func domainMatching(domain: String, hostOnly: Bool, host: String, sent: Bool) {
        let cookie = Cookie(name: "a", value: "b", domain: domain, isHostOnly: hostOnly)
        #expect(cookie.matches(URL(string: "http://\(host)/")!) == sent)
    }

    @Test(arguments: [
        // (cookie path, request path, sent)
        ("/", "/", true), ("/", "/anything/at/all", true), ("/docs", "/docs", true), ("/docs", "/docs/", true),
        ("/docs", "/docs/a", true), ("/docs", "/docsearch", false), ("/docs/", "/docs/a", true), ("/docs/", "/docs", false),
        ("/docs", "/", false), ("/docs", "/Docs", false), ("/a/b", "/a", false),
    ])
    func pathMatching(path: String, requestPath: String, sent: Bool) {
        let cookie = Cookie(name: "a", value: "b", domain: "example.com", path: path)
        #expect(cookie.matches(URL(string: "http://example.com\(requestPath)")!) == sent)
    }

    @Test func secureCookiesGoOnlyOverHTTPS() {
        let storage = CookieStorage()
        storage.setCookie(Cookie(name: "s", value: "1", domain: "example.com", isSecure: true))
        storage.setCookie(Cookie(name: "p", value: "2", domain: "example.com"))
        #expect(storage.cookieHeader(for: URL(string: "https://example.com/")!) == "s=1; p=2")
        #expect(storage.cookieHeader(for: URL(string: "http://example.com/")!) == "p=2")
    }

    @Test func anHTTPResponseCannotSetASecureCookie() {
        let storage = CookieStorage()
        #expect(
            storage.storeCookies(
                fromResponseHeaders: Self.headers("s=1; Secure", "p=2"), for: URL(string: "http://example.com/")!) == 1)
        #expect(storage.cookies.map(\.name) == ["p"])
    }

    @Test func plainHTTPCannotOverwriteOrShadowASecureCookie() {
        // RFC 6265bis §5.7 step 16: a man in the middle of http must not replace the https session cookie.
        let storage = CookieStorage()
        storage.storeCookies(
            fromResponseHeaders: Self.headers("session=good; Secure; Path=/"), for: URL(string: "https://example.com/")!)
        let plain = URL(string: "http://example.com/")!
        #expect(storage.storeCookies(fromResponseHeaders: Self.headers("session=evil"), for: plain) == 0)
        #expect(
            storage.storeCookies(
                fromResponseHeaders: Self.headers("session=evil; Domain=example.com; Path=/app"),
                for: URL(string: "http://www.example.com/")!) == 0)
        storage.setCookies([Cookie(name: "session", value: "evil", domain: "example.com", path: "/")], for: plain)
        #expect(storage.cookies.map(\.value) == ["good"])
        // Other names, and a path the secure one does not cover, are still set from http; https may overwrite.
        #expect(storage.storeCookies(fromResponseHeaders: Self.headers("theme=dark"), for: plain) == 1)
        #expect(
            storage.storeCookies(
                fromResponseHeaders: Self.headers("session=other; Path=/"), for: URL(string: "http://other.org/")!) == 1)
        #expect(
            storage.storeCookies(
                fromResponseHeaders: Self.headers("session=rotated; Secure; Path=/"), for: URL(string: "https://example.com/")!)
                == 1)
        #expect(storage.cookieHeader(for: URL(string: "https://example.com/")!)?.contains("session=rotated") == true)
    }

    @Test func anExpiredSecureCookieNoLongerBlocksPlainHTTP() {
        let clock = TestClock()
        let storage = CookieStorage(now: { clock.now })
        storage.storeCookies(
            fromResponseHeaders: Self.headers("session=old; Secure; Max-Age=60"), for: URL(string: "https://example.com/")!)
        let plain = URL(string: "http://example.com/")!
        #expect(storage.storeCookies(fromResponseHeaders: Self.headers("session=new"), for: plain) == 0)
        clock.advance(61)
        #expect(storage.storeCookies(fromResponseHeaders: Self.headers("session=new"), for: plain) == 1)
        #expect(storage.cookieHeader(for: plain) == "session=new")
    }

    @Test func headerOrderIsLongerPathFirstThenEarlierCreation() {
        let clock = TestClock()
        let storage = CookieStorage(now: { clock.now })
        let url = URL(string: "http://example.com/a/b/c")!
        storage.storeCookies(fromResponseHeaders: Self.headers("first=1; Path=/", "deep=2; Path=/a/b"), for: url)
        clock.advance(1)
        storage.storeCookies(fromResponseHeaders: Self.headers("mid=3; Path=/a", "second=4; Path=/"), for: url)
        // Same creation time: the order they were stored in.
        storage.storeCookies(fromResponseHeaders: Self.headers("third=5; Path=/"), for: url)
        #expect(storage.cookieHeader(for: url) == "deep=2; mid=3; first=1; second=4; third=5")
        #expect(storage.cookieHeader(for: URL(string: "http://example.com/")!) == "first=1; second=4; third=5")
        #expect(storage.cookieHeader(for: URL(string: "http://other.com/")!) == nil)
    }

    @Test func aReplacementKeepsTheCreationTimeAndSoItsPlace() {
        let clock = TestClock()
        let storage = CookieStorage(now: { clock.now })
        let url = URL(string: "http://example.com/")!
        storage.storeCookies(fromResponseHeaders: Self.headers("a=1", "b=2"), for: url)
        let created = storage.cookies.first { $0.name == "a" }?.creationTime
        clock.advance(10)
        storage.storeCookies(fromResponseHeaders: Self.headers("a=new"), for: url)
        #expect(storage.cookieHeader(for: url) == "a=new; b=2")
        #expect(storage.cookies.first { $0.name == "a" }?.creationTime == created)
        // Another path is another cookie.
        storage.storeCookies(fromResponseHeaders: Self.headers("a=other; Path=/x"), for: url)
        #expect(storage.cookies.count == 3)
    }

    @Test func cookiesExpireWithTheInjectedClock() {
        let clock = TestClock()
        let storage = CookieStorage(now: { clock.now })
        let url = URL(string: "http://example.com/")!
        storage.storeCookies(
            fromResponseHeaders: Self.headers("short=1; Max-Age=10", "long=2; Max-Age=100", "session=3"), for: url)
        #expect(storage.cookieHeader(for: url) == "short=1; long=2; session=3")
        clock.advance(10)
        #expect(storage.cookieHeader(for: url) == "long=2; session=3")
        clock.advance(90)
        #expect(storage.cookieHeader(for: url) == "session=3")
        #expect(storage.cookies.map(\.name) == ["session"])
    }

    @Test func aSetCookieWithAPastExpiryDeletesTheStoredCookie() {
        let storage = CookieStorage()
        let url = URL(string: "http://example.com/")!
        storage.storeCookies(fromResponseHeaders: Self.headers("a=1", "b=2", "c=3"), for: url)
        storage.storeCookies(
            fromResponseHeaders: Self.headers("a=; Max-Age=0", "b=x; Expires=Thu, 01 Jan 1970 00:00:00 GMT"), for: url)
        #expect(storage.cookieHeader(for: url) == "c=3")
        // A deletion for another path leaves the cookie alone.
        storage.storeCookies(fromResponseHeaders: Self.headers("c=; Max-Age=0; Path=/other"), for: url)
        #expect(storage.cookieHeader(for: url) == "c=3")
    }

    @Test func publicSuffixCookiesAreRefused() {
        let storage = CookieStorage()
        storage.storeCookies(
            fromResponseHeaders: Self.headers("tld=1; Domain=com", "psl=2; Domain=co.uk", "ok=3; Domain=example.co.uk"),
            for: URL(string: "http://www.example.co.uk/")!)
        #expect(storage.cookies.map(\.name) == ["ok"])
        #expect(storage.cookieHeader(for: URL(string: "http://attacker.co.uk/")!) == nil)
    }

    @Test func theNeverPolicyStoresNothingAndStillSends() {
        let storage = CookieStorage()
        storage.setCookie(Cookie(name: "kept", value: "1", domain: "example.com"))
        storage.acceptPolicy = .never
        let url = URL(string: "http://example.com/")!
        #expect(storage.storeCookies(fromResponseHeaders: Self.headers("a=1"), for: url) == 0)
        storage.setCookies([Cookie(name: "b", value: "2", domain: "example.com")], for: url)
        #expect(storage.cookieHeader(for: url) == "kept=1")
        storage.acceptPolicy = .onlyFromMainDocumentDomain
        storage.setCookies([Cookie(name: "b", value: "2", domain: "example.com")], for: url, mainDocumentURL: url)
        #expect(storage.cookieHeader(for: url) == "kept=1; b=2")
    }

    @Test func setCookiesForAURLChecksDomainAndSecure() {
        let storage = CookieStorage()
        storage.setCookies(
            [
                Cookie(name: "foreign", value: "1", domain: "other.com", isHostOnly: false),
                Cookie(name: "secure", value: "2", domain: "example.com", isSecure: true),
                Cookie(name: "fine", value: "3", domain: "example.com", isHostOnly: false),
            ], for: URL(string: "http://www.example.com/")!)
        #expect(storage.cookies.map(\.name) == ["fine"])
    }

    @Test func deleteAndRemoveSince() {
        let clock = TestClock()
        let storage = CookieStorage(now: { clock.now })
        let url = URL(string: "http://example.com/")!
        storage.storeCookies(fromResponseHeaders: Self.headers("old=1", "gone=2"), for: url)
        clock.advance(60)
        storage.storeCookies(fromResponseHeaders: Self.headers("new=3"), for: url)
        storage.removeCookies(since: clock.now)
        #expect(storage.cookieHeader(for: url) == "old=1; gone=2")
        storage.deleteCookie(Cookie(name: "gone", value: "", domain: "example.com"))
        #expect(storage.cookieHeader(for: url) == "old=1")
        storage.removeAllCookies()
        #expect(storage.cookies.isEmpty)
    }

    @Test func cookiesAreCodable() throws {
        let cookie = Cookie(
            name: "a", value: "b", domain: ".Example.com", path: "/p", expires: Date(timeIntervalSince1970: 2e9),
            isSecure: true, isHTTPOnly: true, isHostOnly: false, sameSite: "Lax",
            creationTime: Date(timeIntervalSince1970: 1e9))
        #expect(cookie.domain == "example.com")
        let decoded = try JSONDecoder().decode(Cookie.self, from: JSONEncoder().encode(cookie))
        #expect(decoded == cookie)
    }
}
