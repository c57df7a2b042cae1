public import FoundationEssentials

/// A response kept by a `URLCache` (NSCachedURLResponse): the final response head, its whole body, and what RFC 9111
/// needs to compute its age and to match later requests against it.
public struct CachedResponse: Sendable, Hashable {
    /// The stored response head (status, header fields, URL); `metrics` is nil, as no exchange produced it now.
    public var response: ClientResponse
    /// The whole body.
    public var data: Data
    /// When the request that produced the response was sent (RFC 9111 `request_time`).
    public var requestDate: Date
    /// When the response was received (RFC 9111 `response_time`): the stored date.
    public var responseDate: Date
    /// The values the request carried for each field the response's `Vary` names (lower-cased names; nil for an
    /// absent field): a later request must carry the same values to be answered with this response. Set by
    /// `URLCache.storeCachedResponse(_:for:)`.
    public var varyValues: [String: String?]
    /// Anything the caller wants kept with the entry, stored on disk too.
    public var userInfo: [String: String]

    /// Creates an entry.
    /// - Parameters:
    ///   - response: The response head; its metrics are dropped.
    ///   - data: The whole body.
    ///   - requestDate: When the request went out; `responseDate` by default.
    ///   - responseDate: When the response came in; now by default.
    ///   - userInfo: Anything to keep with the entry.
    public init(
        response: ClientResponse, data: Data, requestDate: Date? = nil, responseDate: Date = Date(),
        userInfo: [String: String] = [:]
    ) {
        var head = response
        head.metrics = nil
        self.response = head
        self.data = data
        self.requestDate = requestDate ?? responseDate
        self.responseDate = responseDate
        varyValues = [:]
        self.userInfo = userInfo
    }

    /// The bytes the entry costs in a cache's memory tier: the body plus the header text.
    var cost: Int {
        var total = data.count + 64
        for field in response.headers { total += field.name.utf8.count + field.value.utf8.count + 4 }
        return total
    }
}
