public import FoundationEssentials
public import Wire
import Synchronization

/// A thread-safe cookie jar (HTTPCookieStorage) with RFC 6265's storage and retrieval rules.
///
/// `SessionConfiguration.httpCookieStorage` is `CookieStorage.shared` by default: sessions of one process share it,
/// in memory. `.ephemeral` configurations get a storage of their own. `loadCookies(fromFile:)` and
/// `saveCookies(toFile:)` read and write curl's Netscape cookie-file format.
///
/// ```swift
/// let jar = CookieStorage()
/// jar.storeCookies(fromResponseHeaders: response.headers, for: response.url)
/// let field = jar.cookieHeader(for: URL(string: "https://example.com/app")!)   // "id=1; theme=dark"
/// ```
public final class CookieStorage: Sendable {
    /// The process-wide storage that sessions use by default.
    public static let shared = CookieStorage()

    private struct State {
        /// Each cookie with its insertion number, which breaks ties of equal creation times.
        var cookies: [Cookie.Key: (cookie: Cookie, sequence: UInt64)] = [:]
        var acceptPolicy = CookieAcceptPolicy.always
        var nextSequence: UInt64 = 0

        /// The entries matching `include`, in `Cookie` field order.
        func sorted(where include: (Cookie) -> Bool) -> [Cookie] {
            cookies.values.filter { include($0.cookie) }.sorted { a, b in
                if a.cookie.path.count != b.cookie.path.count { return a.cookie.path.count > b.cookie.path.count }
                if a.cookie.creationTime != b.cookie.creationTime { return a.cookie.creationTime < b.cookie.creationTime }
                return a.sequence < b.sequence
            }.map(\.cookie)
        }
    }

    private let state = Mutex(State())
    let clock: @Sendable () -> Date
    /// The list `Domain` attributes are checked against.
    public let publicSuffixList: PublicSuffixList

    /// An empty storage.
    /// - Parameters:
    ///   - publicSuffixList: The list a `Domain` attribute is checked against; the system's by default.
    ///   - now: The clock for expiry and creation times; the system's by default (tests inject one).
    public init(publicSuffixList: PublicSuffixList = .system, now: @escaping @Sendable () -> Date = { Date() }) {
        self.publicSuffixList = publicSuffixList
        clock = now
    }

    /// Which cookies `setCookies(_:for:mainDocumentURL:)` and `storeCookies(fromResponseHeaders:for:)` accept.
    /// `.always` by default.
    public var acceptPolicy: CookieAcceptPolicy {
        get { state.withLock { $0.acceptPolicy } }
        set { state.withLock { $0.acceptPolicy = newValue } }
    }

