public import FoundationEssentials
@_spi(Locking) public import Wire
import Synchronization

/// A thread-safe cookie jar (HTTPCookieStorage) with RFC 6265's storage and retrieval rules.
///
/// `SessionConfiguration.httpCookieStorage` is `CookieStorage.shared` by default: sessions of one process share it,
/// in memory. `.ephemeral` configurations get a storage of their own. `loadCookies(fromFile:)` and
/// `saveCookies(toFile:)` read and write curl's Netscape cookie-file format.
///
/// A storage is bounded by its `limits` (`CookieLimits`: browsers' and curl's by default), so that no server can
/// make it, or the `Cookie` field of later requests, grow without end; a `Domain` attribute is checked against its
/// `publicSuffixList` (the system's by default).
///
/// ```swift
/// let jar = CookieStorage()
/// jar.storeCookies(fromResponseHeaders: response.headers, for: response.url)
/// let field = jar.cookieHeader(for: URL(string: "https://example.com/app")!)   // "id=1; theme=dark"
/// ```
public final class CookieStorage: Sendable {
    /// The process-wide storage that sessions use by default.
    public static let shared = CookieStorage()

    /// A stored cookie and what orders and evicts it.
    private struct Entry {
        var cookie: Cookie
        /// The insertion number, which breaks ties of equal creation times.
        var sequence: UInt64
        /// When the cookie was last set or sent, on the storage's use counter: the least recently used is evicted.
        var lastUsed: UInt64
        /// The site the cookie counts against for `CookieLimits.maximumCookiesPerDomain`.
        var site: String
    }

    private struct State {
        var cookies: [Cookie.Key: Entry] = [:]
        /// How many cookies each site has.
        var perSite: [String: Int] = [:]
        var acceptPolicy = CookieAcceptPolicy.always
        var limits: CookieLimits
        var nextSequence: UInt64 = 0
        var useCounter: UInt64 = 0

        /// The entries matching `include`, in `Cookie` field order.
        func sorted(where include: (Cookie) -> Bool) -> [Entry] {
            cookies.values.filter { include($0.cookie) }.sorted { a, b in
                if a.cookie.path.count != b.cookie.path.count { return a.cookie.path.count > b.cookie.path.count }
                if a.cookie.creationTime != b.cookie.creationTime { return a.cookie.creationTime < b.cookie.creationTime }
                return a.sequence < b.sequence
            }
        }

        mutating func nextUse() -> UInt64 {
            useCounter += 1
            return useCounter
        }

        @discardableResult
        mutating func remove(_ key: Cookie.Key) -> Entry? {
            guard let entry = cookies.removeValue(forKey: key) else { return nil }
            if let count = perSite[entry.site], count > 1 {
                perSite[entry.site] = count - 1
            } else {
                perSite.removeValue(forKey: entry.site)
            }
            return entry
        }

        mutating func removeAll(where shouldRemove: (Cookie) -> Bool) {
            let doomed = cookies.filter { shouldRemove($0.value.cookie) }.keys
            for key in doomed { remove(key) }
        }

        /// Removes the least recently used cookie of `site`, or of all when nil.
        /// - Returns: Whether there was one.
        mutating func evictLeastRecentlyUsed(of site: String?) -> Bool {
            var victim: Cookie.Key?
            var oldest = UInt64.max
            for (key, entry) in cookies where (site == nil || entry.site == site) && entry.lastUsed <= oldest {
                victim = key
                oldest = entry.lastUsed
            }
            guard let victim else { return false }
            remove(victim)
            return true
        }
    }

    private let state: Lock<State>
    let clock: @Sendable () -> Date
    /// The list `Domain` attributes are checked against, and that groups cookies into sites for the limits.
    public let publicSuffixList: PublicSuffixList

    /// An empty storage.
    /// - Parameters:
    ///   - limits: What the storage takes, keeps and sends; browsers' and curl's limits by default.
    ///   - publicSuffixList: The list a `Domain` attribute is checked against; the system's by default.
    ///   - now: The clock for expiry and creation times; the system's by default (tests inject one).
    public init(
        limits: CookieLimits = CookieLimits(), publicSuffixList: PublicSuffixList = .system,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        state = Lock(State(limits: limits))
        self.publicSuffixList = publicSuffixList
        clock = now
    }

