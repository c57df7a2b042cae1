import Foundation
import Testing
import Wire
import WireClient

/// RFC 9111 as `CacheRules` decides it, with an injected clock and no sockets.
struct CacheRulesTests {
    static let url = URL(string: "http://example.test/a")!
    /// The moment the responses below were received.
    static let t0 = 1_700_000_000

    static func date(_ seconds: Int) -> String { HTTPFieldDate.format(unixSeconds: seconds) }

    static func entry(
        _ fields: [(String, String)], status: Int = 200, requestAt: Int = t0, receivedAt: Int = t0,
        request: ClientRequest = ClientRequest(url: url)
    ) -> CachedResponse {
        var headers = HTTPHeaders()
        for (name, value) in fields { headers.add(name: name, value: value) }
        var entry = CachedResponse(
            response: ClientResponse(url: url, statusCode: status, headers: headers), data: Data("body".utf8),
            requestDate: Date(timeIntervalSince1970: Double(requestAt)),
            responseDate: Date(timeIntervalSince1970: Double(receivedAt)))
        entry.varyValues = CacheRules.varyValues(of: request, for: entry.response) ?? [:]
        return entry
    }

    static func at(_ seconds: Int) -> Date { Date(timeIntervalSince1970: Double(seconds)) }

    @Test(arguments: [
        // (fields, expected lifetime)
        ([("Cache-Control", "max-age=60")], 60.0),
        ([("Cache-Control", "max-age=60, s-maxage=600")], 60.0),  // s-maxage is for shared caches
        ([("Cache-Control", "s-maxage=600")], 0.0),
        ([("Cache-Control", "max-age=60"), ("Expires", date(t0 + 600)), ("Date", date(t0))], 60.0),  // max-age wins
        ([("Expires", date(t0 + 600)), ("Date", date(t0))], 600.0),
        ([("Expires", date(t0 + 600))], 600.0),  // no Date: the response time
        ([("Expires", "0"), ("Date", date(t0))], 0.0),  // invalid Expires: expired
        ([("Expires", date(t0 - 10)), ("Date", date(t0))], 0.0),
        ([("Date", date(t0)), ("Last-Modified", date(t0 - 1000))], 100.0),  // heuristic: 10 %
        ([("Date", date(t0)), ("Last-Modified", date(t0 - 100 * 86_400))], 86_400.0),  // capped at a day
        ([("Date", date(t0))], 0.0),
        ([("Cache-Control", "max-age=abc")], 0.0),
        ([("Cache-Control", "max-age=60, max-age=86400")], 60.0),  // RFC 9111 §4.2.1: the first one
        ([("Cache-Control", "max-age=60"), ("Cache-Control", "max-age=86400")], 60.0),
    ])
    func freshnessLifetime(fields: [(String, String)], expected: Double) {
        let entry = Self.entry(fields)
        #expect(CacheRules.freshnessLifetime(of: entry.response, receivedAt: entry.responseDate) == expected)
    }

    @Test func theHeuristicAppliesOnlyToHeuristicallyCacheableStatuses() {
        let fields = [("Date", Self.date(Self.t0)), ("Last-Modified", Self.date(Self.t0 - 1000))]
        #expect(CacheRules.freshnessLifetime(of: Self.entry(fields, status: 404).response, receivedAt: Self.at(Self.t0)) == 100)
        #expect(CacheRules.freshnessLifetime(of: Self.entry(fields, status: 302).response, receivedAt: Self.at(Self.t0)) == 0)
        #expect(CacheRules.freshnessLifetime(of: Self.entry(fields, status: 500).response, receivedAt: Self.at(Self.t0)) == 0)
    }

    @Test func currentAgeCountsAgeHeaderDelayApparentAgeAndResidentTime() {
        // Age 30 plus a 2 s response delay, resident 10 s.
        let aged = Self.entry([("Age", "30"), ("Date", Self.date(Self.t0))], requestAt: Self.t0 - 2)
        #expect(CacheRules.currentAge(of: aged, now: Self.at(Self.t0 + 10)) == 42)
        // A Date 100 s behind the receipt: the apparent age wins over a small Age.
        let behind = Self.entry([("Age", "5"), ("Date", Self.date(Self.t0 - 100))])
        #expect(CacheRules.currentAge(of: behind, now: Self.at(Self.t0)) == 100)
        // A Date ahead of the receipt gives no negative age.
        let ahead = Self.entry([("Date", Self.date(Self.t0 + 50))])
        #expect(CacheRules.currentAge(of: ahead, now: Self.at(Self.t0 + 1)) == 1)
    }

