import Wire

/// A followed redirect as `-v` and `-i` show it: from Wire's metrics, or from the tool's own redirect loop.
struct RedirectStep: Sendable {
    /// The URL requested.
    var url: HTTPURL
    /// The request head as written.
    var requestHead: [UInt8]
    /// The redirect response's head.
    var responseHead: HTTPResponseHead
}

extension Fetcher {
    /// Sends `plan`'s request with the cookie engine: the tool follows redirects itself (Wire's client has no
    /// per-hop header hook), so every hop carries the cookies for its own URL and every response's `Set-Cookie`,
    /// the redirects' included, is stored before the next hop. The rules are Wire's own (`RedirectRewrite`: method
    /// and body per status, credentials dropped when the origin changes), with `--max-redirs` and `--max-time` over
    /// the whole chain.
    /// - Returns: The final response and the redirects followed before it.
    func executeWithCookies(
        _ plan: RequestBuilder.Plan, engine: CookieEngine,
        client: HTTPClient
    ) async throws(TransferFailure) -> (HTTPClientResponse, [RedirectStep]) {
        let start = ContinuousClock.now
        var request = plan.request
        request.redirects = .disallow
        var url: HTTPURL
        do { url = try HTTPURL(request.url) } catch { throw TransferFailure(error) }
        var steps: [RedirectStep] = []
        while true {
            var hop = request
            // A Cookie field given with -H is the caller's own and is left as it is.
            if !hop.headers.contains(name: "Cookie"), let field = engine.header(for: url) {
                hop.headers.add(name: "Cookie", value: field)
            }
            var remaining: Duration?
            if let maxTime = options.maxTime {
                remaining = maxTime - (ContinuousClock.now - start)
                if let left = remaining, left <= .zero {
                    let seconds = JSONSummaryWriter.seconds(maxTime)
                    throw TransferFailure(
                        status: ExitStatus.timedOut,
                        message: "operation timed out: the transfer took longer than --max-time \(seconds)s")
                }
            }
            let response: HTTPClientResponse
            do { response = try await client.execute(hop, timeout: remaining) } catch { throw failure(error) }
            engine.store(response.headers, from: url)
            let status = Int(response.status.code)
            guard options.followRedirects, RedirectRewrite.statuses.contains(status),
                let location = response.headers.first(name: "location")
            else {
                return (response, steps)
            }
            if let max = options.maxRedirects, steps.count >= max {
                _ = try? await response.body.collect(upTo: 64 * 1024)
                throw TransferFailure(
                    status: ExitStatus.tooManyRedirects,
                    message: "too many redirects: more than \(max), the last to \(location)")
            }
            let next: HTTPURL
            do { next = try url.resolving(location) } catch { throw TransferFailure(error) }
            guard next.scheme == "http" || next.scheme == "https" else {
                throw TransferFailure(
                    status: ExitStatus.generic,
                    message: "redirect refused: protocol \"\(next.scheme)\" not allowed (to \(location))")
            }
            if url.isTLS && !next.isTLS && !client.configuration.followsRedirectsFromHTTPSToHTTP {
                throw TransferFailure(
                    status: ExitStatus.tooManyRedirects,
                    message: "redirect refused: from https to http (to \(next))")
            }
            let becomesGET = RedirectRewrite.becomesGET(status: status, method: request.method.rawValue)
            if becomesGET {
                request.method = .get
                request.body = nil
            } else if case .stream = request.body {
                // A streamed body cannot be sent twice: the redirect is the answer, as with Wire's own following.
                return (response, steps)
            }
            RedirectRewrite.rewrite(&request.headers, droppingBody: becomesGET, leavingOrigin: !next.isSameOrigin(as: url))
            // Read a small redirect body so the connection can serve the next hop.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            steps.append(
                RedirectStep(
                    url: url, requestHead: response.metrics.snapshot.requestHead,
                    responseHead: response.head))
            url = next
            request.url = next.description
        }
    }
}
