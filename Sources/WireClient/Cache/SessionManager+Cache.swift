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
            var response = entry.response
            response.url = request.url
            response.source = .cache
            task.setResponse(response)
            _ = task.bodyReceived(entry.data.count)
            return .answered(TransferOutcome(response: response, data: entry.data))
        }
    }

    /// After the body: a revalidated response gets the stored body and refreshes the entry; an unsafe request's
    /// success invalidates its URL's entries; a storable GET response goes through `dataTaskWillCacheResponse` into the
    /// cache and is marked `.networkStored`.
    func finishCache(_ attempt: CacheAttempt?, _ request: ClientRequest, _ task: SessionTask, idle: IdleTimer,
                     _ outcome: inout TransferOutcome) async {
        guard let attempt, outcome.error == nil, outcome.replacement == nil, let response = outcome.response else { return }
        if response.source == .revalidated, let entry = attempt.revalidating {
            outcome.data = entry.data
            _ = task.bodyReceived(entry.data.count)
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
