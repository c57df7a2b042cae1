import FoundationEssentials
import Wire

/// The task's memory of the answers its proxies accepted, so a redirect or a server's challenge that replays the
/// request sends the proxy's authorization again without a second 407.
protocol ProxyChallengeAnswering: ChallengeAnswering {
    /// The proxy with the answer last sent to it (its `Proxy-Authorization` in `headers`), if any.
    func proxyAnswer(for proxy: Proxy) -> Proxy?
    /// Remembers `answer` as what goes to `proxy` from now on.
    func rememberProxyAnswer(_ answer: Proxy, for proxy: Proxy)
}

/// A proxy's authentication challenge, as a stage of the transfer chain beside the server's (`ChallengeStage`): a 407
/// from a forwarding proxy (a response), or from a `CONNECT` (Wire's `.proxyRefused` failure, whose head carries
/// the challenge), is offered to the session's challenge hook for the proxy's protection space (its host, port and
/// scheme; `isProxy` true). Without a hook, or when it answers `.performDefaultHandling`, the configuration's
/// `credentialStorage` is looked up for that space; nothing found delivers the 407 (a forwarding proxy's) or fails
/// the task with the proxy's refusal (a `CONNECT`'s).
///
/// The answer goes to the proxy only: the hop is sent again through the same proxy with `Proxy-Authorization` among
/// the proxy's own fields (`Proxy.headers`), so a `CONNECT` carries it and the tunnelled request never does.
/// Credentials configured on the proxy itself are sent preemptively by Wire and never reach this stage unless the
/// proxy refuses them. As for a server's challenge, an answer refused once is not sent again and at most eight
/// replays are made.
struct ProxyChallengeStage: ComposableStage {
    /// The proxy configuration the session's requests follow.
    let proxy: ProxyConfiguration
    /// Where `.performDefaultHandling` looks for a credential.
    let credentialStorage: CredentialStorage?

    @inline(__always) nonisolated(nonsending) func intercept<Rest: RestOfChain>(
        _ request: ClientRequest, in transfer: any TransferContext, then rest: Rest
    ) async throws(ClientError) -> StageResponse {
        var request = request
        // Without an HTTP proxy (a session that uses none, most often) the request passes through, through the same
        // one call of the rest as a challenge's replays: composed with the stages below (`SessionTail`), each call is
        // a copy of their code.
        // Boxed: a `Proxy?` tested and destroyed on every hop goes through its value witnesses.
        let routeBox = httpProxy(for: request)
        let host = routeBox == nil ? nil : transfer as? any ProxyChallengeAnswering
        if let route = routeBox?.value, let host, let remembered = host.proxyAnswer(for: route) {
            request.proxyAnswer = remembered
        }
        // Made at the first challenge (an empty ledger is three dictionaries made and freed on every hop).
        var ledger: ChallengeStage.Ledger?
        while true {
            let challenge: AuthenticationChallenge
            let outcome: Result<StageResponse, ClientError>
            do {
                let answer = try await rest.proceed(request, in: transfer)
                guard let routeBox, host != nil, answer.response.statusCode == 407,
                    let parsed = AuthenticationChallenge.parse(answer.response, proxy: routeBox.value)
                else { return answer }
                challenge = parsed
                outcome = .success(answer)
            } catch {
                guard let routeBox, host != nil, let wire = error.underlying as? HTTPClientError,
                    wire.code == .proxyRefused, let head = wire.proxyResponse, head.status.code == 407,
                    let parsed = AuthenticationChallenge.parse(
                        ClientResponse(url: request.url, statusCode: 407, headers: head.headers), proxy: routeBox.value)
                else { throw error }
                challenge = parsed
                outcome = .failure(error)
            }
            guard let route = routeBox?.value, let host else { return try outcome.get() }
            var current = ledger ?? ChallengeStage.Ledger()
            let reply = await ChallengeStage.decide(
                challenge, host: host, credentialStorage: credentialStorage, ledger: &current)
            ledger = current
            switch reply {
            case .deliver:
                return try outcome.get()
            case .cancel:
                if case .success(let answer) = outcome { await answer.body.discard() }
                throw host.cancelTask()
            case .send(let value):
                if case .success(let answer) = outcome { await answer.body.discard() }
                var answered = route
                answered.headers.remove(name: "Proxy-Authorization")
                answered.headers.add(name: "Proxy-Authorization", value: value)
                host.rememberProxyAnswer(answered, for: route)
                request.proxyAnswer = answered
                host.setCurrentRequest(request)
            }
        }
    }

    /// The HTTP proxy `request` goes through (one that can answer 407), boxed, or nil: direct, through SOCKS, over a Unix
    /// socket, or a proxy URL that cannot be read (Wire fails the exchange with `.invalidProxy`).
    private func httpProxy(for request: ClientRequest) -> Boxed<Proxy>? {
        if case .none = proxy { return nil }
        guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = request.url.host, !host.isEmpty,
            case .proxy(let proxy)? = try? self.proxy.route(scheme: scheme, host: host), !proxy.kind.isSOCKS
        else { return nil }
        return Boxed(proxy)
    }
}
