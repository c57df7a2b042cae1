/// How a redirect changes the request that follows it (RFC 9110 §15.4): one set of rules for Wire's `HTTPClient` and
/// for WireClient, which follows redirects itself.
package enum RedirectRewrite {
    /// The statuses that redirect.
    package static let statuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Whether the next hop becomes a GET without a body: 303 turns every method but HEAD into GET; 301 and 302 turn
    /// POST into GET (what every client does); 307 and 308 keep method and body. Methods are case-sensitive.
    package static func becomesGET(status: Int, method: String) -> Bool {
        switch status {
        case 303: method != "HEAD" && method != "GET"
        case 301, 302: method == "POST"
        default: false
        }
    }

    /// The fields that describe a body: removed with the body when the next hop becomes a GET.
    package static let bodyFields = ["content-length", "content-type", "transfer-encoding", "content-encoding"]

    /// The fields that carry credentials: they belong to the origin they were given to, and are removed when the next
    /// hop leaves it.
    package static let credentialFields = ["authorization", "proxy-authorization", "cookie"]

    /// Rewrites `headers` for the next hop.
    /// - Parameters:
    ///   - headers: The fields of the request just sent.
    ///   - droppingBody: The next hop is a GET without the body.
    ///   - leavingOrigin: The next hop's scheme, host or port differs.
    package static func rewrite(_ headers: inout HTTPHeaders, droppingBody: Bool, leavingOrigin: Bool) {
        if droppingBody {
            for name in bodyFields { headers.remove(name: name) }
        }
        if leavingOrigin {
            for name in credentialFields { headers.remove(name: name) }
        }
    }
}
