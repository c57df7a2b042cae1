import FoundationEssentials
import Synchronization
import Wire

/// The task's side of the cache: the hook that may change or refuse an entry before it is stored. The session
/// implements it; the stage asks only when it stores.
protocol CacheEntryProposing: TransferContext {
    /// `dataTaskWillCacheResponse`'s answer to `entry` (the entry itself when no hook is set).
    nonisolated(nonsending) func propose(_ entry: CachedResponse) async -> CachedResponse?
}

/// The cache, as a stage of the transfer chain (RFC 9111, as the WireClient catalog's "Caching and cookies"
/// article describes): before the request goes out, a data task's request is looked up under its cache policy (the
/// request's, else the configuration's) and may be answered from the cache without the network, sent as a
/// conditional request (`If-None-Match`/`If-Modified-Since`) to revalidate a stale entry, or refused
/// (`.returnCacheDataDontLoad` with nothing stored). After the body: a 304 answering the conditional request becomes
/// the stored response with the 304's fields merged and the stored body (marked `.revalidated`); an unsafe request's
/// success invalidates its URL's entries; a storable GET response goes through `dataTaskWillCacheResponse` into the
/// cache and is marked `.networkStored`. Present in the chain only when the session has a cache; uploads and
/// downloads only invalidate.
struct CacheStage: TransferStage {
    let cache: URLCache
    /// The policy of requests that name none.
    let defaultPolicy: CachePolicy

    @inline(__always) nonisolated(nonsending) func intercept(_ chain: TransferChain) async throws(ClientError) -> StageResponse {
        let transfer = chain.transfer
        let request = chain.request
        var revalidating: CachedResponse?
        var sent = request
        if transfer.isDataTask {
            let policy = request.cachePolicy ?? defaultPolicy
            let stored = policy == .reloadIgnoringLocalCacheData ? nil : await cache.cachedResponse(for: request)
            switch CacheRules.lookup(request, policy: policy, stored: stored, now: Date()) {
            case .load:
                break
            case .revalidate(let entry, let conditional):
                (revalidating, sent) = (entry, conditional)
            case .unavailable:
                throw ClientError(
                    .resourceUnavailable, failingURL: request.url,
                    failureReason:
                        "the cache holds no response for the request and its policy is returnCacheDataDontLoad")
            case .useStored(let entry):
                let response = Self.response(answering: request, from: entry)
                transfer.setResponse(response)
                transfer.bodyReceived(entry.data.count)
                return StageResponse(
                    response: response, body: ResponseBody(received: ReceivedBody(data: entry.data)),
                    request: request)
            }
        }
        let requestDate = Date()
        var answer = try await chain.proceed(sent)
        if let entry = revalidating, let merged = Self.revalidated(entry, by: answer, requestDate: requestDate) {
            answer.response = merged
            transfer.record(merged, metrics: answer.exchangeMetrics)
        }
        answer = await transfer.receive(answer)
        guard var body = answer.body.received, body.error == nil, body.replacement == nil else { return answer }
        let final = answer.request
        if answer.response.source == .revalidated, let entry = revalidating {
            body.data = entry.data
            transfer.bodyReceived(entry.data.count)
            answer.body = ResponseBody(received: body)
            let refreshed = CachedResponse(
                response: answer.response, data: entry.data, requestDate: requestDate,
                userInfo: entry.userInfo)
            await cache.storeCachedResponse(refreshed, for: final)
            return answer
        }
        for url in CacheRules.invalidatedURLs(by: final, response: answer.response) {
            await cache.removeCachedResponse(for: url)
        }
        guard transfer.isDataTask, let data = body.data,
            case .storable = CacheRules.storability(of: answer.response, for: final)
        else { return answer }
        let offer = CachedResponse(response: answer.response, data: data, requestDate: requestDate)
        let proposed = if let host = transfer as? any CacheEntryProposing { await host.propose(offer) } else { offer }
        guard let proposed else { return answer }
        await cache.storeCachedResponse(proposed, for: final)
        answer.response.source = .networkStored
        transfer.setResponse(answer.response)
        return answer
    }

    /// For a 304 answering the conditional request at the entry's own URL: the stored response with the 304's fields
    /// merged, status and all, marked `.revalidated`; nil for any other head (delivered as it is).
    private static func revalidated(_ entry: CachedResponse, by answer: StageResponse, requestDate: Date) -> ClientResponse? {
        let url = answer.request.url
        guard answer.response.statusCode == 304, URLCache.key(url) == URLCache.key(entry.response.url) else { return nil }
        let notModified = ClientResponse(url: url, statusCode: 304, headers: answer.response.headers)
        var merged = CacheRules.merge(entry, notModified: notModified, requestDate: requestDate, responseDate: Date()).response
        merged.url = url
        merged.metrics = answer.exchangeMetrics?.snapshot
        merged.source = .revalidated
        return merged
    }

    /// What a data task for `request` would be answered with by `cache` without sending anything (a fresh entry
    /// under `.useProtocolCachePolicy`, any entry under the `returnCacheData…` policies), found without a task and
    /// without suspending: the stored response marked `.cache` and its body. Nil when a task is needed: no usable
    /// entry (a miss, a stale one to revalidate, `.reloadIgnoringLocalCacheData`) or an entry file larger than
    /// `limit` (the task reads it on Wire's file threads). Reads the entry file on the calling thread; runs no user
    /// code.
    static func storedAnswer(
        for request: ClientRequest, in cache: URLCache, defaultPolicy: CachePolicy,
        blockingReadsUpTo limit: Int
    ) -> (response: ClientResponse, data: Data)? {
        let policy = request.cachePolicy ?? defaultPolicy
        guard policy != .reloadIgnoringLocalCacheData,
            let stored = cache.cachedResponse(for: request, blockingReadsUpTo: limit),
            case .useStored(let entry) = CacheRules.lookup(request, policy: policy, stored: stored, now: Date())
        else { return nil }
        return (response(answering: request, from: entry), entry.data)
    }

    /// The stored response as the answer to `request`: at the request's URL, marked `.cache`.
    private static func response(answering request: ClientRequest, from entry: CachedResponse) -> ClientResponse {
        var response = entry.response
        response.url = request.url
        response.source = .cache
        return response
    }
}
