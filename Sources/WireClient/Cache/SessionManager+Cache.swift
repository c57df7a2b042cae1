import FoundationEssentials
import Synchronization
import Wire

/// A task's use of the session's `URLCache` (§13.2.4), decided before its first hop and finished after its body.
struct CacheAttempt: Sendable {
    let cache: URLCache
    /// The stored entry the request went out to revalidate, with `If-None-Match`/`If-Modified-Since`.
    let revalidating: CachedResponse?
    /// When the request went out (RFC 9111 `request_time`).
    let requestDate: Date

    /// For a 304 answering the conditional request at the entry's own URL: the stored response with the 304's fields
    /// merged, status and all, marked `.revalidated`; nil for any other head (delivered as it is).
    func revalidated(by head: HTTPClientResponse, url: URL) -> ClientResponse? {
        guard let entry = revalidating, head.status.code == 304, URLCache.key(url) == URLCache.key(entry.response.url) else {
            return nil
        }
        let notModified = ClientResponse(url: url, statusCode: 304, headers: head.headers)
        var merged = CacheRules.merge(entry, notModified: notModified, requestDate: requestDate, responseDate: Date()).response
        merged.url = url
        merged.metrics = head.metrics.snapshot
        merged.source = .revalidated
        return merged
    }
}

/// What the cache says before a task's first hop.
enum CacheStart {
    /// The task is answered (from the cache, or with `.resourceUnavailable`) without the network.
    case answered(TransferOutcome)
    /// Send this request (the task's, or its conditional form), with the attempt to finish after the body.
    case send(CacheAttempt?, ClientRequest)
}

extension SessionManager {
    /// Asked before a data task's complete response is stored in the session's `urlCache`, with the entry the session
    /// proposes; returns the entry to store (that one, or another) or nil to store nothing. On the delegate queue.
    public var dataTaskWillCacheResponse: (@Sendable (SessionTask, CachedResponse) -> CachedResponse?)? {
        get { state.withLock { $0.hooks.dataTaskWillCacheResponse } }
        set { state.withLock { $0.hooks.dataTaskWillCacheResponse = newValue } }
    }

    /// Consults the cache for `request` under the request's policy (else the configuration's): a data task may be
    /// answered from it, or sent as a conditional request.
    @inline(never)  // Its own async frame, allocated only when called (`transfer`).
    func startCache(for task: SessionTask, _ request: ClientRequest) async -> CacheStart {
        guard let cache = configuration.urlCache else { return .send(nil, request) }
        let plain = CacheAttempt(cache: cache, revalidating: nil, requestDate: Date())
        guard task.kind == .data else { return .send(plain, request) }
        let policy = request.cachePolicy ?? configuration.requestCachePolicy
        let stored = policy == .reloadIgnoringLocalCacheData ? nil : await cache.cachedResponse(for: request)
        switch CacheRules.lookup(request, policy: policy, stored: stored, now: Date()) {
        case .load:
            return .send(plain, request)
        case .revalidate(let entry, let conditional):
            return .send(CacheAttempt(cache: cache, revalidating: entry, requestDate: Date()), conditional)
        case .unavailable:
            return .answered(TransferOutcome(error: ClientError(.resourceUnavailable, failingURL: request.url,
                failureReason: "the cache holds no response for the request and its policy is returnCacheDataDontLoad")))
        case .useStored(let entry):
            let response = Self.response(answering: request, from: entry)
            task.setResponse(response)
            task.bodyReceived(entry.data.count)
            return .answered(TransferOutcome(response: response, data: entry.data))
        }
    }

    /// What a data task for `request` would be answered with by the session's `urlCache` without sending anything (a
    /// fresh entry under `.useProtocolCachePolicy`, any entry under the `returnCacheData…` policies), found without a
    /// task and without suspending: the stored response marked `.cache` and its body. Nil when a task is needed: no
    /// cache, no usable entry (a miss, a stale one to revalidate, `.reloadIgnoringLocalCacheData`), an entry file
    /// larger than `limit` (the task reads it on Wire's file threads), an interceptor (its adapters may change the
    /// request the cache would see), or an invalidated session (the task fails). Reads the entry file on the calling
    /// thread (`URLCache.cachedResponse(for:blockingReadsUpTo:)`); runs no user code.
    func cachedAnswer(for request: ClientRequest, blockingReadsUpTo limit: Int) -> (response: ClientResponse, data: Data)? {
        guard let cache = configuration.urlCache, request.interceptor == nil else { return nil }
        let policy = request.cachePolicy ?? configuration.requestCachePolicy
        guard policy != .reloadIgnoringLocalCacheData, state.withLock({ $0.current != nil && $0.interceptor == nil }),
              let stored = cache.cachedResponse(for: request, blockingReadsUpTo: limit),
              case .useStored(let entry) = CacheRules.lookup(request, policy: policy, stored: stored, now: Date())
        else { return nil }
        return (Self.response(answering: request, from: entry), entry.data)
    }

    /// The stored response as the answer to `request`: at the request's URL, marked `.cache`.
    private static func response(answering request: ClientRequest, from entry: CachedResponse) -> ClientResponse {
        var response = entry.response
        response.url = request.url
        response.source = .cache
        return response
    }

    /// After the body: a revalidated response gets the stored body and refreshes the entry; an unsafe request's
    /// success invalidates its URL's entries; a storable GET response goes through `dataTaskWillCacheResponse` into the
    /// cache and is marked `.networkStored`.
    @inline(never)  // Its own async frame, allocated only when called (`transfer`).
    func finishCache(_ attempt: CacheAttempt?, _ request: ClientRequest, _ task: SessionTask, idle: IdleTimer,
                     _ outcome: inout TransferOutcome) async {
        guard let attempt, outcome.error == nil, outcome.replacement == nil, let response = outcome.response else { return }
        if response.source == .revalidated, let entry = attempt.revalidating {
            outcome.data = entry.data
            task.bodyReceived(entry.data.count)
            let refreshed = CachedResponse(response: response, data: entry.data, requestDate: attempt.requestDate,
                                           userInfo: entry.userInfo)
            await attempt.cache.storeCachedResponse(refreshed, for: request)
            return
        }
        for url in CacheRules.invalidatedURLs(by: request, response: response) {
            await attempt.cache.removeCachedResponse(for: url)
        }
        guard task.kind == .data, let data = outcome.data,
              case .storable = CacheRules.storability(of: response, for: request) else { return }
        var proposed: CachedResponse? = CachedResponse(response: response, data: data, requestDate: attempt.requestDate)
        if let willCache = hooks.dataTaskWillCacheResponse, let offer = proposed {
            proposed = await askCaller(idle) { willCache(task, offer) }
        }
        guard let proposed else { return }
        await attempt.cache.storeCachedResponse(proposed, for: request)
        outcome.response?.source = .networkStored
        if let stored = outcome.response { task.setResponse(stored) }
    }
}
