import Foundation
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireClient

/// `CookieLimits`: what one cookie, one response, one site and the whole storage may hold, and what one `Cookie`
/// field may carry.
@Suite struct CookieLimitsTests {
    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    static func headers(_ fields: [String]) -> HTTPHeaders {
        HTTPHeaders(fields.map { (name: "Set-Cookie", value: $0) })
    }

    static func names(_ field: String?) -> [String] {
        (field ?? "").split(separator: "; ").map { String($0.prefix { $0 != "=" }) }
    }

    @Test func theDefaultsAreBrowsersAndCurls() {
        let limits = CookieLimits()
        #expect(limits.maximumNameValueBytes == 4096 && limits.maximumCookiesPerResponse == 50)
        #expect(limits.maximumCookiesPerDomain == 180 && limits.maximumCookies == 3000)
        #expect(limits.maximumCookiesPerField == 150 && limits.maximumFieldBytes == 8192)
        #expect(CookieStorage().limits == limits)
    }

    @Test func aNameAndValueOver4096BytesAreIgnored() {
        let storage = CookieStorage(now: { Self.start })
        let url = URL(string: "http://example.com/")!
        let fits = "fits=" + String(repeating: "v", count: 4096 - 4)
        let over = "over=" + String(repeating: "v", count: 4096 - 3)
        #expect(storage.storeCookies(fromResponseHeaders: Self.headers([fits, over]), for: url) == 1)
        #expect(storage.cookies.map(\.name) == ["fits"])
        // However it is stored; multi-byte characters count in bytes.
        storage.setCookie(Cookie(name: "direct", value: String(repeating: "é", count: 2046), domain: "example.com"))
        storage.setCookies([Cookie(name: "batch", value: String(repeating: "x", count: 4092), domain: "example.com")], for: url)
        #expect(storage.cookies.map(\.name) == ["fits"])
        storage.limits.maximumNameValueBytes = 10_000
        storage.setCookie(Cookie(name: "direct", value: String(repeating: "é", count: 2046), domain: "example.com"))
        #expect(storage.cookies.count == 2)
    }

    @Test func atMost50CookiesAreTakenFromOneResponse() {
        let storage = CookieStorage(now: { Self.start })
        let url = URL(string: "http://example.com/")!
        let fields = ["bad"] + (0..<80).map { "c\($0)=\($0)" }
        #expect(storage.storeCookies(fromResponseHeaders: Self.headers(fields), for: url) == 50)
        #expect(Set(storage.cookies.map(\.name)) == Set((0..<50).map { "c\($0)" }))
        // The next response is another.
        #expect(storage.storeCookies(fromResponseHeaders: Self.headers((50..<80).map { "c\($0)=\($0)" }), for: url) == 30)
        #expect(storage.cookies.count == 80)
        // setCookies for a URL is one response too.
        let batch = (0..<60).map { Cookie(name: "s\($0)", value: "1", domain: "example.com") }
        storage.setCookies(batch, for: url)
        #expect(storage.cookies.count == 130)
    }

    @Test func aSiteKeeps180AndEvictsTheLeastRecentlyUsed() {
        let storage = CookieStorage(now: { Self.start })
        // Subdomains count against their registrable domain.
        for hop in 0..<4 {
            let url = URL(string: "http://host\(hop).example.co.uk/")!
            let fields = (0..<50).map { "h\(hop)c\($0)=1; Domain=example.co.uk" }
            storage.storeCookies(fromResponseHeaders: Self.headers(fields), for: url)
            if hop == 0 {
                // Sending h0c0 (alone: only the cookies sent count as used) makes it outlive the others of its response.
                storage.limits.maximumCookiesPerField = 1
                #expect(Self.names(storage.cookieHeader(for: URL(string: "http://example.co.uk/")!)) == ["h0c0"])
                storage.limits = CookieLimits()
            }
        }
        storage.storeCookies(fromResponseHeaders: Self.headers(["other=1"]), for: URL(string: "http://other.co.uk/")!)
        let names = Set(storage.cookies.map(\.name))
        #expect(storage.cookies.count == 181)
        #expect(names.contains("other") && names.contains("h0c0") && names.contains("h3c49"))
        // 200 came for the site: the 20 least recently used went, h0c0 having been used after the first 50 came.
        #expect(!names.contains("h0c1") && !names.contains("h0c20") && names.contains("h0c21"))
    }

