import Wire

/// Cookies, as a stage of the transfer chain: every hop (each redirect's too) carries the storage's cookies for its
/// own URL, and every response head's `Set-Cookie` fields are stored under the accept policy. A request whose
/// `shouldHandleCookies` is false (or the configuration's, when the request leaves it nil) neither sends nor stores
/// any. A `Cookie` field the caller set (on the request or in the session's additional fields) is left as it is
/// and no stored cookie is added (NSURLSession's rule).
///
/// The `Cookie` field goes on the request below this stage only: the stages above keep the request without it, so
/// a redirect's next hop gets the cookies of its own URL, never the last hop's.
struct CookieStage: TransferStage {
    /// Where cookies are kept.
    let storage: CookieStorage
    /// Whether requests that leave `shouldHandleCookies` nil handle cookies.
    let handlesCookiesByDefault: Bool
    /// Which cookies from responses are stored.
    let acceptPolicy: CookieAcceptPolicy
    /// Whether the session's additional fields carry a `Cookie` of their own.
    let sessionSetsCookieField: Bool

    @inline(__always) nonisolated(nonsending) func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
        let request = chain.request
        guard request.shouldHandleCookies ?? handlesCookiesByDefault else { return try await chain.proceed(request) }
        // The storage first: most have no cookie for the URL, and then the fields are not scanned.
        guard let field = storage.cookieHeader(for: request.url), !sessionSetsCookieField,
            !request.headers.contains(name: "Cookie")
        else {
            let answer = try await chain.proceed(request)
            store(answer, for: request)
            return answer
        }
        var sent = request
        sent.headers.add(name: "Cookie", value: field)
        var answer = try await chain.proceed(sent)
        store(answer, for: request)
        answer.request = request
        return answer
    }

    /// Stores the `Set-Cookie` fields of a hop's head (a redirect's too) under the accept policy.
    private func store(_ answer: StageResponse, for request: ClientRequest) {
        guard acceptPolicy != .never else { return }
        storage.storeCookies(fromResponseHeaders: answer.response.headers, for: request.url)
    }
}
