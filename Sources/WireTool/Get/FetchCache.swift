import FoundationEssentials
import Wire
import WireClient

/// `wire get --cache-dir DIR` (a Wire extension): RFC 9111 caching across invocations with WireClient's disk
/// `URLCache` in DIR and `.useProtocolCachePolicy`. A fresh entry answers without a request; a stale one with a
/// validator goes out as a conditional request, and a 304 answers with the stored body; any other complete answer to
/// a GET is stored when RFC 9111 allows it. Each step has a `-v` line (`* cache: …`).
struct FetchCache {
    /// The most bytes of a body kept for storing; a larger body is written out but not stored.
    static let largestBody = 256 << 20

    let cache: URLCache

    /// Opens (creating when missing) the cache in `directory`. Answers fetched through a Unix socket (`--unix-socket`)
    /// are kept apart, in a folder of their own per socket path (`unix-` and a hash of the absolute path): the same
    /// URL through another socket, or over TCP, is another server, and must not be answered from this one's entry.
    init(directory: String, unixSocket: String? = nil) {
        let folder = unixSocket.map { directory + "/unix-" + Checksum.fileName(for: $0) } ?? directory
        cache = URLCache(memoryCapacity: 0, diskCapacity: 1 << 30, directory: folder)
    }

    /// A request on its way to the network, with what finishing it needs.
    struct Pending {
        var request: ClientRequest
        var revalidating: CachedResponse?
        var requestDate: Date
    }

    /// What to do for one request.
    enum Step {
        /// Answer with the stored entry; no request goes out.
        case answer(CachedResponse)
        /// Send the (possibly conditional) request.
        case send(HTTPClientRequest, Pending?)
    }

    /// Looks `request` up (for the URL as the user gave it).
    func begin(_ request: HTTPClientRequest, url: String) async -> (Step, note: String) {
        guard let key = URL(string: url) else {
            // Not cached at all: an answer stored under a made-up key would be served for that key later.
            return (.send(request, nil), "miss (the URL has no cache key; not stored)")
        }
        let asked = ClientRequest(url: key, method: request.method.rawValue, headers: request.headers)
        let stored = await cache.cachedResponse(for: asked)
        switch CacheRules.lookup(asked, policy: .useProtocolCachePolicy, stored: stored, now: Date()) {
        case .useStored(let entry):
            return (.answer(entry), "hit (fresh)")
        case .revalidate(let entry, let conditional):
            var sent = request
            sent.headers = conditional.headers
            return (.send(sent, Pending(request: asked, revalidating: entry, requestDate: Date())), "stale, revalidating")
        case .load, .unavailable:
            return (
                .send(request, Pending(request: asked, requestDate: Date())), stored == nil ? "miss" : "stale, no validator: miss"
            )
        }
    }

    /// For a 304 to the conditional request: the stored entry refreshed with the 304's fields, stored again.
    func notModified(_ response: HTTPClientResponse, _ pending: Pending) async -> CachedResponse? {
        guard let entry = pending.revalidating, response.status.code == 304 else { return nil }
        let head = ClientResponse(url: pending.request.url, statusCode: 304, headers: response.headers)
        let merged = CacheRules.merge(entry, notModified: head, requestDate: pending.requestDate, responseDate: Date())
        await cache.storeCachedResponse(merged, for: pending.request)
        return merged
    }

    /// After a complete body (nil when it was too large to keep): invalidates on an unsafe method, stores what may be
    /// stored; the `-v` note.
    func finish(_ response: HTTPClientResponse, body: [UInt8]?, _ pending: Pending) async -> String {
        let head = ClientResponse(url: pending.request.url, statusCode: Int(response.status.code), headers: response.headers)
        for url in CacheRules.invalidatedURLs(by: pending.request, response: head) { await cache.removeCachedResponse(for: url) }
        if !response.metrics.snapshot.redirectHops.isEmpty { return "not stored: redirected" }
        if case .notStorable(let reason) = CacheRules.storability(of: head, for: pending.request) {
            return "not stored: \(reason)"
        }
        guard let body else { return "not stored: body larger than \(Self.largestBody) bytes" }
        await cache.storeCachedResponse(
            CachedResponse(response: head, data: Data(body), requestDate: pending.requestDate),
            for: pending.request)
        return "stored"
    }

    /// The head an entry is written out with (`-i`).
    static func head(of entry: CachedResponse) -> HTTPResponseHead {
        HTTPResponseHead(status: HTTPStatus(code: entry.response.statusCode), headers: entry.response.headers)
    }
}

/// The body as it streams out, kept for the cache up to `FetchCache.largestBody` (then dropped: `bytes` is nil).
final class BodyCapture {
    private(set) var bytes: [UInt8]? = []

    /// Keeps `chunk`, or gives up on a body that grew too large.
    func append(_ chunk: ByteBuffer) {
        guard bytes != nil else { return }
        if bytes!.count + chunk.readableBytes > FetchCache.largestBody {
            bytes = nil
        } else {
            bytes!.append(contentsOf: chunk.readableBytesArray)
        }
    }
}
