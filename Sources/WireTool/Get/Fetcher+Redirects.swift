import Wire
import WireClient

/// A followed redirect as `-v` and `-i` show it.
struct RedirectStep: Sendable {
    /// The URL requested.
    var url: HTTPURL
    /// The request head as written.
    var requestHead: [UInt8]
    /// The redirect response's head.
    var responseHead: HTTPResponseHead
}

extension Fetcher {
    /// Sends `plan`'s request and, with `-L`, follows its redirects the way curl does. The tool follows them itself
    /// (Wire's client has no per-hop header hook): every hop carries the cookies for its own URL and every response's
    /// `Set-Cookie`, the redirects' included, is stored before the next hop.
    ///
    /// curl's rules, hop by hop:
    /// - a 301 or 302 turns a POST into a GET without its body unless `--post301`/`--post302`, a 303 turns anything
    ///   but HEAD into one unless `--post303` (for a POST); 307 and 308 keep method and body (`RedirectRewrite`);
    /// - `-X` names the method of every hop: a POST turned into a GET is still sent with `-X`'s name, without a body;
    /// - credentials (`Authorization`, `Cookie`) go only to the origin they were given for, unless
    ///   `--location-trusted`; `Host` names the hop's host;
    /// - with `-e ';auto'`, each hop sends the URL it came from as `Referer`;
    /// - `--max-redirs` and `--max-time` hold over the whole chain.
    /// - Returns: The final response and the redirects followed before it.
    func execute(
        _ plan: RequestBuilder.Plan, builder: RequestBuilder,
        client: HTTPClient
    ) async throws(TransferFailure) -> (HTTPClientResponse, [RedirectStep]) {
        let start = ContinuousClock.now
        var request = plan.request
        request.redirects = .disallow
        // The URL as parsed for the plan, not re-read from the request: with --request-target the request's URL
        // carries a target (`*`) that no URL text spells.
        var url = plan.displayURL
        var effectiveMethod = builder.impliedMethod
        var steps: [RedirectStep] = []
        var challengeAnsweredFor: HTTPURL?
        var staleAnswered = false
        while true {
            try builder.checkRoute(to: url)
            var hop = request
            // A Cookie field given with -H is the caller's own and is left as it is.
            if let cookies, !hop.headers.contains(name: "Cookie"), let field = cookies.header(for: url) {
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
            hop.proxy = try proxyChoice(for: url).configuration
            observation?.attach(to: &hop, url: url)
            recorder?.attach(to: &hop, url: url)
            let response: HTTPClientResponse
            do { response = try await client.execute(hop, timeout: remaining) } catch {
                // A refused CONNECT is shown as curl shows it: the request sent and the proxy's answer.
                if options.verbose,
                    let text = Self.verboseRefusedConnect(error, url: url, note: (try? proxyChoice(for: url))?.note)
                {
                    try? standardError.write(text)
                }
                throw failure(error)
            }
            observation?.answered(response)
            recorder?.answered(response)
            cookies?.store(response.headers, from: url)
            let status = Int(response.status.code)
            // --digest, --anyauth: a 401's challenge is answered once per URL, on the same request, and once more
            // when the server says only that the nonce went stale.
            if status == 401, challengeAnsweredFor != url || !staleAnswered && Self.isStale(response.headers),
                let value = challengeAnswer(to: response.headers, hop: hop)
            {
                if challengeAnsweredFor == url { staleAnswered = true }
                challengeAnsweredFor = url
                _ = try? await response.body.collect(upTo: 64 * 1024)
                request.headers.remove(name: "Authorization")
                request.headers.add(name: "Authorization", value: value)
                continue
            }
            guard options.followRedirects, RedirectRewrite.statuses.contains(status),
                let location = response.headers.first(name: "location")
            else {
                if let observation, RedirectRewrite.statuses.contains(status),
                    let location = response.headers.first(name: "location")
                {
                    // -w's redirect_url: where the redirect not followed points.
                    observation.setRedirectURL((try? url.resolving(location))?.description)
                }
                return (response, steps)
            }
            if let max = options.maxRedirects, steps.count >= max {
                _ = try? await response.body.collect(upTo: 64 * 1024)
                throw TransferFailure(
                    status: ExitStatus.tooManyRedirects,
                    message: "too many redirects: maximum (\(max)) redirects followed, the last to \(location)")
            }
            var next: HTTPURL
            do {
                next = try url.resolving(location)
                if !options.pathAsIs { next = try HTTPURL(URLPath.removingDotSegments(fromURL: next.description)) }
            } catch {
                throw TransferFailure(error)
            }
            guard next.scheme == "http" || next.scheme == "https" else {
                throw TransferFailure(
                    status: ExitStatus.generic,
                    message: "protocol \"\(next.scheme)\" not allowed in a redirect (to \(location))")
            }
            if url.isTLS && !next.isTLS && !client.configuration.followsRedirectsFromHTTPSToHTTP {
                throw TransferFailure(
                    status: ExitStatus.tooManyRedirects,
                    message: "redirect refused: from https to http (to \(next))")
            }
            let kept = effectiveMethod == .post && options.postRedirects.contains(status)
            let becomesGET = !kept && RedirectRewrite.becomesGET(status: status, method: effectiveMethod.rawValue)
            if becomesGET {
                effectiveMethod = .get
                request.body = nil
            } else if case .stream = request.body {
                // A streamed body cannot be sent twice: the redirect is the answer, as with Wire's own following.
                return (response, steps)
            }
            request.method = options.method ?? effectiveMethod
            let leavingOrigin = !next.isSameOrigin(as: url)
            RedirectRewrite.rewrite(
                &request.headers, droppingBody: becomesGET, leavingOrigin: leavingOrigin && !options.locationTrusted)
            if leavingOrigin { request.headers.replaceOrAdd(name: "Host", value: next.hostHeader) }
            if options.autoReferer && !options.removedHeaders.contains("referer") {
                // The URL redirected from, without fragment (an HTTPURL has none) and credentials (it never holds any).
                request.headers.replaceOrAdd(name: "Referer", value: url.description)
            }
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

extension Fetcher {
    /// Whether the 401's Digest challenge says the last answer failed only for its stale nonce.
    static func isStale(_ headers: HTTPHeaders) -> Bool {
        DigestChallenge.preferred(in: AuthenticationChallengeField.parse(headers["WWW-Authenticate"]))?.isStale == true
    }

    /// The `Authorization` value answering a 401's challenges with `-u`'s credentials, as curl does: the first Digest
    /// challenge it can answer (RFC 7616), else Basic when offered and allowed (`--anyauth`, `--basic` beside
    /// `--digest`); nil when nothing offered can be answered (the 401 is the result) or the credentials go as Basic
    /// with every request.
    func challengeAnswer(to headers: HTTPHeaders, hop: HTTPClientRequest) -> String? {
        guard let credentials = options.credentials, options.answersChallenges else { return nil }
        let challenges = AuthenticationChallengeField.parse(headers["WWW-Authenticate"])
        if let digest = DigestChallenge.preferred(in: challenges) {
            let uri = (try? HTTPURL(hop.url))?.target ?? "/"
            return digest.authorization(
                user: credentials.user, password: credentials.password, method: hop.method.rawValue, uri: uri)
        }
        if options.authSchemes.contains(.basic), challenges.contains(where: { $0.scheme == "basic" }) {
            return "Basic " + Base64Encoder.encode(Array("\(credentials.user):\(credentials.password)".utf8))
        }
        return nil
    }
}
