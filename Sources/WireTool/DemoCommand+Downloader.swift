import FoundationEssentials
import Synchronization
import Wire
import WireClient

/// The third part of `wire demo`: WireClient's resource downloader merging duplicate requests into one download per
/// URL and answering repeats from its memory cache, then a session's HTTP cache answering a fresh response without
/// the network and revalidating a stale one with a 304.
extension DemoCommand {
    /// How many times the server was asked for `/avatar/…`, `/cached` and `/revalidated`.
    static let avatarRequests = Atomic<Int>(0)
    static let cachedRequests = Atomic<Int>(0)

    /// Runs the downloader and cache part against `base`; returns the number of unexpected outcomes.
    static func runDownloader(base: String) async throws -> Int {
        var failures = 0
        print("")
        print("WireClient: a ResourceDownloader (4 downloads at a time, a memory cache) on \(base)/avatar/1…4")
        let downloader = ResourceDownloader<Data>(responseSerializer: HTTPResponseSerializer(), cache: AutoPurgingCache<Data>())
        let requests = (0..<40).map { ClientRequest(url: URL(string: "\(base)/avatar/\($0 % 4 + 1)")!) }
        let fetched = try await withThrowingTaskGroup(of: Int.self) { group in
            for request in requests { group.addTask { try await downloader.download(request).value.count } }
            return try await group.reduce(0, +)
        }
        let downloads = avatarRequests.load(ordering: .relaxed)
        print("  40 requests for 4 URLs at once → \(downloads) downloads, \(fetched) bytes delivered")
        if downloads > 4 { failures += 1 }
        for request in requests { _ = try await downloader.download(request) }
        let after = avatarRequests.load(ordering: .relaxed)
        print(
            "  the same 40 again → \(after - downloads) downloads (all from the memory cache, "
                + "\(downloader.cache?.memoryUsage ?? 0) bytes held)")
        if after != downloads { failures += 1 }

        print("")
        print("WireClient: a session with an HTTP cache (RFC 9111, memory only here; URLCache can keep a directory)")
        var configuration = SessionConfiguration.default
        configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, directory: nil)
        let manager = try HTTPSessionManager(baseURL: base + "/", configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        // The first of each pair goes to the network; the second comes from the cache, fresh or after a 304.
        for (path, expected) in [("cached", 1), ("cached", 0), ("revalidated", 1), ("revalidated", 1)] {
            let before = cachedRequests.load(ordering: .relaxed)
            let result = try await manager.get(path)
            let asked = cachedRequests.load(ordering: .relaxed) - before
            let source = result.response?.source.rawValue ?? "none"
            print(
                "  GET \(path) → \(result.response?.statusCode ?? 0) from \(source), \(asked) request\(asked == 1 ? "" : "s") to the server"
            )
            if result.response?.statusCode != 200 || asked != expected { failures += 1 }
        }
        return failures
    }

    /// `/avatar/N` (1 KiB, counted), `/cached` (fresh for 10 minutes) and `/revalidated` (stale at once, with an ETag:
    /// a conditional request gets 304).
    static func handleDownloaderRoutes(_ request: HTTPServerRequest, _ response: HTTPResponseWriter) async throws -> Bool {
        let target = request.head.target
        if target.hasPrefix("/avatar/") {
            avatarRequests.add(1, ordering: .relaxed)
            let byte = UInt8(truncatingIfNeeded: target.utf8.last ?? 0)
            try await response.respond(
                HTTPResponseHead(status: .ok, headers: ["Content-Type": "application/octet-stream"]),
                body: ByteBuffer(bytes: [UInt8](repeating: byte, count: 1024)))
            return true
        }
        switch target {
        case "/cached":
            cachedRequests.add(1, ordering: .relaxed)
            try await response.respond(
                HTTPResponseHead(status: .ok, headers: ["Cache-Control": "max-age=600"]),
                body: ByteBuffer(string: "fresh for ten minutes"))
        case "/revalidated":
            cachedRequests.add(1, ordering: .relaxed)
            if request.head.headers.first(name: "If-None-Match") == "\"v1\"" {
                try await response.respond(HTTPResponseHead(status: .notModified, headers: ["ETag": "\"v1\""]))
            } else {
                try await response.respond(
                    HTTPResponseHead(status: .ok, headers: ["ETag": "\"v1\"", "Cache-Control": "no-cache"]),
                    body: ByteBuffer(string: "revalidate me"))
            }
        default:
            return false
        }
        return true
    }
}