    @Test func freshnessIsLifetimeAgainstAgeAndNoCacheForcesRevalidation() {
        let request = ClientRequest(url: Self.url)
        let entry = Self.entry([("Cache-Control", "max-age=60"), ("Age", "50")])
        #expect(CacheRules.isFresh(entry, for: request, now: Self.at(Self.t0 + 9)))
        #expect(!CacheRules.isFresh(entry, for: request, now: Self.at(Self.t0 + 10)))
        #expect(!CacheRules.isFresh(Self.entry([("Cache-Control", "max-age=60, no-cache")]), for: request, now: Self.at(Self.t0)))
        var asking = request
        asking.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
        #expect(!CacheRules.isFresh(Self.entry([("Cache-Control", "max-age=60")]), for: asking, now: Self.at(Self.t0)))
        asking.setValue("max-age=5", forHTTPHeaderField: "Cache-Control")
        #expect(!CacheRules.isFresh(Self.entry([("Cache-Control", "max-age=60")]), for: asking, now: Self.at(Self.t0 + 6)))
        var pragma = request
        pragma.setValue("no-cache", forHTTPHeaderField: "Pragma")
        #expect(!CacheRules.isFresh(Self.entry([("Cache-Control", "max-age=60")]), for: pragma, now: Self.at(Self.t0)))
    }