    @Test func theStorageKeepsAtMostItsTotalLeastRecentlyUsedFirst() {
        let storage = CookieStorage(limits: CookieLimits(maximumCookies: 10), now: { Self.start })
        for site in 0..<12 {
            storage.storeCookies(fromResponseHeaders: Self.headers(["c\(site)=1"]), for: URL(string: "http://site\(site).com/")!)
            // Sent after c1 to c5 were set, c0 is used more recently than they.
            if site == 5 { #expect(storage.cookieHeader(for: URL(string: "http://site0.com/")!) == "c0=1") }
        }
        #expect(storage.cookies.count == 10)
        #expect(Set(storage.cookies.map(\.name)) == Set(["c0"] + (3..<12).map { "c\($0)" }))
        // Expired cookies go before any live one.
        let clock = Lock(Self.start)
        let expiring = CookieStorage(limits: CookieLimits(maximumCookies: 2), now: { clock.withLock { $0 } })
        expiring.storeCookies(
            fromResponseHeaders: Self.headers(["old=1", "short=2; Max-Age=5"]), for: URL(string: "http://a.com/")!)
        clock.withLock { $0 += 10 }
        expiring.storeCookies(fromResponseHeaders: Self.headers(["new=3"]), for: URL(string: "http://a.com/")!)
        #expect(Set(expiring.cookies.map(\.name)) == ["old", "new"])
    }

    @Test func oneFieldCarriesAtMost150Cookies() {
        let storage = CookieStorage(now: { Self.start })
        let url = URL(string: "http://example.com/")!
        for batch in 0..<4 {
            storage.storeCookies(fromResponseHeaders: Self.headers((0..<45).map { "b\(batch)n\($0)=1" }), for: url)
        }
        #expect(storage.cookies(for: url).count == 180)
        let sent = Self.names(storage.cookieHeader(for: url))
        #expect(sent.count == 150)
        // The oldest go first: what is left out is the newest.
        #expect(sent == Array(storage.cookies(for: url).map(\.name).prefix(150)))
        #expect(sent.last == "b3n14")
    }

    @Test func oneFieldCarriesAtMost8KiBTheShortestPathsAndNewestLeftOut() throws {
        let storage = CookieStorage(now: { Self.start })
        let url = URL(string: "http://example.com/a/b/c")!
        let value = String(repeating: "v", count: 996)
        // 1000 bytes each: n0 to n19, the deep ones set last but sent first.
        storage.storeCookies(
            fromResponseHeaders: Self.headers((0..<16).map { "n\(String($0).count == 1 ? "0" : "")\($0)=\(value); Path=/" }),
            for: url)
        storage.storeCookies(fromResponseHeaders: Self.headers((16..<20).map { "n\($0)=\(value); Path=/a/b" }), for: url)
        let field = try #require(storage.cookieHeader(for: url))
        #expect(field.utf8.count <= 8192)
        // 8 cookies: 8 × 1000 + 7 × 2 bytes; a ninth would need 9016.
        #expect(Self.names(field) == ["n16", "n17", "n18", "n19", "n00", "n01", "n02", "n03"])
        storage.limits.maximumFieldBytes = 2002
        #expect(Self.names(storage.cookieHeader(for: url)) == ["n16", "n17"])
        storage.limits.maximumFieldBytes = 999
        #expect(storage.cookieHeader(for: url) == nil)
        storage.limits = CookieLimits(maximumCookiesPerField: 3)
        #expect(Self.names(storage.cookieHeader(for: url)) == ["n16", "n17", "n18"])
    }

    @Test func limitsBelowOneLetNothingIn() {
        let storage = CookieStorage(limits: CookieLimits(maximumCookiesPerDomain: 0), now: { Self.start })
        #expect(storage.storeCookies(fromResponseHeaders: Self.headers(["a=1"]), for: URL(string: "http://a.com/")!) == 0)
        storage.limits = CookieLimits(maximumCookiesPerResponse: -1)
        #expect(storage.storeCookies(fromResponseHeaders: Self.headers(["a=1"]), for: URL(string: "http://a.com/")!) == 0)
        #expect(storage.cookies.isEmpty)
    }
}