    /// Which cookies `setCookies(_:for:mainDocumentURL:)` and `storeCookies(fromResponseHeaders:for:)` accept.
    /// `.always` by default.
    public var acceptPolicy: CookieAcceptPolicy {
        get { state.withLock { $0.acceptPolicy } }
        set { state.withLock { $0.acceptPolicy = newValue } }
    }

    /// What the storage takes, keeps and sends. Lowering a limit evicts nothing at once: cookies beyond it go as
    /// new ones come.
    public var limits: CookieLimits {
        get { state.withLock { $0.limits } }
        set { state.withLock { $0.limits = newValue } }
    }

    /// Every cookie that has not expired, in `Cookie` field order.
    public var cookies: [Cookie] {
        let now = clock()
        return state.withLock { state in
            Self.purge(&state, now: now)
            return state.sorted { _ in true }.map(\.cookie)
        }
    }

    /// Every cookie that has not expired, the most recently created first: the order of a cookie file.
    var cookiesNewestFirst: [Cookie] {
        let now = clock()
        return state.withLock { state in
            Self.purge(&state, now: now)
            return state.cookies.values.sorted { a, b in
                if a.cookie.creationTime != b.cookie.creationTime { return a.cookie.creationTime > b.cookie.creationTime }
                return a.sequence > b.sequence
            }.map(\.cookie)
        }
    }

    /// The cookies that go with a request to `url` (RFC 6265 §5.4): matching domain and path, `Secure` ones only
    /// over https (or to a loopback host), none expired; longer paths first, then earlier creation. All of them:
    /// `cookieHeader(for:)` sends no more than the limits allow.
    public func cookies(for url: URL) -> [Cookie] {
        // The common case of a service that never got a cookie: no clock read, no purge, no filtered copy.
        if state.withLock({ $0.cookies.isEmpty }) { return [] }
        let now = clock()
        return state.withLock { state in
            guard !state.cookies.isEmpty else { return [] }
            Self.purge(&state, now: now)
            return state.sorted { $0.matches(url, at: now) }.map(\.cookie)
        }
    }

    /// The `Cookie` field value for a request to `url` (`name=value; name2=value2`), nil when no cookie matches.
    ///
    /// The cookies of `cookies(for:)`, in their order, as long as they fit `CookieLimits.maximumCookiesPerField`
    /// and `CookieLimits.maximumFieldBytes`: the rest, the shortest paths and the newest, are left out. The cookies
    /// sent count as used for the least-recently-used eviction.
    public func cookieHeader(for url: URL) -> String? {
        if state.withLock({ $0.cookies.isEmpty }) { return nil }
        let now = clock()
        return state.withLock { state -> String? in
            guard !state.cookies.isEmpty else { return nil }
            Self.purge(&state, now: now)
            let matching = state.sorted { $0.matches(url, at: now) }
            guard !matching.isEmpty else { return nil }
            var field = ""
            var count = 0
            var bytes = 0
            for entry in matching {
                let cookie = entry.cookie
                bytes += (count == 0 ? 0 : 2) + cookie.name.utf8.count + 1 + cookie.value.utf8.count
                // RFC 6265 §5.4's order puts the longest paths and the oldest first: the tail is what is left out.
                guard count < state.limits.maximumCookiesPerField, bytes <= state.limits.maximumFieldBytes else { break }
                if count > 0 { field += "; " }
                field += cookie.name + "=" + cookie.value
                count += 1
                let use = state.nextUse()
                state.cookies[cookie.key]?.lastUsed = use
            }
            return count == 0 ? nil : field
        }
    }

