import FoundationEssentials
import Wire
import WireClient

/// curl's cookie options for `wire get`: `-b 'name=value; n2=v2'` sends that text as `Cookie`; `-b FILE` loads a
/// Netscape cookie file and turns the cookie engine on (received cookies are stored and sent on later requests and
/// redirect hops of the same run); `-c FILE` writes every cookie, session cookies included, at the end.
struct CookieEngine: Sendable {
    /// The engine's cookies; nil when only a literal `-b` string was given.
    let storage: CookieStorage?
    /// The literal `-b` text.
    let literal: String?
    /// Where `-c` writes; `-` is standard output.
    let jar: String?

    /// The engine for `options`; nil without any cookie option. Cookie files that cannot be read are skipped, as curl
    /// skips them.
    init?(options: FetchOptions) {
        guard options.cookieString != nil || options.cookieEngine else { return nil }
        literal = options.cookieString
        jar = options.cookieJar
        if options.cookieEngine {
            let storage = CookieStorage()
            for file in options.cookieFiles where !file.isEmpty {
                if options.junkSessionCookies {
                    // -j: a new session, as curl starts one: the file's session cookies are not loaded.
                    guard let bytes = try? LocalFiles.contents(atPath: file) else { continue }
                    let contents = NetscapeCookieFile.parse(String(decoding: bytes, as: UTF8.self))
                    for cookie in contents.cookies where !cookie.isSessionOnly { storage.setCookie(cookie) }
                } else {
                    _ = try? storage.loadCookies(fromFile: file)
                }
            }
            self.storage = storage
        } else {
            storage = nil
        }
    }

    /// The `Cookie` field for a request to `url`: the engine's matching cookies, then the literal text.
    func header(for url: HTTPURL) -> String? {
        let stored = Self.foundationURL(url).flatMap { storage?.cookieHeader(for: $0) }
        let parts = [stored, literal].compactMap { $0 }.filter { !$0.isEmpty }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// Stores the `Set-Cookie` fields of a response to `url`, when the engine is on.
    func store(_ headers: HTTPHeaders, from url: HTTPURL) {
        guard let storage, let url = Self.foundationURL(url) else { return }
        storage.storeCookies(fromResponseHeaders: headers, for: url)
    }

    /// Writes the `-c` file, if one was named; a failure is the warning curl prints, not a failed run.
    func saveJar() -> String? {
        guard let jar, let storage else { return nil }
        do {
            if jar == "-" {
                try OutputSink.standardOutput.write(storage.cookieFileText())
            } else {
                try storage.saveCookies(toFile: jar)
            }
            return nil
        } catch {
            return "wire: warning: failed to save cookies in \(jar): \(error)\n"
        }
    }

    /// The URL cookies are matched against: the request's own (with `--unix-socket` it still names the host).
    private static func foundationURL(_ url: HTTPURL) -> URL? {
        URL(string: "\(url.scheme)://\(url.hostHeader)\(url.target)")
    }
}
