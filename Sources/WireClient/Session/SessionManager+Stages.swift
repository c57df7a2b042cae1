import Synchronization
@_spi(Locking) import Wire

/// The transfer chain, assembled in one place. Outermost first:
///
/// 1. the configuration's `applicationStages` (once per task: the original request, the final response);
/// 2. `RetryStage`: adapters, the retry policy, the authenticator (only with an interceptor);
/// 3. `CacheStage`: lookup, revalidation, store (only with a `urlCache`);
/// 4. `ResumptionStage`: `Range`/`If-Range` for a download made from resume data (only for downloads);
/// 5. `RedirectStage`: 3xx hops and the redirect hooks;
/// 6. `ChallengeStage`: 401 challenges and the challenge hook (read when a challenge arrives), then
///    `ProxyChallengeStage`: a proxy's 407, as a response or as a refused `CONNECT` (when a proxy may be used);
/// 7. `CookieStage`: `Cookie` out, `Set-Cookie` in, per hop (with a cookie storage);
/// 8. `DecodingStage`: gzip and deflate bodies (when the session decodes content);
/// 9. `SessionFieldsStage`: the session's additional fields and `Accept-Encoding`;
/// 10. `MetricsStage`: each hop's head and timings, kept for the task;
/// 11. the configuration's `networkStages` (around each exchange: every hop, the fields as sent);
/// 12. `ExchangeStage`: the request through Wire.
///
/// 5 to 12 are one stage, `SessionTail`, composed ahead of time: one async frame per hop for all of them. A stage
/// of it that the configuration gives nothing to do passes each request through. Without network stages, the
/// exchange adds the session's fields and records the metrics itself (9 and 10 folded into 12): nothing else could
/// run between them. When the tail is the whole chain (none of 1 to 4), the transfer calls it directly
/// (`TaskStages.tail`).
///
/// The task receives the final response's body when the chain returns (the retry and cache stages have it received
/// earlier, since they need it whole).
extension SessionManager {
    /// The chain for `task`: the session's own for the task's kind, with a retry stage in front when the manager or
    /// the request has an interceptor.
    func stages(for task: SessionTask) -> TaskStages {
        let kind = task.kind == .download ? 1 : 0
        let base = baseStages[kind]
        // Asked in place first: the common case has no interceptor, and copying one out (an existential of a protocol
        // any type may conform to) goes through the runtime's value witnesses even when it is nil.
        guard state.withLock({ $0.hasInterceptor }) || task.originalRequest.hasInterceptor else {
            if let tail = soleTails[kind] { return .tail(tail) }
            return .chain(base)
        }
        let manager = state.withLock { $0.interceptor }
        let retry = RetryStage(
            interceptors: InterceptorChain.combining(manager: manager, request: task.originalRequest.interceptor),
            acceptableStatusCodes: responseSerializer.acceptableStatusCodes)
        var list = base.list
        list.insert(retry, at: configuration.applicationStages.count)
        return .chain(TransferStages(list))
    }

    /// The tail of each of `stages`, when it is the whole chain (no application stage, cache or resumption).
    static func soleTails(of stages: [TransferStages]) -> [SessionTail?] {
        stages.map { $0.list.count == 1 ? $0.list[0] as? SessionTail : nil }
    }

    /// The session's chains without a retry stage, from its configuration: for data and upload tasks, then for
    /// downloads (the cache and resumption stages only where they have work: each stage above the tail is a call and
    /// a copy of the request per hop).
    static func stages(for configuration: SessionConfiguration, fields: SessionFields) -> [TransferStages] {
        [stages(for: configuration, fields: fields, download: false), stages(for: configuration, fields: fields, download: true)]
    }

    private static func stages(for configuration: SessionConfiguration, fields: SessionFields, download: Bool) -> TransferStages {
        var list: [any TransferStage] = configuration.applicationStages
        if let cache = configuration.urlCache {
            list.append(CacheStage(cache: cache, defaultPolicy: configuration.requestCachePolicy))
        }
        if download { list.append(ResumptionStage()) }
        let below: SessionTail.Below
        if configuration.networkStages.isEmpty {
            below = .exchange(ExchangeStage(sessionFields: fields))
        } else {
            below = .stages(
                TransferStages(
                    [SessionFieldsStage(fields: fields), MetricsStage()] + configuration.networkStages
                        + [ExchangeStage(sessionFields: nil)]))
        }
        list.append(
            SessionTail(
                redirects: RedirectStage(maximumRedirects: configuration.maximumRedirects),
                challenges: ChallengeStage(credentialStorage: configuration.credentialStorage),
                proxyChallenges: ProxyChallengeStage(
                    proxy: configuration.httpClient?.configuration.proxy ?? configuration.proxy,
                    credentialStorage: configuration.credentialStorage),
                cookies: CookieStage(
                    storage: configuration.httpCookieStorage, handlesCookiesByDefault: configuration.shouldHandleCookies,
                    acceptPolicy: configuration.httpCookieAcceptPolicy,
                    sessionSetsCookieField: configuration.httpAdditionalHeaders.contains(name: "Cookie")),
                decoding: DecodingStage(
                    limits: configuration.decodesContent ? configuration.contentDecoding : nil,
                    sessionChoosesCodings: configuration.httpAdditionalHeaders.contains(name: "Accept-Encoding")),
                below: below))
        return TransferStages(list)
    }
}

/// A task's chain: the session's tail alone, called directly (no chain value, no call through `TransferStage`), or
/// stages in turn.
enum TaskStages {
    /// The session's tail is the whole chain.
    case tail(SessionTail)
    /// Stages before the tail (the configuration's, a cache, resumption, a retry stage), then the tail.
    case chain(TransferStages)
}
