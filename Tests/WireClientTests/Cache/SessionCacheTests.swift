import Foundation
import Testing
import WireTestSupport
import Wire
import WireClient

/// Data tasks with a `URLCache` against a loopback server that counts what reaches it.
@Suite(.sharedIO(minutes: 1))
struct SessionCacheTests {
    /// Each path answers with one caching header set; `/validated` honours `If-None-Match` with a 304.
    static let handler: @Sendable (LoopbackServer.Recorded, HTTPResponseWriter) async throws -> Void = { request, writer in
        switch request.target {
        case "/fresh":
            try await writer.reply(200, "fresh body", headers: ["Cache-Control": "max-age=600"])
        case "/validated":
            if request.headers.first(name: "If-None-Match") == "\"v1\"" {
                try await writer.reply(304, headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=0", "X-Revalidated": "yes"])
            } else {
                try await writer.reply(
                    200, "validated body",
                    headers: [
                        "ETag": "\"v1\"", "Cache-Control": "max-age=0",
                        "X-Original": "kept",
                    ])
            }
        case "/modified":
            let lastModified = "Sun, 06 Nov 1994 08:49:37 GMT"
            if request.headers.first(name: "If-Modified-Since") == lastModified {
                try await writer.reply(304, headers: ["Cache-Control": "no-cache"])
            } else {
                try await writer.reply(
                    200, "modified body", headers: ["Last-Modified": lastModified, "Cache-Control": "no-cache"])
            }
        case "/no-store":
            try await writer.reply(200, "secret", headers: ["Cache-Control": "no-store, max-age=600"])
        case "/stale":
            try await writer.reply(
                200, "stale body \(request.headers.first(name: "X-N") ?? "")", headers: ["Cache-Control": "max-age=0"])
        default:
            try await writer.reply(200, "other")
        }
    }

    static func manager(_ cache: URLCache) -> SessionManager {
        var configuration = SessionConfiguration()
        configuration.urlCache = cache
        let manager = SessionManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        return manager
    }

    static func memoryCache() -> URLCache { URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, directory: nil) }

    static func hits(_ server: LoopbackServer, _ path: String) -> Int { server.requests.filter { $0.target == path }.count }

