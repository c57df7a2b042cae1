/// How a request may use the session's response cache (NSURLRequest's cache policies).
public enum CachePolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Fresh stored responses come from the cache, stale ones are revalidated, others go to the network.
    case useProtocolCachePolicy
    /// Always the network; the response may still be stored.
    case reloadIgnoringLocalCacheData
    /// Any stored response regardless of its age, else the network.
    case returnCacheDataElseLoad
    /// A stored response, else the task fails with `.resourceUnavailable` without touching the network.
    case returnCacheDataDontLoad
}

/// The traffic class of a request's connection (NSURLRequest's network service types), written as DSCP.
public enum NetworkServiceType: String, Sendable, Hashable, Codable, CaseIterable {
    /// Ordinary traffic: the socket's class is left unchanged.
    case `default`
    /// Bulk transfers nobody waits for (CS1).
    case background
    /// Video (AF41).
    case video
    /// Voice (EF).
    case voice
    /// Interactive data a user waits for (AF21).
    case responsiveData
}