    @Test func storabilityTable() {
        let get = ClientRequest(url: Self.url)
        for status in [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501] {
            #expect(
                CacheRules.storability(of: Self.entry([], status: status).response, for: get) == .storable, "status \(status)")
        }
        for status in [201, 202, 206, 302, 303, 307, 400, 401, 403, 500, 503] {
            #expect(
                CacheRules.storability(of: Self.entry([], status: status).response, for: get) != .storable, "status \(status)")
        }
        #expect(
            CacheRules.storability(of: Self.entry([]).response, for: ClientRequest(url: Self.url, method: "POST")) != .storable)
        #expect(
            CacheRules.storability(of: Self.entry([]).response, for: ClientRequest(url: Self.url, method: "HEAD")) != .storable)
        #expect(
            CacheRules.storability(of: Self.entry([("Cache-Control", "no-store")]).response, for: get)
                == .notStorable("no-store in the response"))
        var noStore = get
        noStore.setValue("no-store", forHTTPHeaderField: "Cache-Control")
        #expect(CacheRules.storability(of: Self.entry([]).response, for: noStore) == .notStorable("no-store in the request"))
        #expect(
            CacheRules.storability(of: Self.entry([("Cache-Control", "private, max-age=60")]).response, for: get) == .storable)
        #expect(CacheRules.storability(of: Self.entry([("Vary", "*")]).response, for: get) == .notStorable("Vary: *"))
    }

    @Test func authorizationIsStoredOnlyWithPublicSMaxAgeOrMustRevalidate() {
        var request = ClientRequest(url: Self.url)
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        #expect(CacheRules.storability(of: Self.entry([("Cache-Control", "max-age=60")]).response, for: request) != .storable)
        #expect(
            CacheRules.storability(of: Self.entry([("Cache-Control", "private, max-age=60")]).response, for: request) != .storable
        )
        for allowing in ["public", "s-maxage=10", "must-revalidate"] {
            #expect(
                CacheRules.storability(of: Self.entry([("Cache-Control", allowing)]).response, for: request) == .storable,
                "\(allowing)")
        }
    }

    /// An entry keeps the values of the fields its response varies on: never a credential's.
    @Test(arguments: [("Authorization", "Basic dXNlcjpwdw=="), ("Proxy-Authorization", "Basic cDpx"), ("Cookie", "sid=s3cr3t")])
    func aResponseVaryingOnACredentialTheRequestCarriesIsNotStored(_ field: (name: String, value: String)) {
        var request = ClientRequest(url: Self.url)
        request.setValue(field.value, forHTTPHeaderField: field.name)
        let response = Self.entry([("Cache-Control", "public, max-age=60"), ("Vary", "Accept, \(field.name.uppercased())")])
            .response
        #expect(
            CacheRules.storability(of: response, for: request)
                == .notStorable("Vary on the credential field \(field.name.lowercased())"))
        // Without the field there is nothing secret to keep.
        #expect(CacheRules.storability(of: response, for: ClientRequest(url: Self.url)) == .storable)
    }

    @Test func varyMatchesOnTheStoredRequestValuesAndStarNeverMatches() {
        var gzip = ClientRequest(url: Self.url)
        gzip.setValue("gzip", forHTTPHeaderField: "Accept-Encoding")
        let entry = Self.entry([("Vary", "Accept-Encoding, X-Absent"), ("Cache-Control", "max-age=60")], request: gzip)
        #expect(CacheRules.matches(entry, gzip))
        var spaced = gzip
        spaced.setValue("gzip", forHTTPHeaderField: "accept-encoding")
        #expect(CacheRules.matches(entry, spaced))
        var other = gzip
        other.setValue("br", forHTTPHeaderField: "Accept-Encoding")
        #expect(!CacheRules.matches(entry, other))
        #expect(!CacheRules.matches(entry, ClientRequest(url: Self.url)))
        var extra = gzip
        extra.setValue("1", forHTTPHeaderField: "X-Absent")
        #expect(!CacheRules.matches(entry, extra))
        #expect(!CacheRules.matches(Self.entry([("Vary", "*")]), ClientRequest(url: Self.url)))
    }

    @Test func theFourPolicies() {
        let request = ClientRequest(url: Self.url)
        let fresh = Self.entry([("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")])
        let stale = Self.entry([("Cache-Control", "max-age=0"), ("ETag", "\"v1\""), ("Last-Modified", Self.date(Self.t0 - 10))])
        let staleWithoutValidator = Self.entry([("Cache-Control", "max-age=0")])
        let now = Self.at(Self.t0 + 1)
        func kind(_ lookup: CacheLookup) -> String {
            switch lookup {
            case .useStored: "use"
            case .revalidate(_, let conditional):
                "revalidate \(conditional.value(forHTTPHeaderField: "If-None-Match") ?? "-") \(conditional.value(forHTTPHeaderField: "If-Modified-Since") ?? "-")"
            case .load: "load"
            case .unavailable: "unavailable"
            }
        }
        #expect(kind(CacheRules.lookup(request, policy: .useProtocolCachePolicy, stored: fresh, now: now)) == "use")
        #expect(
            kind(CacheRules.lookup(request, policy: .useProtocolCachePolicy, stored: stale, now: now))
                == "revalidate \"v1\" \(Self.date(Self.t0 - 10))")
        #expect(
            kind(CacheRules.lookup(request, policy: .useProtocolCachePolicy, stored: staleWithoutValidator, now: now)) == "load")
        #expect(kind(CacheRules.lookup(request, policy: .useProtocolCachePolicy, stored: nil, now: now)) == "load")
        #expect(kind(CacheRules.lookup(request, policy: .reloadIgnoringLocalCacheData, stored: fresh, now: now)) == "load")
        #expect(
            kind(CacheRules.lookup(request, policy: .returnCacheDataElseLoad, stored: staleWithoutValidator, now: now)) == "use")
        #expect(kind(CacheRules.lookup(request, policy: .returnCacheDataElseLoad, stored: nil, now: now)) == "load")
        #expect(kind(CacheRules.lookup(request, policy: .returnCacheDataDontLoad, stored: stale, now: now)) == "use")
        #expect(kind(CacheRules.lookup(request, policy: .returnCacheDataDontLoad, stored: nil, now: now)) == "unavailable")
        // The caller's own validator: the caller wants the 304, so the cache stays out of the way.
        var own = request
        own.setValue("\"v0\"", forHTTPHeaderField: "If-None-Match")
        #expect(kind(CacheRules.lookup(own, policy: .useProtocolCachePolicy, stored: fresh, now: now)) == "load")
        #expect(
            kind(
                CacheRules.lookup(
                    ClientRequest(url: Self.url, method: "POST"), policy: .returnCacheDataElseLoad,
                    stored: fresh, now: now)) == "load")
    }

    @Test func aNotModifiedMergesFieldsButNotFraming() {
        let stored = Self.entry([("Content-Length", "4"), ("ETag", "\"v1\""), ("Cache-Control", "max-age=0"), ("X-Kept", "1")])
        var fields = HTTPHeaders()
        fields.add(name: "Cache-Control", value: "max-age=120")
        fields.add(name: "Content-Length", value: "0")
        fields.add(name: "ETag", value: "\"v2\"")
        let notModified = ClientResponse(url: Self.url, statusCode: 304, headers: fields)
        let merged = CacheRules.merge(
            stored, notModified: notModified, requestDate: Self.at(Self.t0 + 99),
            responseDate: Self.at(Self.t0 + 100))
        #expect(merged.response.statusCode == 200)
        #expect(merged.response.headers["Cache-Control"] == ["max-age=120"])
        #expect(merged.response.headers["ETag"] == ["\"v2\""])
        #expect(merged.response.headers["Content-Length"] == ["4"])
        #expect(merged.response.headers["X-Kept"] == ["1"])
        #expect(merged.data == stored.data)
        #expect(CacheRules.isFresh(merged, for: ClientRequest(url: Self.url), now: Self.at(Self.t0 + 150)))
    }

    @Test func unsafeSuccessesInvalidateTheURLAndSameOriginLocations() {
        var fields = HTTPHeaders()
        fields.add(name: "Location", value: "/b")
        fields.add(name: "Content-Location", value: "http://other.test/c")
        let created = ClientResponse(url: Self.url, statusCode: 201, headers: fields)
        let urls = CacheRules.invalidatedURLs(by: ClientRequest(url: Self.url, method: "POST"), response: created)
        #expect(urls.map(\.absoluteString) == ["http://example.test/a", "http://example.test/b"])
        #expect(
            CacheRules.invalidatedURLs(
                by: ClientRequest(url: Self.url, method: "DELETE"),
                response: ClientResponse(url: Self.url, statusCode: 500)
            ).isEmpty)
        #expect(CacheRules.invalidatedURLs(by: ClientRequest(url: Self.url), response: created).isEmpty)
    }
}
