import Foundation
import Testing
import WireTestSupport
import Wire
import WireClient

/// The resource downloader with the session's `URLCache` on disk: an entry a task would be answered with without the
/// network answers the download directly (no task, no receipt, no request); a stale entry, a corrupt file or a policy
/// that needs the network still goes through a task.
@Suite(.sharedIO(minutes: 1))
struct ResourceDownloaderURLCacheTests {
    /// `/fresh` may be kept an hour; `/validated` is stale at once and honours `If-None-Match`; `/missing` is a 404
    /// that may be kept an hour.
    static let handler: @Sendable (LoopbackServer.Recorded, HTTPResponseWriter) async throws -> Void = { request, writer in
        switch request.target {
        case "/fresh":
            try await writer.reply(200, "fresh body", headers: ["Cache-Control": "max-age=3600"])
        case "/validated":
            if request.headers.first(name: "If-None-Match") == "\"v1\"" {
                try await writer.reply(304, headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=0"])
            } else {
                try await writer.reply(200, "validated body", headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=0"])
            }
        case "/missing":
            try await writer.reply(404, "not here", headers: ["Cache-Control": "max-age=3600"])
        default:
            try await writer.reply(200, "other")
        }
    }

    /// A downloader without a memory cache on a manager whose `URLCache` keeps nothing in memory: every answer that
    /// does not come from the network comes from an entry file in `directory`.
    static func downloader(_ directory: String, memoryCache: AutoPurgingCache<Data>? = nil) throws -> ResourceDownloader<Data> {
        var configuration = SessionConfiguration()
        configuration.urlCache = URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
        let manager = try HTTPSessionManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        return ResourceDownloader<Data>(sessionManager: manager, cache: memoryCache)
    }

    static func hits(_ server: LoopbackServer, _ path: String) -> Int { server.requests.filter { $0.target == path }.count }

    /// What one callback-form download told its requester: the receipt, and the response with the body or the error.
    struct Answer: Sendable {
        var hadReceipt: Bool
        var response: ClientResponse?
        var result: Result<Data, ClientError>
    }

    static func download(_ downloader: ResourceDownloader<Data>, _ request: ClientRequest) async -> Answer {
        let (stream, told) = AsyncStream.makeStream(of: (ClientResponse?, Result<Data, ClientError>).self)
        let receipt = downloader.download(
            request,
            success: { _, response, data in
                told.yield((response, .success(data)))
                told.finish()
            },
            failure: { _, response, error in
                told.yield((response, .failure(error)))
                told.finish()
            })
        var answers = stream.makeAsyncIterator()
        guard let (response, result) = await answers.next() else {
            return Answer(
                hadReceipt: receipt != nil, response: nil, result: .failure(ClientError(.cancelled, failingURL: request.url)))
        }
        return Answer(hadReceipt: receipt != nil, response: response, result: result)
    }

    @Test func aFreshEntryOnDiskAnswersWithoutATaskOrARequest() async throws {
        let directory = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await LoopbackServer.with(Self.handler) { server in
            let request = ClientRequest(url: server.url("/fresh"))
            let first = await Self.download(try Self.downloader(directory), request)
            #expect(first.hadReceipt && first.response?.source == .networkStored)
            // Another manager and cache over the same directory: only the file can answer.
            let memory = AutoPurgingCache<Data>(purgesOnMemoryPressure: false)
            let downloader = try Self.downloader(directory, memoryCache: memory)
            let second = await Self.download(downloader, request)
            #expect(!second.hadReceipt)
            #expect(try second.result.get() == Data("fresh body".utf8))
            #expect(second.response?.source == .cache && second.response?.statusCode == 200)
            #expect(second.response?.url == request.url && second.response?.metrics == nil)
            #expect(downloader.sessionManager.session.tasks.isEmpty && downloader.activeDownloadCount == 0)
            // Stored in the downloader's memory cache as a downloaded value is.
            #expect(memory.value(for: request) == Data("fresh body".utf8))
            // The async form too.
            let third = try await Self.downloader(directory).download(request)
            #expect(third.value == Data("fresh body".utf8) && third.response?.source == .cache)
            #expect(Self.hits(server, "/fresh") == 1)
        }
    }

    @Test func aStaleEntryIsRevalidatedByATask() async throws {
        let directory = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await LoopbackServer.with(Self.handler) { server in
            let downloader = try Self.downloader(directory)
            let request = ClientRequest(url: server.url("/validated"))
            _ = await Self.download(downloader, request)
            let second = await Self.download(downloader, request)
            #expect(second.hadReceipt)
            #expect(try second.result.get() == Data("validated body".utf8))
            #expect(second.response?.source == .revalidated && second.response?.statusCode == 200)
            let sent = server.requests.filter { $0.target == "/validated" }
            #expect(sent.count == 2 && sent.last?.headers.first(name: "If-None-Match") == "\"v1\"")
            // Any entry, stale or not, under returnCacheDataElseLoad: no task, no request.
            var elseLoad = request
            elseLoad.cachePolicy = .returnCacheDataElseLoad
            let third = await Self.download(downloader, elseLoad)
            #expect(!third.hadReceipt && third.response?.source == .cache)
            #expect(try third.result.get() == Data("validated body".utf8))
            // reloadIgnoringLocalCacheData: never from the cache.
            var reload = ClientRequest(url: server.url("/fresh"))
            _ = await Self.download(downloader, reload)
            reload.cachePolicy = .reloadIgnoringLocalCacheData
            let reloaded = await Self.download(downloader, reload)
            #expect(reloaded.hadReceipt && reloaded.response?.source == .networkStored)
            #expect(Self.hits(server, "/validated") == 2 && Self.hits(server, "/fresh") == 2)
        }
    }

    @Test func aCorruptEntryFileIsAMissAndTheDownloadGoesToTheNetwork() async throws {
        let directory = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await LoopbackServer.with(Self.handler) { server in
            let request = ClientRequest(url: server.url("/fresh"))
            _ = await Self.download(try Self.downloader(directory), request)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            #expect(names.count == 1)
            let file = URL(fileURLWithPath: directory + "/" + names[0])
            var bytes = try Data(contentsOf: file)
            bytes[bytes.count - 3] ^= 0x20
            try bytes.write(to: file)
            let downloader = try Self.downloader(directory)
            let second = await Self.download(downloader, request)
            #expect(second.hadReceipt && second.response?.source == .networkStored)
            #expect(try second.result.get() == Data("fresh body".utf8))
            #expect(Self.hits(server, "/fresh") == 2)
            // The task stored a whole entry again, which answers the next download directly.
            let third = await Self.download(downloader, request)
            #expect(!third.hadReceipt && third.response?.source == .cache)
        }
    }

    @Test func theResponseSerializerJudgesAStoredResponseAsItJudgesADownloadedOne() async throws {
        let directory = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await LoopbackServer.with(Self.handler) { server in
            let downloader = try Self.downloader(directory)
            let request = ClientRequest(url: server.url("/missing"))
            let first = await Self.download(downloader, request)
            #expect(first.hadReceipt && first.response?.source == .networkStored)
            let second = await Self.download(downloader, request)
            #expect(!second.hadReceipt && second.response?.source == .cache && second.response?.statusCode == 404)
            switch (first.result, second.result) {
            case (.failure(let network), .failure(let cached)):
                #expect(network.code == .unacceptableStatusCode(404) && cached.code == .unacceptableStatusCode(404))
                #expect(cached.response?.source == .cache)
            default:
                Issue.record("a stored 404 was not refused as a downloaded one is: \(first.result), \(second.result)")
            }
            #expect(Self.hits(server, "/missing") == 1)
        }
    }
}
