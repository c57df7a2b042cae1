import FoundationEssentials
import Wire

/// RFC 9111 for a private client cache, as pure functions of requests, responses, stored entries and an injected
/// `now`: what may be stored, how long it stays fresh, how old it is, which request it answers, what a cache policy
/// does with it, how a revalidation is asked for and how a 304 is merged.
///
/// Decisions that differ from a shared cache: `s-maxage` is ignored for freshness and `private` does not prevent
/// storing. Decisions of WireClient: one entry per URL (a new variant replaces the old one); a request carrying its own
/// validator (`If-None-Match`, `If-Modified-Since`, …) bypasses the cache, since its caller wants to see the 304; the
/// `returnCacheData…` policies serve an entry of any age, `must-revalidate` included, as NSURLCache does.
package enum CacheRules {
    /// The statuses a response may be stored with (the heuristically cacheable ones of RFC 9110 §15.1 but 206).
    package static let storableStatuses: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// The longest heuristic freshness lifetime: one day.
    package static let maximumHeuristicLifetime: Double = 86_400

    /// Request fields that make a request its caller's own conditional one.
    static let conditionalFields = ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range"]

    /// Whether a stored entry may be stored for `request`, and why not.
    package enum Storability: Sendable, Hashable {
        /// It may be stored.
        case storable
        /// It must not be: the reason, in words (for the tool's `-v`).
        case notStorable(String)
    }

    /// Whether `response` to `request` may be stored (RFC 9111 §3): GET only, a storable status, no `no-store` on
    /// either side, no `Vary: *`, no `Vary` on a credential field (`Authorization`, `Proxy-Authorization`, `Cookie`)
    /// the request carries (its value would be kept in the entry), and for a request with `Authorization` only a
    /// response saying `public`,
    /// `s-maxage` or `must-revalidate` (RFC 9111 §3.5). `private` is fine in a private cache.
    package static func storability(of response: ClientResponse, for request: ClientRequest) -> Storability {
        guard request.method.uppercased() == "GET" else { return .notStorable("method \(request.method)") }
        guard storableStatuses.contains(response.statusCode) else { return .notStorable("status \(response.statusCode)") }
        if CacheControl(request.headers).noStore { return .notStorable("no-store in the request") }
        let control = CacheControl(response.headers)
        if control.noStore { return .notStorable("no-store in the response") }
        guard let varied = varyNames(of: response) else { return .notStorable("Vary: *") }
        // An entry keeps the request's values of the fields its response varies on: for a credential that would put
        // the secret into the cache's memory and files. Such a response is not stored (a cache may always decline).
        for name in varied where credentialFields.contains(name) && request.headers.contains(name: name) {
            return .notStorable("Vary on the credential field \(name)")
        }
        if request.headers.contains(name: "Authorization"), !control.isPublic, control.sMaxAge == nil, !control.mustRevalidate {
            return .notStorable("Authorization without public, s-maxage or must-revalidate")
        }
        return .storable
    }

    /// The freshness lifetime in seconds (RFC 9111 §4.2.1) for a private cache: `max-age`, else `Expires` − `Date`
    /// (an invalid `Expires` means already expired), else 10 % of `Date` − `Last-Modified` capped at one day for a
    /// heuristically cacheable status, else 0. `s-maxage` is for shared caches and ignored.
    package static func freshnessLifetime(of response: ClientResponse, receivedAt responseDate: Date) -> Double {
        freshnessLifetime(of: response, receivedAt: responseDate, control: CacheControl(response.headers))
    }

    /// `freshnessLifetime(of:receivedAt:)` with the response's `Cache-Control` already read.
    static func freshnessLifetime(of response: ClientResponse, receivedAt responseDate: Date, control: CacheControl) -> Double {
        if let maxAge = control.maxAge { return Double(maxAge) }
        let date = dateValue(response.headers, "Date") ?? responseDate.timeIntervalSince1970
        if let expires = response.headers.first(name: "Expires") {
            guard let expiry = HTTPFieldDate.parse(expires) else { return 0 }
            return max(0, Double(expiry) - date)
        }
        if storableStatuses.contains(response.statusCode), let modified = dateValue(response.headers, "Last-Modified"),
            modified < date
        {
            return min((date - modified) / 10, maximumHeuristicLifetime)
        }
        return 0
    }

    /// The current age in seconds (RFC 9111 §4.2.3): the larger of the apparent age (`response_time` − `Date`) and
    /// `Age` plus the response delay, plus the time the entry has been resident since it was received.
    package static func currentAge(of entry: CachedResponse, now: Date) -> Double {
        let responseTime = entry.responseDate.timeIntervalSince1970
        let dateValue = dateValue(entry.response.headers, "Date") ?? responseTime
        let apparentAge = max(0, responseTime - dateValue)
        let ageValue =
            entry.response.headers.first(name: "Age").flatMap { text -> Double? in
                guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
                return Double(text.prefix(10))
            } ?? 0
        let responseDelay = max(0, responseTime - entry.requestDate.timeIntervalSince1970)
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        let residentTime = max(0, now.timeIntervalSince1970 - responseTime)
        return correctedInitialAge + residentTime
    }

    /// Whether `entry` may be used without revalidation at `now`: its lifetime exceeds its age and neither it nor
    /// the request says `no-cache` (the request's `max-age` caps the age it accepts).
    package static func isFresh(_ entry: CachedResponse, for request: ClientRequest, now: Date) -> Bool {
        let control = CacheControl(entry.response.headers)
        let asked = CacheControl(request.headers)
        if control.noCache || asked.noCache { return false }
        let age = currentAge(of: entry, now: now)
        if let limit = asked.maxAge, age > Double(limit) { return false }
        return freshnessLifetime(of: entry.response, receivedAt: entry.responseDate, control: control) > age
    }

    /// Fields whose values are credentials, never kept in an entry (lower-cased, as `varyNames` gives them).
    private static let credentialFields: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// The lower-cased field names `Vary` lists; nil for `Vary: *`, which no request matches.
    package static func varyNames(of response: ClientResponse) -> [String]? {
        var names: [String] = []
        for field in response.headers["Vary"] {
            for item in field.split(separator: ",") {
                let name = item.trimmingOWS.lowercased()
                if name == "*" { return nil }
                if !name.isEmpty, !names.contains(name) { names.append(name) }
            }
        }
        return names
    }

    /// The values `request` carries for the fields `response` varies on (every field of a name joined with ", ",
    /// whitespace-normalised); nil for `Vary: *`.
    package static func varyValues(of request: ClientRequest, for response: ClientResponse) -> [String: String?]? {
        guard let names = varyNames(of: response) else { return nil }
        var values: [String: String?] = [:]
        for name in names { values[name] = normalizedValue(request.headers, name) }
        return values
    }

    /// Whether `entry` answers `request` (RFC 9111 §4.1): same URL, and the same values for every field its response
    /// varies on.
    package static func matches(_ entry: CachedResponse, _ request: ClientRequest) -> Bool {
        guard let names = varyNames(of: entry.response) else { return false }
        for name in names {
            let stored = entry.varyValues[name] ?? nil
            if normalizedValue(request.headers, name) != stored { return false }
        }
        return true
    }

    /// What `policy` does with `request` given the entry stored for its URL (the WireClient catalog's article
    /// "Caching and cookies").
    package static func lookup(_ request: ClientRequest, policy: CachePolicy, stored: CachedResponse?, now: Date) -> CacheLookup {
        guard request.method.uppercased() == "GET",
            !conditionalFields.contains(where: { request.headers.contains(name: $0) })
        else {
            return policy == .returnCacheDataDontLoad ? .unavailable : .load
        }
        let entry = stored.flatMap { matches($0, request) ? $0 : nil }
        switch policy {
        case .reloadIgnoringLocalCacheData:
            return .load
        case .returnCacheDataElseLoad:
            return entry.map(CacheLookup.useStored) ?? .load
        case .returnCacheDataDontLoad:
            return entry.map(CacheLookup.useStored) ?? .unavailable
        case .useProtocolCachePolicy:
            guard let entry else { return .load }
            if isFresh(entry, for: request, now: now) { return .useStored(entry) }
            if let conditional = conditionalRequest(for: request, revalidating: entry) { return .revalidate(entry, conditional) }
            return .load
        }
    }

    /// `request` with `If-None-Match` from the entry's `ETag` and `If-Modified-Since` from its `Last-Modified`
    /// (RFC 9111 §4.3.1); nil when the entry has no validator.
    package static func conditionalRequest(for request: ClientRequest, revalidating entry: CachedResponse) -> ClientRequest? {
        let etag = entry.response.headers.first(name: "ETag")
        let modified = entry.response.headers.first(name: "Last-Modified")
        guard etag != nil || modified != nil else { return nil }
        var conditional = request
        if let etag { conditional.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        if let modified { conditional.setValue(modified, forHTTPHeaderField: "If-Modified-Since") }
        return conditional
    }

    /// Fields a 304 must not change in the stored head (RFC 9111 §3.2: framing and hop-by-hop fields).
    static let unmergedFields: Set<String> = [
        "content-length", "content-encoding", "content-range", "transfer-encoding",
        "connection", "keep-alive", "te", "trailer", "upgrade", "proxy-connection",
    ]

    /// The stored entry refreshed by a 304 (RFC 9111 §4.3.4): every field the 304 carries replaces the stored fields
    /// of that name, except framing and hop-by-hop ones; the status, body and Vary values stay; the dates are the
    /// revalidation's.
    package static func merge(
        _ entry: CachedResponse, notModified: ClientResponse, requestDate: Date,
        responseDate: Date
    ) -> CachedResponse {
        var headers = entry.response.headers
        var replaced = Set<String>()
        for field in notModified.headers {
            let name = field.name.lowercased()
            guard !unmergedFields.contains(name) else { continue }
            if replaced.insert(name).inserted { headers.remove(name: field.name) }
            headers.add(name: field.name, value: field.value)
        }
        var merged = entry
        merged.response = ClientResponse(url: entry.response.url, statusCode: entry.response.statusCode, headers: headers)
        merged.requestDate = requestDate
        merged.responseDate = responseDate
        return merged
    }

    /// The URLs whose entries a response to an unsafe request invalidates (RFC 9111 §4.4): for a method other than
    /// GET, HEAD, OPTIONS or TRACE answered with 2xx or 3xx, the request's URL and the same-origin `Location` and
    /// `Content-Location`; none otherwise.
    package static func invalidatedURLs(by request: ClientRequest, response: ClientResponse) -> [URL] {
        let safe: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]
        guard !safe.contains(request.method.uppercased()), (200..<400).contains(response.statusCode) else { return [] }
        var urls = [request.url]
        for name in ["Location", "Content-Location"] {
            guard let value = response.headers.first(name: name),
                let target = URL(string: value, relativeTo: request.url)?.absoluteURL,
                target.scheme?.lowercased() == request.url.scheme?.lowercased(),
                target.host?.lowercased() == request.url.host?.lowercased(), target.port == request.url.port
            else { continue }
            urls.append(target)
        }
        return urls
    }

    /// The Unix seconds of the HTTP-date in the first field called `name`.
    private static func dateValue(_ headers: HTTPHeaders, _ name: String) -> Double? {
        headers.first(name: name).flatMap { HTTPFieldDate.parse($0) }.map(Double.init)
    }

    /// Every value of the fields called `name` joined with ", ", runs of whitespace collapsed; nil when absent.
    private static func normalizedValue(_ headers: HTTPHeaders, _ name: String) -> String? {
        let values = headers[name]
        guard !values.isEmpty else { return nil }
        return values.map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ") }
            .joined(separator: ", ")
    }
}

/// What a cache policy does with a request (`CacheRules.lookup`).
package enum CacheLookup: Sendable {
    /// Answer with the stored entry; no request goes out.
    case useStored(CachedResponse)
    /// Send the conditional request; a 304 answers with the stored entry merged (`CacheRules.merge`).
    case revalidate(CachedResponse, ClientRequest)
    /// Send the request as it is.
    case load
    /// Fail with `.resourceUnavailable` (−1008) without the network (`.returnCacheDataDontLoad`, nothing stored).
    case unavailable
}
