import Synchronization
@_spi(Locking) import Wire
import FoundationEssentials

extension SessionManager {
    /// What a data task for `request` would be answered with by the session's `urlCache` without sending anything
    /// (`CacheStage.storedAnswer`), found without a task and without suspending. Nil when a task is needed: no cache,
    /// no usable entry, an entry file larger than `limit`, an interceptor (its adapters may change the request the
    /// cache would see), or an invalidated session (the task fails). Runs no user code.
    func cachedAnswer(for request: ClientRequest, blockingReadsUpTo limit: Int) -> (response: ClientResponse, data: Data)? {
        guard let cache = configuration.urlCache, request.interceptor == nil,
            state.withLock({ $0.current != nil && !$0.hasInterceptor })
        else { return nil }
        return CacheStage.storedAnswer(
            for: request, in: cache, defaultPolicy: configuration.requestCachePolicy,
            blockingReadsUpTo: limit)
    }
}
