import Foundation
import Testing
import WireClient
import WireTestSupport

/// `Set-Cookie` parsing and the storage model's checks (RFC 6265 §5.2–5.3, RFC 6265bis for `Secure`), without sockets.
@Suite struct SetCookieParsingTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    static let page = URL(string: "https://www.example.com/docs/guide/page.html")!

    static func parse(_ field: String, _ url: URL = page) -> Cookie? {
        Cookie(setCookie: field, for: url, now: now)
    }

    @Test func aTimeWithALongRunOfDigitsIsNoDateAndNoTrap() throws {
        let cookie = try #require(Self.parse("a=b; Expires=99999999999999999999:0:0 1 Jan 2030"))
        #expect(cookie.expires == nil)
        let other = try #require(Self.parse("a=b; Expires=Wed, 01 Jan 2031 10:00:99999999999999999999999 GMT"))
        #expect(other.expires == nil)
    }

    @Test func aTabInAValueOrAPathIsRefusedSoCurlsFileCanHoldEveryCookie() throws {
        #expect(Self.parse("a=x\ty") == nil)
        #expect(try #require(Self.parse("a=b; Path=/x\ty")).path != "/x\ty")
    }

    /// A name is held to a value's rule: a tab or any other control byte refuses the cookie.
    @Test(arguments: ["a\tb=c", "a\u{01}b=c", "a\u{1F}=c", "a\u{7F}=c", "\u{0B}a=c"])
    func aControlByteOrATabInANameIsRefused(field: String) {
        #expect(Self.parse(field) == nil)
    }

    /// A cookie made directly with a control byte is not stored either: it would break the field it is sent in.
    @Test func theStorageRefusesControlBytesHoweverTheCookieWasMade() {
        let storage = CookieStorage()
        let url = URL(string: "http://example.com/")!
        storage.setCookie(Cookie(name: "a\tb", value: "1", domain: "example.com"))
        storage.setCookie(Cookie(name: "c", value: "1\r\nEvil: yes", domain: "example.com"))
        storage.setCookie(Cookie(name: "", value: "1", domain: "example.com"))
        storage.setCookies([Cookie(name: "d\u{0}", value: "1", domain: "example.com")], for: url)
        storage.setCookie(Cookie(name: "fine", value: "1", domain: "example.com"))
        #expect(storage.cookieHeader(for: url) == "fine=1")
    }

    @Test(arguments: [
        // RFC 6265bis §4.1.3, prefixes matched without regard to case.
        ("__Secure-id=1; Secure", true),
        ("__secure-id=1; Secure; Domain=example.com", true),
        ("__Secure-id=1", false),
        ("__SECURE-id=1; HttpOnly", false),
        ("__Host-id=1; Secure; Path=/", true),
        ("__host-id=1; Secure; Path=/", true),
        ("__Host-id=1; Secure", false),  // the default path here is /docs/guide
        ("__Host-id=1; Secure; Path=/docs", false),
        ("__Host-id=1; Secure; Path=/; Domain=www.example.com", false),
        ("__Host-id=1; Path=/", false),
        ("__Hostile=1", true),
    ])
    func namePrefixesAreKept(field: String, accepted: Bool) {
        #expect((Self.parse(field) != nil) == accepted, "\(field)")
    }

    @Test func aSecurePrefixNeedsASecureOrigin() {
        #expect(Self.parse("__Secure-id=1; Secure", URL(string: "http://www.example.com/")!) == nil)
        #expect(Self.parse("__Host-id=1; Secure; Path=/", URL(string: "http://www.example.com/")!) == nil)
    }

    @Test func everyAttributeIsRead() throws {
        let cookie = try #require(
            Self.parse(
                " id = a3fWa ; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Domain=.Example.COM; Path=/docs; Secure; HttpOnly; SameSite=Strict; Unknown=1"
            ))
        #expect(cookie.name == "id" && cookie.value == "a3fWa")
        #expect(cookie.domain == "example.com" && !cookie.isHostOnly)
        #expect(cookie.path == "/docs")
        #expect(cookie.isSecure && cookie.isHTTPOnly && cookie.sameSite == "Strict")
        #expect(cookie.expires == Date(timeIntervalSince1970: 4_096_250_880))
        #expect(cookie.creationTime == Self.now)
    }

    @Test func withoutAttributesTheCookieIsHostOnlyWithTheDefaultPathAndNoExpiry() throws {
        let cookie = try #require(Self.parse("a=b"))
        #expect(cookie.domain == "www.example.com" && cookie.isHostOnly)
        #expect(cookie.path == "/docs/guide")
        #expect(cookie.expires == nil && cookie.isSessionOnly && !cookie.isSecure && !cookie.isHTTPOnly)
    }

    @Test(arguments: [
        ("/", "/"), ("", "/"), ("/a", "/"), ("/a/", "/a"), ("/a/b", "/a"), ("/a/b/c", "/a/b"), ("/a//b", "/a/"),
    ])
    func defaultPath(requestPath: String, expected: String) throws {
        let url = URL(string: "http://example.com" + requestPath)!
        #expect(try #require(Self.parse("a=b", url)).path == expected)
    }

    @Test(arguments: [
        ("Path=docs", "/docs/guide"), ("Path=", "/docs/guide"), ("Path=/x; Path=/y", "/y"), ("Path=/x; Path=y", "/docs/guide"),
    ])
    func pathAttribute(attributes: String, expected: String) throws {
        #expect(try #require(Self.parse("a=b; " + attributes)).path == expected)
    }

    @Test(arguments: [
        "Sun, 06 Nov 2095 08:49:37 GMT",  // RFC 1123
        "Sunday, 06-Nov-95 08:49:37 GMT",  // RFC 850, two-digit year 95 → 1995
        "Sun Nov  6 08:49:37 2095",  // asctime
        "Sun, 06-Nov-2095 08:49:37 GMT",  // Netscape's
        "6 Nov 2095 8:49:37",  // single digits
        "2095 Nov 06 08:49:37 UTC",  // out of order
        "Sun, 06 November 2095 08:49:37 GMT",  // long month name
    ])
    func expiresDateFormats(text: String) throws {
        let cookie = try #require(Self.parse("a=b; Expires=" + text))
        let expires = try #require(cookie.expires)
        let components = Calendar(identifier: .gregorian)
        var calendar = components
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: expires)
        #expect(parts.month == 11 && parts.day == 6 && parts.hour == 8 && parts.minute == 49 && parts.second == 37)
        #expect(parts.year == (text.contains("-95 ") ? 1995 : 2095))
    }

    @Test(arguments: [
        "not a date", "Sun, 32 Nov 2095 08:49:37 GMT", "Sun, 31 Feb 2095 08:49:37 GMT", "Sun, 06 Nov 1600 08:49:37 GMT",
        "Sun, 06 Nov 2095 24:00:00 GMT", "Sun, 06 Nov 2095 08:60:00 GMT", "06 Nov 2095", "Sun, 06 Xyz 2095 08:49:37 GMT",
        "Sun, 06 Nov 2095 08:49 GMT", "Sun, 06 Nov 12345 08:49:37 GMT",
    ])
    func anUnparseableExpiresIsIgnored(text: String) throws {
        #expect(try #require(Self.parse("a=b; Expires=" + text)).expires == nil)
    }

    @Test func twoDigitYearsBelow70AreIn2000s() throws {
        let cookie = try #require(Self.parse("a=b; Expires=Mon, 01-Jan-69 00:00:00 GMT"))
        #expect(cookie.expires == Date(timeIntervalSince1970: 3_124_224_000))
    }

    @Test func maxAgeTakesPrecedenceOverExpiresInEitherOrder() throws {
        let first = try #require(Self.parse("a=b; Max-Age=60; Expires=Wed, 21 Oct 2099 07:28:00 GMT"))
        let second = try #require(Self.parse("a=b; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Max-Age=60"))
        #expect(first.expires == Self.now.addingTimeInterval(60))
        #expect(second.expires == Self.now.addingTimeInterval(60))
    }

    @Test(arguments: ["0", "-1", "-999999999999999999999"])
    func aMaxAgeOfZeroOrLessExpiresAtOnce(value: String) throws {
        #expect(try #require(Self.parse("a=b; Max-Age=" + value)).isExpired(at: Self.now))
    }

    @Test(arguments: ["", "abc", "1.5", "+5", "5s"])
    func aMalformedMaxAgeIsIgnored(value: String) throws {
        #expect(try #require(Self.parse("a=b; Max-Age=" + value)).expires == nil)
    }

    @Test func aHugeMaxAgeIsClampedRatherThanOverflowing() throws {
        let cookie = try #require(Self.parse("a=b; Max-Age=99999999999999999999999999"))
        #expect(try #require(cookie.expires) > Self.now.addingTimeInterval(99 * 365 * 86_400))
    }

    @Test(arguments: [
        // (request URL, Domain attribute, accepted, expected domain, host-only)
        ("http://www.example.com/", "example.com", true, "example.com", false),
        ("http://www.example.com/", ".example.com", true, "example.com", false),
        ("http://www.example.com/", "www.example.com", true, "www.example.com", false),
        ("http://www.example.com/", "other.com", false, "", false),
        ("http://www.example.com/", "ample.com", false, "", false),
        ("http://example.com/", "www.example.com", false, "", false),
        ("http://www.example.com/", "com", false, "", false),
        ("http://shop.example.co.uk/", "co.uk", false, "", false),
        ("http://shop.example.co.uk/", "example.co.uk", true, "example.co.uk", false),
        ("http://me.github.io/", "github.io", false, "", false),
        ("http://localhost/", "localhost", true, "localhost", true),
        ("http://co.uk/", "co.uk", true, "co.uk", true),
        ("http://127.0.0.1/", "127.0.0.1", true, "127.0.0.1", true),
        ("http://127.0.0.1/", "0.0.1", false, "", false),
        ("http://10.1.2.3/", "2.3", false, "", false),
        ("http://[::1]/", "::1", true, "::1", true),
    ])
    func domainAttribute(url: String, domain: String, accepted: Bool, expected: String, hostOnly: Bool) {
        let cookie = Self.parse("a=b; Domain=" + domain, URL(string: url)!)
        #expect((cookie != nil) == accepted)
        if let cookie {
            #expect(cookie.domain == expected && cookie.isHostOnly == hostOnly)
        }
    }

    @Test func anEmptyDomainAttributeIsIgnored() throws {
        let cookie = try #require(Self.parse("a=b; Domain="))
        #expect(cookie.domain == "www.example.com" && cookie.isHostOnly)
    }

    @Test func onlyASecureOriginMaySetASecureCookie() {
        #expect(Self.parse("a=b; Secure", URL(string: "https://example.com/")!) != nil)
        #expect(Self.parse("a=b; Secure", URL(string: "http://example.com/")!) == nil)
        #expect(Self.parse("a=b", URL(string: "http://example.com/")!) != nil)
        // Loopback hosts are a secure context, as in browsers and curl.
        for host in ["localhost", "127.0.0.1", "127.8.9.10", "[::1]", "app.localhost"] {
            #expect(Self.parse("a=b; Secure", URL(string: "http://\(host):8080/")!) != nil)
        }
        #expect(Self.parse("a=b; Secure", URL(string: "http://128.0.0.1/")!) == nil)
        #expect(Self.parse("a=b; Secure", URL(string: "http://localhost.example.com/")!) == nil)
    }

    @Test(arguments: ["", "novalue", "=value", " =value", ";a=b", "a\u{01}=b", "a=b\u{7F}"])
    func malformedPairsAreIgnored(field: String) {
        #expect(Self.parse(field) == nil)
    }

    @Test func anEmptyValueAndEqualsInsideTheValueAreKept() throws {
        #expect(try #require(Self.parse("a=")).value == "")
        #expect(try #require(Self.parse("a=x=y==; Path=/")).value == "x=y==")
        #expect(try #require(Self.parse("a=\"quoted value\"")).value == "\"quoted value\"")
    }

    /// Arbitrary bytes never trap: whatever a server sends, parsing returns a cookie or nil.
    @Test func randomFieldsNeverTrap() {
        var generator = SplitMix64(seed: 0xC00C1E)
        let alphabet = Array("ab=; ,.-/:0123456789GMTExpiresMax-AgeDomainPathSecure\t\"\u{00}\u{7F}é")
        for _ in 0..<5_000 {
            let length = Int.random(in: 0..<80, using: &generator)
            let field = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            _ = Self.parse(field)
            _ = Self.parse(field, URL(string: "http://127.0.0.1:8080/")!)
        }
    }
}
