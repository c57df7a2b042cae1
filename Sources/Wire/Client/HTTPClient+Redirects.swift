extension HTTPClient {
    /// Sends `request` and follows the redirects the configuration allows: the method and body rules of RFC 9110
    /// §15.4, credentials dropped when a hop leaves the origin, and only `http` and `https` as destinations. Each hop
    /// is tried again, on another connection, after the failures `retryOrThrow` allows.
    // Each hop's attempts are written out here, not called: the compiler inlines no async function this large on its
    // own, and the call copied the request's parts, eleven arguments, into the callee's frame. Inlined into `execute`
    // by force: one async frame per request instead of two (an allocation on the task and its release fewer, and the
    // call's context), about 300 instructions.
    @inline(__always) nonisolated(nonsending) func followRedirects(
        _ request: HTTPClientRequest, metrics: HTTPClientMetrics
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
            let response: HTTPClientResponse
            let route = try proxyRoute(of: request, to: url)
            var retries = RetryCount(
                replayable: (method.isIdempotent || headers.contains(name: "idempotency-key")) && (body?.isReplayable ?? true))
            while true {
                // Aborted before this attempt took a connection (its abort handle, a deadline, cancellation): no byte
                // goes out.
                if let error = metrics.abortError { throw error }
                let pipelinable =
                    configuration.pipelining.maxInFlight > 1 && request.allowsPipelining
                    && isPipelinable(method: method, headers: headers, body: body)
                let pool = try pool(for: url, via: socketPath, requirements: request.connectionRequirements, route: route)
                // Made ready before it takes a connection: a request refused here holds none.
                let prepared = try prepare(url: url, method: method, headers: headers, body: body, on: pool)
                // An idle connection at hand is taken without an async call (no frames, no suspension point).
                let lease: ConnectionPool.Lease
                if let idle = pool.leaseIdleConnection(pipelinable: pipelinable) {
                    lease = idle
                    metrics.update { $0.queued = .zero }
                } else {
                    let asked = Deadline.now()
                    lease = try await self.lease(
                        from: pool, pipelinable: pipelinable, call: metrics.listener != nil ? metrics.call : nil,
                        metrics: metrics)
                    // Until its connection began opening (when new; its setup is in the timings), or was handed over.
                    let waited = (lease.openStarted ?? lease.handedOver).map { $0 - asked } ?? .zero
                    metrics.update { $0.queued = Swift.max(.zero, waited) }
                }
                metrics.emit(.connectionAcquired(reused: !lease.isNew), connection: lease.number)
                do throws(HTTPClientError) {
                    response = try await send(
                        prepared, on: lease, url: url, method: method, body: body, metrics: metrics,
                        observation: observation, pool: pool)
                } catch {
                    try retryOrThrow(error, on: lease, count: &retries, observation: observation, metrics: metrics)
                    continue
                }
                break
            }
            // A switch, not an array literal's `contains` (an allocation per request).
            let isRedirect =
                switch response.status.code {
                case 301, 302, 303, 307, 308: true;
                default: false
                }
            guard isRedirect, let location = response.headers.first(name: "location") else {
                return response
            }
            guard
                let (next, nextMethod, nextBody) = try await nextHop(
                    after: response, to: location, request: request, url: url, origin: origin, method: method,
                    headers: &headers, body: body, redirects: &redirects, metrics: metrics, observation: observation)
            else { return response }
            url = next
            method = nextMethod
            body = nextBody
        }
    }

    /// The route of `request`'s hop to `url`: through the request's own proxy configuration, else the client's.
    // Synchronous and never inlined: the proxy configurations it reads (a hundred bytes each) would otherwise be slots of
    // every request's async frame. The client's own is read in place unless the request has one (`??` would copy it).
    @inline(never)
    private func proxyRoute(of request: HTTPClientRequest, to url: HTTPURL) throws(HTTPClientError) -> ProxyRoute {
        if let proxyConfiguration = request.proxy {
            return try proxyRoute(for: url, via: request.unixSocketPath, configuration: proxyConfiguration)
        }
        return try proxyRoute(for: url, via: request.unixSocketPath, configuration: configuration.proxy)
    }

    /// Decides where a redirect `response` to `location` leads under the request's policy and, when it is followed,
    /// reads its body, records the hop and returns the next hop's URL, method and body (having rewritten `headers` and
    /// counted `redirects`); nil hands `response` to the caller.
    // Out of `followRedirects`, and never inlined into it: its values (the hop's proposal and record, the policy) would
    // otherwise be slots of every request's async frame, redirected or not, spreading the slots a plain request writes
    // over more cache lines.
    @inline(never)
    nonisolated(nonsending) private func nextHop(
        after response: HTTPClientResponse, to location: String, request: HTTPClientRequest, url: HTTPURL,
        origin: HTTPURL, method: HTTPMethod, headers: inout HTTPHeaders, body: HTTPClientRequest.BodyBox?,
        redirects: inout Int, metrics: HTTPClientMetrics, observation: RequestObservation?
    ) async throws(HTTPClientError) -> (HTTPURL, HTTPMethod, HTTPClientRequest.BodyBox?)? {
        // Read only for a redirect: a copy of the policy per request costs its closure's retain and release.
        let policy = request.redirects ?? configuration.redirects
        let max: Int
        switch policy {
        case .disallow: return nil
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
            return nil
        }
        let proposal = HTTPClientConfiguration.RedirectHop(from: url, to: next, status: response.status, method: nextMethod)
        do {
            switch policy {
            case .disallow:
                return nil
            case .follow(_, let hop):
                if let hop, try !hop(proposal) {
                    throw HTTPClientError(.redirectRefused, "redirect to \(next) refused")
                }
            case .rewrite(_, let hop):
                guard let chosen = try hop(proposal) else { return nil }
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
        return (next, nextMethod, nextBody)
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
