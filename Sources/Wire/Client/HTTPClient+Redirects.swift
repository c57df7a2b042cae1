extension HTTPClient {
    /// Sends `request` and follows the redirects the configuration allows: the method and body rules of RFC 9110
    /// §15.4, credentials dropped when a hop leaves the origin, and only `http` and `https` as destinations. Each hop
    /// is tried again, on another connection, after the failures `retryOrThrow` allows.
    ///
    /// The usual request (no body, no observer, an idle connection at hand) is started by `startFirstAttempt`, a
    /// synchronous call that keeps its values on the thread's stack: across the wait for the response, this frame
    /// holds the URL, two flags of the lease and little else. A request that is not that, and an attempt that ends
    /// in a redirect or in a failure the client may retry, go on in `followRedirectsInGeneral`, whose frame (a few
    /// kilobytes: every hop's and attempt's values) is allocated only then. With a thousand requests in flight, each
    /// line of a frame written before the wait and read after it is a cache miss on both sides.
    // Inlined into `execute` by force: one async frame per request instead of two (an allocation on the task and its
    // release fewer, and the call's context).
    @inline(__always) nonisolated(nonsending) func followRedirects(
        _ request: HTTPClientRequest, metrics: HTTPClientMetrics
    ) async throws(HTTPClientError) -> HTTPClientResponse {
        var attempt = FirstAttempt()
        let outcome = await _unsafeInheritExecutor_withUnsafeContinuation {
            (continuation: UnsafeContinuation<HTTP1ClientConnection.ResponseOutcome, Never>) in
            startFirstAttempt(request, metrics: metrics, into: &attempt, continuation: continuation)
        }
        // The loop may resume the continuation before this task has suspended (see `send`).
        if let resumed = attempt.continuation { ThreadSanitizer.acquire(resumed: resumed) }
        // One call of the general path, not one for each way here: each call's argument was a slot of this frame.
        var carried: CarriedOutcome?
        switch (consume outcome).takeResult() {
        case .success(let start):
            // Only a started attempt succeeds (one not started is resumed with a placeholder failure).
            if let url = attempt.url {
                let response = HTTPClientResponse(start, url: url, metrics: metrics)
                guard Self.mayRedirect(response) else { return response }
                carried = .response(response)
            }
        case .failure(let error):
            if let lease = attempt.lease { carried = .failure(error, on: lease) }
        }
        // A redirect, a failure the client may retry, or (nothing carried) a request the usual path did not start: the
        // general path meets the same refusal and reports it.
        return try await followRedirectsInGeneral(request, metrics: metrics, carrying: carried)
    }

    /// Whether `response` is a redirect with a `Location` (the general path decides whether to follow it).
    static func mayRedirect(_ response: HTTPClientResponse) -> Bool {
        // A switch, not an array literal's `contains` (an allocation per request).
        switch response.status.code {
        case 301, 302, 303, 307, 308: response.headers.first(name: "location") != nil
        default: false
        }
    }

    /// What `startFirstAttempt` started, for `followRedirects` after the response: nil when it started nothing.
    struct FirstAttempt {
        var lease: LeaseKind?
        var url: HTTPURL?
        var continuation: UnsafeContinuation<HTTP1ClientConnection.ResponseOutcome, Never>?
    }

    /// How the attempt `followRedirects` made ended, for the general path to go on from.
    enum CarriedOutcome {
        /// A response that may be a redirect to follow.
        case response(HTTPClientResponse)
        /// A failure that may be retried on another connection.
        case failure(HTTPClientError, on: LeaseKind)
    }

    /// Starts the usual request as the general path's first attempt would (the same checks, pool, head, lease and
    /// records, in the same order), when it is the usual one: no body, no observer, an idle connection at hand. The
    /// connection resumes `continuation` with the response head; when it starts nothing (`attempt` left empty), it
    /// resumes `continuation` itself at once.
    @inline(never)  // Synchronous: its values stay on the thread's stack, off the request's async frame.
    func startFirstAttempt(
        _ request: HTTPClientRequest, metrics: HTTPClientMetrics, into attempt: inout FirstAttempt,
        continuation: UnsafeContinuation<HTTP1ClientConnection.ResponseOutcome, Never>
    ) {
        guard request.bodyBox == nil, request.observer == nil, !metrics.wasAborted,
            let url = try? parsedURL(of: request), let route = try? proxyRoute(of: request, to: url)
        else { return Self.resumeUnstarted(continuation) }
        let pipelinable =
            configuration.pipelining.maxInFlight > 1 && request.allowsPipelining
            && isPipelinable(method: request.method, headers: request.headers, body: nil)
        guard
            let pool = try? pool(
                for: url, via: request.unixSocketPath, requirements: request.connectionRequirements, route: route),
            let prepared = try? prepare(url: url, method: request.method, headers: request.headers, body: nil, on: pool),
            prepared.requestComplete, !prepared.expectsContinue,
            let lease = pool.leaseIdleConnection(pipelinable: pipelinable)
        else { return Self.resumeUnstarted(continuation) }
        metrics.update { $0.queued = .zero }
        metrics.emit(.connectionAcquired(reused: !lease.isNew), connection: lease.number)
        Self.record(lease, head: prepared.headBytes, pool: pool, in: metrics)
        let connection = lease.connection
        attempt = FirstAttempt(lease: LeaseKind(lease), url: url, continuation: continuation)
        // As `send` starts a whole request: at once on the connection's loop, else posted to it.
        if connection.loop.inEventLoop {
            HTTP1ClientConnection.startWhole(
                on: connection, head: prepared.headBytes, inlineBody: prepared.inline, method: request.method,
                keepAlive: prepared.keepAlive, readTimeout: configuration.readTimeout, metrics: metrics, tap: nil,
                responder: .waiter(continuation, handOverVia: nil))
        } else {
            metrics.post(
                PendingStart(
                    connection: connection, head: prepared.headBytes, inlineBody: prepared.inline,
                    method: request.method, keepAlive: prepared.keepAlive, readTimeout: configuration.readTimeout,
                    tap: nil, continuation: continuation))
        }
    }

    /// Resumes a continuation no attempt was started for (`FirstAttempt.lease` stays nil, which is what the caller
    /// reads; the outcome is a placeholder).
    private static func resumeUnstarted(_ continuation: UnsafeContinuation<HTTP1ClientConnection.ResponseOutcome, Never>) {
        continuation.resume(
            returning: HTTP1ClientConnection.ResponseOutcome(
                result: .failure(HTTPClientError(.invalidRequest, "")), started: false))
    }

    /// `followRedirects` for every request the usual path did not finish: it starts from scratch, or from where the
    /// attempt `followRedirects` made (`carrying`) ended, as the first attempt of the first hop.
    @inline(never)
    nonisolated(nonsending) func followRedirectsInGeneral(
        _ request: HTTPClientRequest, metrics: HTTPClientMetrics, carrying carried: CarriedOutcome?
    ) async throws(HTTPClientError) -> HTTPClientResponse {
        var carried = carried
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
            attempts: while true {
                // The attempt `followRedirects` made, as this hop's first.
                switch carried.take() {
                case .response(let carriedResponse)?:
                    response = carriedResponse
                    break attempts
                case .failure(let error, let lease)?:
                    try retryOrThrow(error, on: lease, count: &retries, observation: observation, metrics: metrics)
                    continue attempts
                case nil:
                    break
                }
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
                    try retryOrThrow(
                        error, on: LeaseKind(lease), count: &retries, observation: observation, metrics: metrics)
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
