import Wire

/// Cookies, as a stage of the transfer chain: every hop (each redirect's too) carries the storage's cookies for its
/// own URL, and every response head's `Set-Cookie` fields are stored under the accept policy. A request whose
/// `shouldHandleCookies` is false (or the configuration's, when the request leaves it nil) neither sends nor stores
/// any. A `Cookie` field the caller set (on the request or in the session's additional fields) is left as it is
/// and no stored cookie is added (NSURLSession's rule). Without a storage, every request passes through.
///
/// The `Cookie` field goes on the request below this stage only: the stages above keep the request without it, so
/// a redirect's next hop gets the cookies of its own URL, never the last hop's.
struct CookieStage: ComposableStage {
    /// Where cookies are kept; nil when the session keeps none.
    let storage: CookieStorage?
    /// Whether requests that leave `shouldHandleCookies` nil handle cookies.
    let handlesCookiesByDefault: Bool
    /// Which cookies from responses are stored.
    let acceptPolicy: CookieAcceptPolicy
    /// Whether the session's additional fields carry a `Cookie` of their own.
    let sessionSetsCookieField: Bool

    @inline(__always) nonisolated(nonsending) func intercept<Rest: RestOfChain>(
        _ request: ClientRequest, in transfer: any TransferContext, then rest: Rest
    ) async throws(ClientError) -> StageResponse {
        // One call of the rest, whatever the case: composed with the stages below (`SessionTail`), each call is a copy
        // of their code.
        let storage = (request.shouldHandleCookies ?? handlesCookiesByDefault) ? self.storage : nil
        var sent: ClientRequest?
        // The storage first: most have no cookie for the URL, and then the fields are not scanned.
        if let field = storage?.cookieHeader(for: request.url), !sessionSetsCookieField,
            !request.headers.contains(name: "Cookie")
        {
            var withCookies = request
            withCookies.headers.add(name: "Cookie", value: field)
            sent = withCookies
        }
        var answer = try await rest.proceed(sent ?? request, in: transfer)
        // Most responses set no cookie: asked in place before the fields are handed over.
        if let storage, acceptPolicy != .never, answer.response.hasField(named: "Set-Cookie") {
            storage.store(setCookieFields: answer.response.headers["Set-Cookie"], for: request.url)
        }
        if sent != nil { answer.request = request }
        return answer
    }
}
