/// Where a task's response came from (for metrics, the tool and tests).
public enum ResponseSource: String, Sendable, Hashable, Codable {
    /// From the network, not stored.
    case network
    /// From the network and stored in the cache.
    case networkStored
    /// From the cache, fresh, without any request.
    case cache
    /// From the cache after the server answered a conditional request with 304 Not Modified.
    case revalidated
}