    /// Stores `cookie` as it is (no policy or domain check), replacing the cookie with the same name, domain and
    /// path and keeping its creation time; an expired `cookie` removes that cookie instead. A cookie that
    /// `CookieLimits.maximumNameValueBytes` refuses, or with an empty name or a control character (a tab included)
    /// in its name, value or path, is not stored; one beyond the storage's other limits evicts the least recently
    /// used.
    public func setCookie(_ cookie: Cookie) {
        let now = clock()
        let site = site(of: cookie)
        _ = state.withLock { Self.insert(cookie, site: site, into: &$0, now: now) }
    }

    /// Stores cookies received for `url` under the accept policy (HTTPCookieStorage's method), as if from one
    /// response: the first `CookieLimits.maximumCookiesPerResponse` that are taken. A cookie whose domain `url`'s
    /// host does not domain-match is refused, as is one whose domain is a public suffix other than that host (see
    /// `publicSuffixList`) and a `Secure` one for an http `url` to a host other than a loopback one.
    /// - Parameters:
    ///   - cookies: The cookies.
    ///   - url: The URL they came with; nil skips the host and scheme checks and the per-response limit.
    ///   - mainDocumentURL: The main document's URL; unused, see `CookieAcceptPolicy.onlyFromMainDocumentDomain`.
    public func setCookies(_ cookies: [Cookie], for url: URL?, mainDocumentURL: URL? = nil) {
        let now = clock()
        var checked: [(cookie: Cookie, site: String)] = []
        for var cookie in cookies {
            if let url {
                guard let host = CookieDomain.canonicalHost(of: url) else { return }
                if cookie.isHostOnly {
                    guard host == cookie.domain else { continue }
                } else {
                    guard
                        let resolved = CookieDomain.cookieDomain(
                            attribute: cookie.domain, host: host,
                            publicSuffixList: publicSuffixList)
                    else { continue }
                    (cookie.domain, cookie.isHostOnly) = resolved
                }
                guard !cookie.isSecure || CookieDomain.isSecureOrigin(url) else { continue }
            }
            checked.append((cookie, site(of: cookie)))
        }
        state.withLock { state in
            guard state.acceptPolicy != .never else { return }
            var taken = 0
            for (cookie, site) in checked {
                if let url {
                    guard taken < state.limits.maximumCookiesPerResponse else { break }
                    if Self.wouldShadowSecureCookie(cookie, from: url, in: state, now: now) { continue }
                }
                if Self.insert(cookie, site: site, into: &state, now: now) { taken += 1 }
            }
        }
    }

    /// Stores the cookies of every `Set-Cookie` field in a response to `url` under the accept policy and the rules
    /// of `Cookie.init?(setCookie:for:now:publicSuffixList:)`, checked against `publicSuffixList`, and within the
    /// limits: a cookie whose name and value exceed `CookieLimits.maximumNameValueBytes` is ignored, and only the
    /// first `CookieLimits.maximumCookiesPerResponse` cookies are taken.
    /// - Returns: How many fields set or deleted a cookie (the others were ignored).
    @discardableResult
    public func storeCookies(fromResponseHeaders headers: HTTPHeaders, for url: URL) -> Int {
        // Most responses set none: one scan of the names, no array made.
        guard headers.contains(name: "Set-Cookie") else { return 0 }
        return store(setCookieFields: headers["Set-Cookie"], for: url)
    }

    /// `storeCookies(fromResponseHeaders:for:)` for a response's `Set-Cookie` values, taken out already (the cookie
    /// stage asks the response whether it has any before it takes them).
    /// - Returns: How many fields set or deleted a cookie.
    @discardableResult
    package func store(setCookieFields fields: [String], for url: URL) -> Int {
        let now = clock()
        let limits = self.limits
        var parsed: [(cookie: Cookie, site: String)] = []
        for field in fields {
            guard parsed.count < limits.maximumCookiesPerResponse else { break }
            guard let cookie = Cookie(setCookie: field, for: url, now: now, publicSuffixList: publicSuffixList),
                limits.admits(cookie)
            else { continue }
            parsed.append((cookie, site(of: cookie)))
        }
        return state.withLock { state in
            guard state.acceptPolicy != .never else { return 0 }
            var stored = 0
            for (cookie, site) in parsed.prefix(max(0, state.limits.maximumCookiesPerResponse))
            where !Self.wouldShadowSecureCookie(cookie, from: url, in: state, now: now) {
                if Self.insert(cookie, site: site, into: &state, now: now) { stored += 1 }
            }
            return stored
        }
    }

