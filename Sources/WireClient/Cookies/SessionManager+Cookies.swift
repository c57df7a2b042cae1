import FoundationEssentials
import Wire

extension SessionManager {
    /// The storage a request's cookies go through: the configuration's, unless the request or the configuration turns
    /// cookie handling off (§13.2.5).
    private func cookieStorage(for request: ClientRequest) -> CookieStorage? {
        guard request.shouldHandleCookies ?? configuration.shouldHandleCookies else { return nil }
        return configuration.httpCookieStorage
    }

    /// Adds the stored cookies for this hop's URL to the hop's fields, unless the caller set a `Cookie` field of its
    /// own, which is left as it is (NSURLSession's rule). Called for every hop, so a redirect gets the cookies of its
    /// own URL; the field goes on the wire request only, so it is never taken for a caller's on the next hop.
    func addCookies(to headers: inout HTTPHeaders, for request: ClientRequest) {
        // The storage first: most have no cookie for the URL, and then the fields are not scanned.
        guard let storage = cookieStorage(for: request), let field = storage.cookieHeader(for: request.url),
              !headers.contains(name: "Cookie") else { return }
        headers.add(name: "Cookie", value: field)
    }

    /// Stores the `Set-Cookie` fields of a response head (a redirect's too) under the configuration's accept policy.
    func storeCookies(from headers: HTTPHeaders, for request: ClientRequest) {
        guard configuration.httpCookieAcceptPolicy != .never, let storage = cookieStorage(for: request) else { return }
        storage.storeCookies(fromResponseHeaders: headers, for: request.url)
    }
}
