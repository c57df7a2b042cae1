import Foundation
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireClient
import WireTestSupport

/// The Public Suffix List behind a cookie's `Domain` attribute: the system's copy (Debian's `publicsuffix`), a list
/// named in the configuration, wildcard and exception rules, and what happens without a list. `.sharedIO`: some
/// tests read and write files, so they stay out of the way of the tests that compare descriptors.
@Suite(.sharedIO) struct PublicSuffixListTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    static func parse(_ field: String, _ url: String, _ list: PublicSuffixList = .system) -> Cookie? {
        Cookie(setCookie: field, for: URL(string: url)!, now: now, publicSuffixList: list)
    }

    @Test func theSystemListIsRead() {
        #expect(FileManager.default.fileExists(atPath: PublicSuffixList.systemPath))
        #expect(PublicSuffixList.system.isAvailable)
    }

    /// `com.de` is in the list's private section: a site under it may not set a cookie for all of it.
    @Test func aPrivateSectionSuffixIsRefusedAsADomain() throws {
        #expect(PublicSuffixList.system.isPublicSuffix("com.de"))
        #expect(Self.parse("a=1; Domain=com.de", "http://a.example.com.de/") == nil)
        let storage = CookieStorage(now: { Self.now })
        storage.storeCookies(
            fromResponseHeaders: ["Set-Cookie": "a=1; Domain=com.de"], for: URL(string: "http://a.example.com.de/")!)
        #expect(storage.cookieHeader(for: URL(string: "http://b.other.com.de/")!) == nil)
        // The registrable domain under it is fine.
        let cookie = try #require(Self.parse("a=1; Domain=example.com.de", "http://a.example.com.de/"))
        #expect(cookie.domain == "example.com.de" && !cookie.isHostOnly)
        for suffix in ["github.io", "co.uk", "com", "s3.amazonaws.com", "blogspot.com"] {
            #expect(Self.parse("a=1; Domain=\(suffix)", "https://shop.example.\(suffix)/") == nil, "\(suffix)")
        }
        // HTTPCookieStorage's setCookies(_:for:) holds cookies made directly to the same rule.
        storage.setCookies(
            [
                Cookie(name: "b", value: "2", domain: "com.de", isHostOnly: false),
                Cookie(name: "c", value: "3", domain: "example.com.de", isHostOnly: false),
            ],
            for: URL(string: "http://a.example.com.de/")!)
        #expect(storage.cookieHeader(for: URL(string: "http://b.other.com.de/")!) == nil)
        #expect(storage.cookieHeader(for: URL(string: "http://www.example.com.de/")!) == "c=3")
    }

    /// An IP address is no parent of the name that ends like it: `1.2.3.4` from `x.1.2.3.4` is refused.
    @Test func anIPAddressIsNoParentDomain() throws {
        #expect(Self.parse("a=1; Domain=1.2.3.4", "http://x.1.2.3.4/") == nil)
        let itself = try #require(Self.parse("a=1; Domain=1.2.3.4", "http://1.2.3.4/"))
        #expect(itself.domain == "1.2.3.4" && itself.isHostOnly)
    }

    @Test(
        arguments: [
            // (name, public suffix, registrable domain): the list's own wildcard and exception rules (`*.ck`, `!www.ck`,
            // `*.kawasaki.jp`, `!city.kawasaki.jp`), a name no rule knows, and a Unicode rule in its ASCII form.
            ("ck", true, nil), ("foo.ck", true, nil), ("a.foo.ck", false, "a.foo.ck"), ("b.a.foo.ck", false, "a.foo.ck"),
            ("www.ck", false, "www.ck"), ("a.www.ck", false, "www.ck"),
            ("kawasaki.jp", false, "kawasaki.jp"), ("x.kawasaki.jp", true, nil), ("city.kawasaki.jp", false, "city.kawasaki.jp"),
            ("a.city.kawasaki.jp", false, "city.kawasaki.jp"),
            ("example.unknowntld", false, "example.unknowntld"), ("unknowntld", true, nil),
            ("xn--55qx5d.xn--j6w193g", true, nil), ("shop.xn--55qx5d.xn--j6w193g", false, "shop.xn--55qx5d.xn--j6w193g"),
            ("www.example.co.uk", false, "example.co.uk"),
        ] as [(String, Bool, String?)])
    func wildcardAndExceptionRules(name: String, isSuffix: Bool, registrable: String?) {
        #expect(PublicSuffixList.system.isPublicSuffix(name) == isSuffix)
        #expect(PublicSuffixList.system.registrableDomain(of: name) == registrable)
    }

    @Test func wildcardAndExceptionRulesDecideDomainAttributes() throws {
        #expect(Self.parse("a=1; Domain=foo.ck", "http://shop.foo.ck/") == nil)
        let shop = try #require(Self.parse("a=1; Domain=shop.foo.ck", "http://a.shop.foo.ck/"))
        #expect(shop.domain == "shop.foo.ck" && !shop.isHostOnly)
        let www = try #require(Self.parse("a=1; Domain=www.ck", "http://a.www.ck/"))
        #expect(www.domain == "www.ck" && !www.isHostOnly)
        // A suffix names only the host itself, and the cookie then stays host-only.
        let itself = try #require(Self.parse("a=1; Domain=foo.ck", "http://foo.ck/"))
        #expect(itself.domain == "foo.ck" && itself.isHostOnly)
    }

    @Test func rulesFromText() {
        let list = PublicSuffixList(
            rules: """
                // ===BEGIN ICANN DOMAINS===
                example
                *.wild.example  trailing words are ignored
                !keep.wild.example
                bücher.example
                .bad..rule
                // ===END ICANN DOMAINS===
                """)
        #expect(list.isAvailable)
        #expect(list.isPublicSuffix("example") && !list.isPublicSuffix("a.example"))
        #expect(list.isPublicSuffix("x.wild.example") && !list.isPublicSuffix("keep.wild.example"))
        #expect(list.registrableDomain(of: "a.b.x.wild.example") == "b.x.wild.example")
        #expect(list.registrableDomain(of: "a.keep.wild.example") == "keep.wild.example")
        // RFC 3492's example: `bücher` is `xn--bcher-kva`; both spellings are rules.
        #expect(list.isPublicSuffix("xn--bcher-kva.example") && list.isPublicSuffix("bücher.example"))
        #expect(list.registrableDomain(of: "shop.xn--bcher-kva.example") == "shop.xn--bcher-kva.example")
        #expect(list.isPublicSuffix("") && list.registrableDomain(of: "") == nil)
    }

    /// A configuration may name another file: its rules, and only its, decide.
    @Test func aListFileGivenInTheConfiguration() throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/suffixes.dat"
        try "// ours\nexample\nshared.example\n".write(toFile: path, atomically: true, encoding: .utf8)
        let storage = CookieStorage(publicSuffixList: PublicSuffixList(contentsOfFile: path), now: { Self.now })
        #expect(storage.publicSuffixList.isAvailable)
        let url = URL(string: "http://team.shared.example/")!
        #expect(storage.storeCookies(fromResponseHeaders: ["Set-Cookie": "a=1; Domain=shared.example"], for: url) == 0)
        #expect(storage.storeCookies(fromResponseHeaders: ["Set-Cookie": "b=2; Domain=team.shared.example"], for: url) == 1)
        // `co.uk` is no suffix in this list.
        let british = URL(string: "http://www.example.co.uk/")!
        #expect(storage.storeCookies(fromResponseHeaders: ["Set-Cookie": "c=3; Domain=co.uk"], for: british) == 1)
        #expect(storage.cookieHeader(for: URL(string: "http://other.co.uk/")!) == "c=3")
    }

    /// Without a list, a `Domain` attribute may name only the request's own host (and the cookie stays host-only);
    /// cookies without one still work. Why is said once.
    @Test func withoutAListOnlyTheHostItselfMayBeNamed() throws {
        let warnings = Lock<[String]>([])
        let missing = "/nonexistent/public_suffix_list.dat"
        let list = PublicSuffixList(contentsOfFile: missing, warn: { message in warnings.withLock { $0.append(message) } })
        let storage = CookieStorage(publicSuffixList: list, now: { Self.now })
        let url = URL(string: "http://www.example.com/")!
        #expect(storage.storeCookies(fromResponseHeaders: ["Set-Cookie": "parent=1; Domain=example.com"], for: url) == 0)
        #expect(storage.storeCookies(fromResponseHeaders: ["Set-Cookie": "itself=2; Domain=www.example.com"], for: url) == 1)
        #expect(storage.storeCookies(fromResponseHeaders: ["Set-Cookie": "plain=3"], for: url) == 1)
        #expect(storage.storeCookies(fromResponseHeaders: ["Set-Cookie": "again=4; Domain=.example.com"], for: url) == 0)
        #expect(storage.cookieHeader(for: url) == "itself=2; plain=3")
        #expect(storage.cookieHeader(for: URL(string: "http://sub.www.example.com/")!) == nil)
        #expect(storage.cookies.allSatisfy { $0.isHostOnly })
        #expect(!list.isAvailable)
        let said = warnings.withLock { $0 }
        #expect(said.count == 1)
        #expect(said.first?.contains(missing) == true)
        // The public form says it on standard error; the answer is the same.
        #expect(!PublicSuffixList(contentsOfFile: missing).isAvailable || FileManager.default.fileExists(atPath: missing))
    }

    @Test func aTrailingDotOnDomainIsRefused() throws {
        #expect(Self.parse("a=1; Domain=example.com.", "http://www.example.com/") == nil)
        #expect(Self.parse("a=1; Domain=www.example.com.", "http://www.example.com./") == nil)
        #expect(Self.parse("a=1; Domain=.example.com", "http://www.example.com/") != nil)
        // A lone dot names nothing: the cookie is host-only, as with an empty attribute.
        #expect(try #require(Self.parse("a=1; Domain=.", "http://www.example.com/")).isHostOnly)
    }

    /// Any text is rules or skipped: never a trap, and a lookup of any name answers.
    @Test func randomListsAndNamesNeverTrap() {
        var generator = SplitMix64(seed: 0x5AFF1C)
        let pieces = ["a", "b", "ck", "*", "!", ".", "..", "//", " ", "\t", "\n", "\r\n", "é", "公司", "xn--", "-", "\u{301}"]
        for _ in 0..<500 {
            let text = (0..<Int.random(in: 0..<60, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
                .joined()
            let list = PublicSuffixList(rules: text)
            for _ in 0..<10 {
                let name = (0..<Int.random(in: 0..<8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
                    .joined()
                _ = list.isPublicSuffix(name)
                if let registrable = list.registrableDomain(of: name) {
                    #expect(name.utf8.reversed().starts(with: registrable.utf8.reversed()))
                }
            }
        }
    }
}