    /// Every cookie that has not expired, in `Cookie` field order.
    public var cookies: [Cookie] {
        let now = clock()
        return state.withLock { state in
            Self.purge(&state, now: now)
            return state.sorted { _ in true }
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

    /// The cookies to send with a request to `url` (RFC 6265 §5.4): matching domain and path, `Secure` ones only
    /// over https (or to a loopback host), none expired; longer paths first, then earlier creation.
    public func cookies(for url: URL) -> [Cookie] {
        // The common case of a service that never got a cookie: no clock read, no purge, no filtered copy.
        if state.withLock({ $0.cookies.isEmpty }) { return [] }
        let now = clock()
        return state.withLock { state in
            guard !state.cookies.isEmpty else { return [] }
            Self.purge(&state, now: now)
            return state.sorted { $0.matches(url, at: now) }
        }
    }

    /// The `Cookie` field value for a request to `url` (`name=value; name2=value2`), nil when no cookie matches.
    public func cookieHeader(for url: URL) -> String? {
        let matching = cookies(for: url)
        guard !matching.isEmpty else { return nil }
        return matching.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// Stores `cookie` as it is (no policy or domain check), replacing the cookie with the same name, domain and
    /// path and keeping its creation time; an expired `cookie` removes that cookie instead. A cookie with an empty
    /// name or a control character (a tab included) in its name, value or path is not stored.
    public func setCookie(_ cookie: Cookie) {
        let now = clock()
        state.withLock { Self.insert(cookie, into: &$0, now: now) }
    }

    /// Stores cookies received for `url` under the accept policy (HTTPCookieStorage's method). A cookie whose domain
    /// `url`'s host does not domain-match is refused, as is one whose domain is a public suffix other than that host
    /// (see `publicSuffixList`; a cookie for the host itself then becomes host-only) and a `Secure` one for an http
    /// `url` to a host other than a loopback one.
    /// - Parameters:
    ///   - cookies: The cookies.
    ///   - url: The URL they came with; nil skips the host and scheme checks.
    ///   - mainDocumentURL: The main document's URL; unused, see `CookieAcceptPolicy.onlyFromMainDocumentDomain`.
    public func setCookies(_ cookies: [Cookie], for url: URL?, mainDocumentURL: URL? = nil) {
        let now = clock()
        state.withLock { state in
            guard state.acceptPolicy != .never else { return }
            for var cookie in cookies {
                if let url {
                    guard let host = CookieDomain.canonicalHost(of: url) else { continue }
                    if cookie.isHostOnly {
                        guard host == cookie.domain else { continue }
                    } else {
                        guard let resolved = CookieDomain.cookieDomain(attribute: cookie.domain, host: host,
                                                                       publicSuffixList: publicSuffixList) else { continue }
                        (cookie.domain, cookie.isHostOnly) = resolved
                    }
                    guard !cookie.isSecure || CookieDomain.isSecureOrigin(url) else { continue }
                    if Self.wouldShadowSecureCookie(cookie, from: url, in: state, now: now) { continue }
                }
                Self.insert(cookie, into: &state, now: now)
            }
        }
    }

    /// Stores the cookies of every `Set-Cookie` field in a response to `url` under the accept policy and the rules
    /// of `Cookie.init?(setCookie:for:now:publicSuffixList:)`, checked against `publicSuffixList`.
    /// - Returns: How many fields set or deleted a cookie (the others were ignored).
    @discardableResult
    public func storeCookies(fromResponseHeaders headers: HTTPHeaders, for url: URL) -> Int {
        // Most responses set none: one scan of the names, no array made.
        guard headers.contains(name: "Set-Cookie") else { return 0 }
        let fields = headers["Set-Cookie"]
        let now = clock()
        let parsed = fields.compactMap { Cookie(setCookie: $0, for: url, now: now, publicSuffixList: publicSuffixList) }
        return state.withLock { state in
            guard state.acceptPolicy != .never else { return 0 }
            var stored = 0
            for cookie in parsed where !Self.wouldShadowSecureCookie(cookie, from: url, in: state, now: now) {
                Self.insert(cookie, into: &state, now: now)
                stored += 1
            }
            return stored
        }
    }

    /// Removes the cookie with `cookie`'s name, domain and path.
    public func deleteCookie(_ cookie: Cookie) {
        _ = state.withLock { $0.cookies.removeValue(forKey: cookie.key) }
    }

    /// Removes the cookies created at or after `date`.
    public func removeCookies(since date: Date) {
        state.withLock { state in state.cookies = state.cookies.filter { $0.value.cookie.creationTime < date } }
    }

    /// Removes every cookie.
    public func removeAllCookies() {
        state.withLock { $0.cookies.removeAll() }
    }

    /// RFC 6265bis §5.7 step 16 ("leave secure cookies alone"): an insecure origin may not set a non-Secure cookie
    /// that would overwrite or shadow a Secure one of the same name, a domain matching either way and a path the
    /// new cookie's path-matches; otherwise a man in the middle of plain http could replace a session cookie.
    private static func wouldShadowSecureCookie(_ cookie: Cookie, from url: URL, in state: State, now: Date) -> Bool {
        guard !cookie.isSecure, !CookieDomain.isSecureOrigin(url) else { return false }
        return state.cookies.values.contains { entry in
            let existing = entry.cookie
            return existing.isSecure && existing.name == cookie.name && !existing.isExpired(at: now)
                && (CookieDomain.domainMatches(existing.domain, cookie.domain) || CookieDomain.domainMatches(cookie.domain, existing.domain))
                && CookiePath.matches(cookie.path, cookiePath: existing.path)
        }
    }

    /// Drops expired cookies (§5.3: "the user agent MUST evict all expired cookies").
    private static func purge(_ state: inout State, now: Date) {
        if state.cookies.values.contains(where: { $0.cookie.isExpired(at: now) }) {
            state.cookies = state.cookies.filter { !$0.value.cookie.isExpired(at: now) }
        }
    }

    /// §5.3 steps 11–12: a replacement keeps the old creation time; an expired cookie only deletes. A cookie that
    /// could break the field it is sent in (or a cookie file) is refused, however it was made.
    private static func insert(_ cookie: Cookie, into state: inout State, now: Date) {
        guard cookie.isStorable else { return }
        let key = cookie.key
        guard !cookie.isExpired(at: now) else {
            state.cookies.removeValue(forKey: key)
            return
        }
        var stored = cookie
        let sequence: UInt64
        if let old = state.cookies[key] {
            stored.creationTime = old.cookie.creationTime
            sequence = old.sequence
        } else {
            sequence = state.nextSequence
            state.nextSequence += 1
        }
        state.cookies[key] = (stored, sequence)
    }
}