    @Test func aFreshEntryAnswersWithoutSendingAnything() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let manager = Self.manager(Self.memoryCache())
            let first = try await manager.data(for: ClientRequest(url: server.url("/fresh")))
            #expect(first.response?.source == .networkStored)
            let second = try await manager.data(for: ClientRequest(url: server.url("/fresh")))
            #expect(second.data == Data("fresh body".utf8))
            #expect(second.response?.source == .cache && second.response?.statusCode == 200)
            #expect(second.response?.metrics == nil)
            #expect(Self.hits(server, "/fresh") == 1)
        }
    }

    @Test func aStaleEntryIsRevalidatedAndA304DeliversTheCachedBodyAs200() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let cache = Self.memoryCache()
            let manager = Self.manager(cache)
            _ = try await manager.data(for: ClientRequest(url: server.url("/validated")))
            let second = try await manager.data(for: ClientRequest(url: server.url("/validated")))
            #expect(second.data == Data("validated body".utf8))
            #expect(second.response?.statusCode == 200 && second.response?.source == .revalidated)
            #expect(second.response?.value(forHTTPHeaderField: "X-Revalidated") == "yes")
            #expect(second.response?.value(forHTTPHeaderField: "X-Original") == "kept")
            let sent = server.requests.filter { $0.target == "/validated" }
            #expect(sent.count == 2 && sent[1].headers.first(name: "If-None-Match") == "\"v1\"")
            #expect(sent[0].headers.first(name: "If-None-Match") == nil)
            // The merged head is what is stored now.
            let stored = await cache.cachedResponse(for: ClientRequest(url: server.url("/validated")))
            #expect(stored?.response.value(forHTTPHeaderField: "X-Revalidated") == "yes")
            // Last-Modified and no-cache: every use is revalidated with If-Modified-Since.
            _ = try await manager.data(for: ClientRequest(url: server.url("/modified")))
            let modified = try await manager.data(for: ClientRequest(url: server.url("/modified")))
            #expect(modified.data == Data("modified body".utf8) && modified.response?.source == .revalidated)
            #expect(server.requests.last?.headers.first(name: "If-Modified-Since") == "Sun, 06 Nov 1994 08:49:37 GMT")
        }
    }

    @Test func theFourPolicies() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let manager = Self.manager(Self.memoryCache())
            // returnCacheDataDontLoad with nothing stored: −1008 and no request.
            var dontLoad = ClientRequest(url: server.url("/stale"))
            dontLoad.cachePolicy = .returnCacheDataDontLoad
            do throws(ClientError) {
                _ = try await manager.data(for: dontLoad)
                Issue.record("a miss under returnCacheDataDontLoad succeeded")
            } catch {
                #expect(error.code == .resourceUnavailable && error.urlErrorCode == -1008)
            }
            #expect(Self.hits(server, "/stale") == 0)
            var first = ClientRequest(url: server.url("/stale"))
            first.setValue("1", forHTTPHeaderField: "X-N")
            _ = try await manager.data(for: first)
            // A stale entry without a validator: useProtocolCachePolicy goes to the network again.
            var protocolPolicy = ClientRequest(url: server.url("/stale"))
            protocolPolicy.setValue("2", forHTTPHeaderField: "X-N")
            #expect(try await manager.data(for: protocolPolicy).data == Data("stale body 2".utf8))
            #expect(Self.hits(server, "/stale") == 2)
            // returnCacheDataElseLoad and returnCacheDataDontLoad: the stored one, whatever its age, no request.
            var elseLoad = ClientRequest(url: server.url("/stale"))
            elseLoad.cachePolicy = .returnCacheDataElseLoad
            let fromCache = try await manager.data(for: elseLoad)
            #expect(fromCache.data == Data("stale body 2".utf8) && fromCache.response?.source == .cache)
            #expect(try await manager.data(for: dontLoad).data == Data("stale body 2".utf8))
            #expect(Self.hits(server, "/stale") == 2)
            // reloadIgnoringLocalCacheData: the network even for a fresh entry.
            _ = try await manager.data(for: ClientRequest(url: server.url("/fresh")))
            var reload = ClientRequest(url: server.url("/fresh"))
            reload.cachePolicy = .reloadIgnoringLocalCacheData
            #expect(try await manager.data(for: reload).response?.source == .networkStored)
            #expect(Self.hits(server, "/fresh") == 2)
            // The configuration's policy applies when the request has none.
            var configuration = SessionConfiguration()
            configuration.urlCache = Self.memoryCache()
            configuration.requestCachePolicy = .returnCacheDataDontLoad
            let offline = SessionManager(configuration: configuration)
            do throws(ClientError) {
                _ = try await offline.data(for: ClientRequest(url: server.url("/fresh")))
                Issue.record("the configuration's returnCacheDataDontLoad went to the network")
            } catch {
                #expect(error.code == .resourceUnavailable)
            }
            #expect(Self.hits(server, "/fresh") == 2)
        }
    }

    @Test func theWillCacheHookCanVetoOrReplaceAndNoStoreIsNeverStored() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let cache = Self.memoryCache()
            let manager = Self.manager(cache)
            let asked = Recorder<String>()
            manager.dataTaskWillCacheResponse = { _, proposed in
                asked.record(proposed.response.url.path)
                if proposed.response.url.path == "/fresh" { return nil }
                var replaced = proposed
                replaced.data = Data("replaced".utf8)
                return replaced
            }
            _ = try await manager.data(for: ClientRequest(url: server.url("/fresh")))
            _ = try await manager.data(for: ClientRequest(url: server.url("/fresh")))
            #expect(Self.hits(server, "/fresh") == 2)
            #expect(await cache.cachedResponse(for: ClientRequest(url: server.url("/fresh"))) == nil)
            _ = try await manager.data(for: ClientRequest(url: server.url("/other")))
            var elseLoad = ClientRequest(url: server.url("/other"))
            elseLoad.cachePolicy = .returnCacheDataElseLoad
            #expect(try await manager.data(for: elseLoad).data == Data("replaced".utf8))
            _ = try await manager.data(for: ClientRequest(url: server.url("/no-store")))
            _ = try await manager.data(for: ClientRequest(url: server.url("/no-store")))
            #expect(Self.hits(server, "/no-store") == 2)
            #expect(await cache.cachedResponse(for: ClientRequest(url: server.url("/no-store"))) == nil)
            #expect(asked.all == ["/fresh", "/fresh", "/other"])
        }
    }

    @Test func aPostInvalidatesTheStoredEntry() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let cache = Self.memoryCache()
            let manager = Self.manager(cache)
            _ = try await manager.data(for: ClientRequest(url: server.url("/fresh")))
            #expect(await cache.cachedResponse(for: ClientRequest(url: server.url("/fresh"))) != nil)
            _ = try await manager.data(for: ClientRequest(url: server.url("/fresh"), method: "POST"))
            #expect(await cache.cachedResponse(for: ClientRequest(url: server.url("/fresh"))) == nil)
        }
    }

    @Test func anEphemeralSessionCachesInMemoryOnly() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let manager = SessionManager(configuration: .ephemeral)
            manager.responseSerializer = HTTPResponseSerializer()
            _ = try await manager.data(for: ClientRequest(url: server.url("/fresh")))
            #expect(try await manager.data(for: ClientRequest(url: server.url("/fresh"))).response?.source == .cache)
            #expect(Self.hits(server, "/fresh") == 1)
            #expect(manager.configuration.urlCache?.directory == nil && manager.configuration.urlCache?.currentDiskUsage == 0)
        }
    }
}
