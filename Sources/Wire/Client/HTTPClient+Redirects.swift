extension HTTPClient {
    /// Sends `request` and follows the redirects the configuration allows: the method and body rules of RFC 9110
    /// §15.4, credentials dropped when a hop leaves the origin, and only `http` and `https` as destinations.
    // Inlined into `execute`, its one caller: one async frame fewer per request.
    @inline(__always) nonisolated(nonsending) func followRedirects(
        _ request: HTTPClientRequest, metrics: HTTPClientMetrics, abort: HTTPClientAbortHandle
    ) async throws(HTTPClientError) -> HTTPClientResponse {
        let origin = try parsedURL(of: request)
        var url = origin
        // Checked before a connection is leased: a negative length would reach the serializer.
        if let length = request.bodyBox?.streamLength, length < 0 {
            throw HTTPClientError(.invalidRequest, "the body stream's length is \(length); it must be zero or more")
        }
        var method = request.method
        var headers = request.headers
        var body = request.bodyBox
        let socketPath = request.unixSocketPath
        var redirects = 0
        let observation = request.observer.map {
            RequestObservation(observer: $0, metrics: metrics, observesBytes: request.observesBytes)
        }
        while true {
            let response = try await executeWithRetry(
                url: url, via: socketPath, requirements: request.connectionRequirements,
                allowsPipelining: request.allowsPipelining, proxy: request.proxy, method: method, headers: headers,
                body: body,
                observation: observation,
                metrics: metrics, abort: abort)
            // A switch, not an array literal's `contains` (an allocation per request).
            let isRedirect =
                switch response.status.code {
                case 301, 302, 303, 307, 308: true;
                default: false
                }
            guard isRedirect, let location = response.headers.first(name: "location") else {
                return response
            }
            // Read only for a redirect: a copy of the policy per request costs its closure's retain and release.
            let policy = request.redirects ?? configuration.redirects
            let max: Int
            switch policy {
            case .disallow: return response
            case .follow(let limit, _), .rewrite(let limit, _): max = limit
            }
            guard redirects < max else {
                response.body.channel.cancel()
                throw HTTPClientError(.tooManyRedirects, "more than \(max) redirects, the last to \(location)")
            }
            var next: HTTPURL
            do {
                try Self.checkRedirectScheme(location: location)
                next = try url.resolving(location)
                try checkRedirectTarget(next, from: url, origin: origin)
            } catch {
                response.body.channel.cancel()
                throw error
            }
            var nextMethod = method
            var nextBody = body
            let becomesGET = RedirectRewrite.becomesGET(status: response.status.code, method: method.rawValue)
            if becomesGET {
                nextMethod = .get
                nextBody = nil
            } else if let nextBodyValue = nextBody, !nextBodyValue.isReplayable {
                // A streamed body cannot be sent twice: give the redirect to the caller.
                return response
            }
            let proposal = HTTPClientConfiguration.RedirectHop(from: url, to: next, status: response.status, method: nextMethod)
            do {
                switch policy {
                case .disallow:
                    return response
                case .follow(_, let hop):
                    if let hop, try !hop(proposal) {
                        throw HTTPClientError(.redirectRefused, "redirect to \(next) refused")
                    }
                case .rewrite(_, let hop):
                    guard let chosen = try hop(proposal) else { return response }
                    // The hook's URL is held to the same rules as a Location: it may not open a Unix socket.
                    try checkRedirectTarget(chosen, from: url, origin: origin)
                    next = chosen
                }
            } catch let error as HTTPClientError {
                response.body.channel.cancel()
                throw error
            } catch {
                response.body.channel.cancel()
                throw HTTPClientError(.redirectRefused, "redirect to \(next) refused: \(error)")
            }
            RedirectRewrite.rewrite(&headers, droppingBody: becomesGET, leavingOrigin: !next.isSameOrigin(as: url))
            // Read a small redirect body so the connection can be reused; drop a large one.
            do { _ = try await response.body.collect(upTo: 64 * 1024) } catch {}
            redirects += 1
            let record = HTTPClientMetrics.RedirectHop(
                url: url, requestHead: metrics.snapshot.requestHead, responseHead: response.head)
            metrics.update {
                $0.redirects = redirects
                $0.redirectHops.append(record)
            }
            observation?.tell(.redirect(record))
            url = next
            method = nextMethod
            body = nextBody
        }
    }

    /// The URL of `request` parsed, once while requests name the text the client parsed last, byte for byte: a caller
    /// that sends to one URL again and again (a poller, a load generator) names it by the same text each time, and
    /// comparing texts costs a fraction of parsing one.
    func parsedURL(of request: HTTPClientRequest) throws(HTTPClientError) -> HTTPURL {
        guard let text = request.urlText else { return try request.parsedURL() }
        // Compared in place (`flatMap` copied the entry, text and URL, before comparing).
        if let url = recentURL.withLock({ recent -> HTTPURL? in
            recent?.text.hasSameUTF8(as: text) == true ? recent?.url : nil
        }) {
            return url
        }
        let url = try HTTPURL(text)
        recentURL.withLock { $0 = (text, url) }
        return url
    }

    /// Refuses a `Location` that names a scheme of its own other than `http` or `https`, before it is parsed, so
    /// that schemes the URL parser would refuse anyway (`file`, `gopher`) get the same precise error.
    static func checkRedirectScheme(location: String) throws(HTTPClientError) {
        guard let scheme = HTTPURL.schemeName(of: location)?.lowercased() else { return }
        guard scheme == "http" || scheme == "https" else {
            throw HTTPClientError(.redirectSchemeNotAllowed, "protocol \"\(scheme)\" not allowed in a redirect (to \(location))")
        }
    }

    /// Where a redirect may lead: `http` or `https`, or, for a request the caller sent to a Unix socket, a
    /// relative reference on that same socket. A server may never name a socket itself. `https` to `http` is
    /// followed only when the configuration allows it.
    func checkRedirectTarget(_ next: HTTPURL, from url: HTTPURL, origin: HTTPURL) throws(HTTPClientError) {
        switch next.scheme {
        case "http", "https":
            break
        case "http+unix" where next.isSameOrigin(as: origin):
            break
        default:
            throw HTTPClientError(.redirectSchemeNotAllowed, "protocol \"\(next.scheme)\" not allowed in a redirect (to \(next))")
        }
        if url.scheme == "https" && next.scheme == "http" && !configuration.followsRedirectsFromHTTPSToHTTP {
            throw HTTPClientError(.redirectRefused, "redirect from https to http refused by the configuration (to \(next))")
        }
    }
}