    /// Removes the cookie with `cookie`'s name, domain and path.
    public func deleteCookie(_ cookie: Cookie) {
        _ = state.withLock { $0.remove(cookie.key) }
    }

    /// Removes the cookies created at or after `date`.
    public func removeCookies(since date: Date) {
        state.withLock { state in state.removeAll { $0.creationTime >= date } }
    }

    /// Removes every cookie.
    public func removeAllCookies() {
        state.withLock { state in
            state.cookies.removeAll()
            state.perSite.removeAll()
        }
    }

    /// RFC 6265bis §5.7 step 16 ("leave secure cookies alone"): an insecure origin may not set a non-Secure cookie
    /// that would overwrite or shadow a Secure one of the same name, a domain matching either way and a path the
    /// new cookie's path-matches; otherwise a man in the middle of plain http could replace a session cookie.
    private static func wouldShadowSecureCookie(_ cookie: Cookie, from url: URL, in state: State, now: Date) -> Bool {
        guard !cookie.isSecure, !CookieDomain.isSecureOrigin(url) else { return false }
        return state.cookies.values.contains { entry in
            let existing = entry.cookie
            return existing.isSecure && existing.name == cookie.name && !existing.isExpired(at: now)
                && (CookieDomain.domainMatches(existing.domain, cookie.domain)
                    || CookieDomain.domainMatches(cookie.domain, existing.domain))
                && CookiePath.matches(cookie.path, cookiePath: existing.path)
        }
    }

    /// Drops expired cookies (RFC 6265 §5.3: "the user agent MUST evict all expired cookies").
    private static func purge(_ state: inout State, now: Date) {
        if state.cookies.values.contains(where: { $0.cookie.isExpired(at: now) }) {
            state.removeAll { $0.isExpired(at: now) }
        }
    }

    /// The site `cookie` counts against: its domain's registrable domain, or the domain itself when it has none.
    private func site(of cookie: Cookie) -> String {
        if CookieDomain.isIPAddress(cookie.domain) { return cookie.domain }
        return publicSuffixList.registrableDomain(of: cookie.domain) ?? cookie.domain
    }

    /// Stores `cookie` (RFC 6265 §5.3 steps 11–12: a replacement keeps the old creation time; an expired cookie only
    /// deletes) within the limits: a new cookie beyond its site's or the storage's count evicts the least recently
    /// used, expired cookies first.
    /// - Returns: Whether the cookie was stored or deleted one; false when it was refused.
    @discardableResult
    private static func insert(_ cookie: Cookie, site: String, into state: inout State, now: Date) -> Bool {
        guard cookie.isStorable, state.limits.admits(cookie) else { return false }
        let key = cookie.key
        guard !cookie.isExpired(at: now) else {
            state.remove(key)
            return true
        }
        var stored = cookie
        let sequence: UInt64
        var site = site
        if let old = state.cookies[key] {
            stored.creationTime = old.cookie.creationTime
            sequence = old.sequence
            site = old.site
        } else {
            let perSite = state.limits.maximumCookiesPerDomain
            let total = state.limits.maximumCookies
            guard perSite > 0, total > 0 else { return false }
            if state.perSite[site, default: 0] >= perSite || state.cookies.count >= total { purge(&state, now: now) }
            while state.perSite[site, default: 0] >= perSite, state.evictLeastRecentlyUsed(of: site) {}
            while state.cookies.count >= total, state.evictLeastRecentlyUsed(of: nil) {}
            sequence = state.nextSequence
            state.nextSequence += 1
            state.perSite[site, default: 0] += 1
        }
        state.cookies[key] = Entry(cookie: stored, sequence: sequence, lastUsed: state.nextUse(), site: site)
        return true
    }
}
