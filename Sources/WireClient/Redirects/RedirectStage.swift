import Wire

/// Redirects, as a stage of the transfer chain: a 301, 302, 303, 307 or 308 with a `Location` is followed
/// (`RedirectRules` make the next request; the redirect hooks may change it or stop there), up to `maximumRedirects`
/// hops; one more fails the task with `.tooManyRedirects`. A redirect's body is read up to 64 KiB and dropped, so its
/// connection can be reused.
struct RedirectStage: ComposableStage {
    /// Hops followed at most.
    let maximumRedirects: Int

    @inline(__always) nonisolated(nonsending) func intercept<Rest: RestOfChain>(
        _ request: ClientRequest, in transfer: any TransferContext, then rest: Rest
    ) async throws(ClientError) -> StageResponse {
        var request = request
        var redirects = 0
        while true {
            let answer = try await rest.proceed(request, in: transfer)
            // The request the hop answered as the stages below it left it (a challenge's answer kept, no cookies).
            let answered = answer.request
            // The fields are read only for a redirect status (`location` is an autoclosure).
            switch RedirectRules.next(
                after: answered, status: answer.response.statusCode,
                location: answer.response.headers.first(name: "Location"))
            {
            case .deliver:
                return answer
            case .fail(let error):
                throw error
            case .follow(let proposed, let keepsBody):
                redirects += 1
                guard redirects <= maximumRedirects else {
                    throw ClientError(
                        .tooManyRedirects, failingURL: answered.url, response: answer.response,
                        failureReason: "more than \(maximumRedirects) redirects")
                }
                guard let next = await transfer.proposeRedirect(proposed, keepsBody: keepsBody, after: answer.response) else {
                    return answer
                }
                await answer.body.discard()
                transfer.setCurrentRequest(next)
                request = next
            }
        }
    }
}
