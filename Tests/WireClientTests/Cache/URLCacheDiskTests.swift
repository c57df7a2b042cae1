import Foundation
import Testing
import Wire
import WireClient

/// The disk tier of `URLCache`: files under the directory, reopening, LRU eviction, and files that are not whole
/// entries read as misses.
@Suite(.timeLimit(.minutes(1)))
struct URLCacheDiskTests {
    static func request(_ path: String) -> ClientRequest { ClientRequest(url: URL(string: "http://cache.test\(path)")!) }

    static func entry(_ path: String, bytes: Int, fill: UInt8 = 0x61) -> CachedResponse {
        CachedResponse(
            response: ClientResponse(url: request(path).url, statusCode: 200, headers: ["Cache-Control": "max-age=600"]),
            data: Data(repeating: fill, count: bytes))
    }

    static func entryFiles(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    @Test func anEntryOutlivesTheCacheObjectAndReopensFromTheDirectory() async throws {
        let directory = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: directory)
            var stored = Self.entry("/a", bytes: 1000)
            stored.userInfo = ["k": "v"]
            await cache.storeCachedResponse(stored, for: Self.request("/a"))
            #expect(cache.currentDiskUsage > 1000)
        }
        #expect(Self.entryFiles(directory).count == 1)
        let reopened = URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
        #expect(reopened.currentDiskUsage > 1000)
        let found = await reopened.cachedResponse(for: Self.request("/a"))
        #expect(found?.data == Data(repeating: 0x61, count: 1000))
        #expect(found?.response.headers["Cache-Control"] == ["max-age=600"])
        #expect(found?.userInfo == ["k": "v"])
        #expect(await reopened.cachedResponse(for: Self.request("/b")) == nil)
        await reopened.removeCachedResponse(for: Self.request("/a"))
        #expect(Self.entryFiles(directory).isEmpty && reopened.currentDiskUsage == 0)
    }

    @Test(arguments: [-1, 0, 99, 1000, Int.max])
    func aStatusHTTPCannotCarryIsNotStoredAndDoesNotTrap(status: Int) async throws {
        let directory = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: directory)
        var entry = Self.entry("/odd", bytes: 10)
        entry.response.statusCode = status
        await cache.storeCachedResponse(entry, for: Self.request("/odd"))
        #expect(Self.entryFiles(directory).isEmpty && cache.currentMemoryUsage == 0)
        #expect(await cache.cachedResponse(for: Self.request("/odd")) == nil)
    }

    @Test func anEntryFileOverTheBlockingLimitIsAMissButStays() async throws {
        let directory = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
        await cache.storeCachedResponse(Self.entry("/big", bytes: 20_000), for: Self.request("/big"))
        #expect(cache.cachedResponse(for: Self.request("/big"), blockingReadsUpTo: 1000) == nil)
        // Still there for a reader allowed to read it.
        #expect(Self.entryFiles(directory).count == 1)
        #expect(cache.cachedResponse(for: Self.request("/big"), blockingReadsUpTo: 1 << 20)?.data.count == 20_000)
    }

    @Test func theDiskTierEvictsTheLeastRecentlyUsedBeyondItsCapacityAcrossReopening() async throws {
        let directory = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Room for three entries of ~10 KB, not four.
        let cache = URLCache(memoryCapacity: 0, diskCapacity: 35_000, directory: directory)
        for path in ["/1", "/2", "/3"] {
            await cache.storeCachedResponse(Self.entry(path, bytes: 10_000), for: Self.request(path))
        }
        // Reading /1 makes /2 the least recently used.
        #expect(await cache.cachedResponse(for: Self.request("/1")) != nil)
        await cache.storeCachedResponse(Self.entry("/4", bytes: 10_000), for: Self.request("/4"))
        #expect(await cache.cachedResponse(for: Self.request("/2")) == nil)
        #expect(await cache.cachedResponse(for: Self.request("/1")) != nil)
        #expect(Self.entryFiles(directory).count == 3 && cache.currentDiskUsage <= 35_000)
        // Reopened with less room: the order comes from the files' times (/3 is the oldest use now).
        try await Task.sleep(for: .milliseconds(20))  // distinct modification times, not synchronisation
        #expect(await cache.cachedResponse(for: Self.request("/4")) != nil)
        try await Task.sleep(for: .milliseconds(20))
        #expect(await cache.cachedResponse(for: Self.request("/1")) != nil)
        let smaller = URLCache(memoryCapacity: 0, diskCapacity: 25_000, directory: directory)
        #expect(Self.entryFiles(directory).count == 2)
        #expect(await smaller.cachedResponse(for: Self.request("/3")) == nil)
        #expect(await smaller.cachedResponse(for: Self.request("/4")) != nil)
        #expect(await smaller.cachedResponse(for: Self.request("/1")) != nil)
    }

    @Test func tornGarbageAndForeignFilesAreMissesAndAreRemoved() async throws {
        let directory = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let paths = ["/torn", "/garbage", "/flipped", "/empty", "/header-only", "/foreign", "/kept"]
        do {
            let cache = URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
            for (index, path) in paths.enumerated() {
                await cache.storeCachedResponse(Self.entry(path, bytes: 5000, fill: UInt8(0x41 + index)), for: Self.request(path))
            }
        }
        func file(of path: String) -> URL {
            // The one file that appeared for `path`: found by the URL in its header (no path is a prefix of another).
            for name in Self.entryFiles(directory) {
                let data = FileManager.default.contents(atPath: directory + "/" + name) ?? Data()
                if data.range(of: Data(Self.request(path).url.absoluteString.utf8)) != nil {
                    return URL(fileURLWithPath: directory + "/" + name)
                }
            }
            Issue.record("no file for \(path)")
            return URL(fileURLWithPath: directory + "/missing")
        }
        let files = Dictionary(uniqueKeysWithValues: paths.map { ($0, file(of: $0)) })
        var bytes = try Data(contentsOf: files["/torn"]!)
        try bytes.prefix(bytes.count - 100).write(to: files["/torn"]!)
        try Data((0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: files["/garbage"]!)
        bytes = try Data(contentsOf: files["/flipped"]!)
        bytes[bytes.count - 10] ^= 0x01
        try bytes.write(to: files["/flipped"]!)
        try Data().write(to: files["/empty"]!)
        bytes = try Data(contentsOf: files["/header-only"]!)
        try bytes.prefix(30).write(to: files["/header-only"]!)
        // A whole, valid entry under another URL's file name: the URL inside does not match.
        try Data(contentsOf: files["/kept"]!).write(to: files["/foreign"]!)
        // A file that is not the cache's, and a write a crash interrupted.
        try Data("notes".utf8).write(to: URL(fileURLWithPath: directory + "/README"))
        try Data("half".utf8).write(to: URL(fileURLWithPath: directory + "/.partial-1234"))
        let cache = URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
        #expect(!FileManager.default.fileExists(atPath: directory + "/.partial-1234"))
        for path in ["/torn", "/garbage", "/flipped", "/empty", "/header-only", "/foreign"] {
            #expect(await cache.cachedResponse(for: Self.request(path)) == nil, "\(path)")
            #expect(!FileManager.default.fileExists(atPath: files[path]!.path), "\(path) left behind")
        }
        #expect(await cache.cachedResponse(for: Self.request("/kept"))?.data == Data(repeating: 0x47, count: 5000))
        #expect(Self.entryFiles(directory) == ["README", files["/kept"]!.lastPathComponent].sorted())
    }

    @Test func anEphemeralCacheNeverTouchesTheDisk() async throws {
        let cache = try #require(SessionConfiguration.ephemeral.urlCache)
        #expect(cache.directory == nil && cache.diskCapacity == 0 && cache.memoryCapacity == 4 << 20)
        await cache.storeCachedResponse(Self.entry("/e", bytes: 100), for: Self.request("/e"))
        #expect(await cache.cachedResponse(for: Self.request("/e")) != nil)
        #expect(cache.currentDiskUsage == 0 && cache.currentMemoryUsage > 100)
        #expect(SessionConfiguration.default.urlCache == nil)
    }

    @Test func theMemoryTierEvictsByBytes() async {
        let cache = URLCache(memoryCapacity: 25_000, diskCapacity: 0, directory: nil)
        for path in ["/1", "/2", "/3"] {
            await cache.storeCachedResponse(Self.entry(path, bytes: 10_000), for: Self.request(path))
        }
        #expect(await cache.cachedResponse(for: Self.request("/1")) == nil)
        #expect(await cache.cachedResponse(for: Self.request("/3")) != nil)
        #expect(cache.currentMemoryUsage <= 25_000)
        await cache.storeCachedResponse(Self.entry("/big", bytes: 30_000), for: Self.request("/big"))
        #expect(await cache.cachedResponse(for: Self.request("/big")) == nil)
        await cache.removeAllCachedResponses()
        #expect(cache.currentMemoryUsage == 0)
    }

    /// The only entry file in `directory`, overwritten with `bytes`; returns its path.
    static func overwrite(_ directory: String, with bytes: [UInt8]) throws -> String {
        let names = entryFiles(directory)
        guard names.count == 1 else { throw CocoaError(.fileNoSuchFile) }
        let path = directory + "/" + names[0]
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func aForgedWholeEntryReadsBackSoTheRejectionsBelowAreTheHeaders() async throws {
        let directory = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let url = Self.request("/h").url.absoluteString
        await URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
            .storeCachedResponse(Self.entry("/h", bytes: 10), for: Self.request("/h"))
        let header = ForgedCacheEntry.header(
            url: url, fields: [("Cache-Control", "max-age=600"), ("X-A", "é")],
            vary: [("accept", "*/*"), ("cookie", nil)], userInfo: [("k", "v")])
        _ = try Self.overwrite(directory, with: ForgedCacheEntry.file(header: header, body: Array("forged".utf8)))
        let cache = URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
        var request = Self.request("/h")
        request.setValue("*/*", forHTTPHeaderField: "Accept")
        let found = cache.cachedResponse(for: request, blockingReadsUpTo: 1 << 20)
        #expect(found?.data == Data("forged".utf8))
        #expect(found?.response.headers["X-A"] == ["é"] && found?.userInfo == ["k": "v"])
        var expectedVary: [String: String?] = ["accept": "*/*"]
        expectedVary["cookie"] = .some(nil)
        #expect(found?.varyValues == expectedVary)
        // A file larger than the limit is left to the asynchronous read.
        #expect(
            URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
                .cachedResponse(for: request, blockingReadsUpTo: 10) == nil)
        #expect(Self.entryFiles(directory).count == 1)
    }

    @Test func everyTruncationOfAnEntryFileIsAMissAndIsRemoved() async throws {
        let directory = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        await URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
            .storeCachedResponse(Self.entry("/t", bytes: 40), for: Self.request("/t"))
        let name = try #require(Self.entryFiles(directory).first)
        let whole = try Array(Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
        #expect(
            URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
                .cachedResponse(for: Self.request("/t"), blockingReadsUpTo: 1 << 20)?.data == Data(repeating: 0x61, count: 40))
        for length in 0..<whole.count {
            try Data(whole.prefix(length)).write(to: URL(fileURLWithPath: directory + "/" + name))
            let cache = URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
            let found =
                length % 2 == 0
                ? cache.cachedResponse(for: Self.request("/t"), blockingReadsUpTo: 1 << 20)
                : await cache.cachedResponse(for: Self.request("/t"))
            #expect(found == nil, "a file cut at \(length) of \(whole.count) bytes was read")
            #expect(Self.entryFiles(directory).isEmpty, "a file cut at \(length) bytes was left")
        }
    }

    @Test func hostileHeadersWithRightChecksumsAreMissesAndAreRemoved() async throws {
        let directory = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let url = Self.request("/x").url.absoluteString
        let body = Array("body".utf8)
        let good = ForgedCacheEntry.header(url: url)
        let fixed =
            ForgedCacheEntry.integer(200, width: 2) + ForgedCacheEntry.integer(Double(0).bitPattern, width: 8)
            + ForgedCacheEntry.integer(Double(0).bitPattern, width: 8)
        let cases: [(String, [UInt8])] = [
            ("a header length beyond the file", ForgedCacheEntry.file(header: good, body: body, headerLength: good.count + 1)),
            (
                "header and body lengths shifted",
                ForgedCacheEntry.file(
                    header: good, body: body, headerLength: good.count - 4,
                    bodyLength: body.count + 4)
            ),
            (
                "a URL length beyond the header",
                ForgedCacheEntry.file(
                    header: fixed + ForgedCacheEntry.integer(0xFFFF_FFFF, width: 4) + Array(url.utf8), body: body)
            ),
            (
                "four billion fields",
                ForgedCacheEntry.file(
                    header: fixed + ForgedCacheEntry.string(url) + ForgedCacheEntry.integer(0xFFFF_FFFF, width: 4), body: body)
            ),
            (
                "a field value that is not UTF-8",
                ForgedCacheEntry.file(
                    header: fixed + ForgedCacheEntry.string(url) + ForgedCacheEntry.integer(1, width: 4)
                        + ForgedCacheEntry.string("X")
                        + ForgedCacheEntry.integer(2, width: 4) + [0xFF, 0xFE] + ForgedCacheEntry.integer(0, width: 8), body: body
                )
            ),
            ("bytes after the user info", ForgedCacheEntry.file(header: good + [0], body: body)),
            ("no user info count", ForgedCacheEntry.file(header: Array(good.dropLast(4)), body: body)),
            ("status 0", ForgedCacheEntry.file(header: ForgedCacheEntry.header(status: 0, url: url), body: body)),
            ("status 1000", ForgedCacheEntry.file(header: ForgedCacheEntry.header(status: 1000, url: url), body: body)),
            (
                "a Vary flag of 2",
                ForgedCacheEntry.file(
                    header: Array(ForgedCacheEntry.header(url: url, vary: [("accept", nil)]).dropLast(5)) + [2]
                        + ForgedCacheEntry.integer(0, width: 4), body: body)
            ),
            ("a NaN date", ForgedCacheEntry.file(header: ForgedCacheEntry.header(responseDate: .nan, url: url), body: body)),
            ("another URL", ForgedCacheEntry.file(header: ForgedCacheEntry.header(url: url + "y"), body: body)),
            ("format 1", ForgedCacheEntry.file(header: good, body: body, version: 1)),
            ("zeros", [UInt8](repeating: 0, count: 200)),
        ]
        for (index, (what, bytes)) in cases.enumerated() {
            await URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
                .storeCachedResponse(Self.entry("/x", bytes: 4), for: Self.request("/x"))
            _ = try Self.overwrite(directory, with: bytes)
            let cache = URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
            let found =
                index % 2 == 0
                ? cache.cachedResponse(for: Self.request("/x"), blockingReadsUpTo: 1 << 20)
                : await cache.cachedResponse(for: Self.request("/x"))
            #expect(found == nil, "\(what) was read")
            #expect(Self.entryFiles(directory).isEmpty, "\(what) was left")
        }
    }
}
