import Foundation
import Glibc
import Testing
import Wire
import WireClient

/// Files that hold secrets are private: a cookie jar, the disk cache's directory and entries. Modes are read with
/// `stat`; a new file is checked for the absence of group and other bits, which holds under any umask (the test
/// process keeps its own: changing it would race with other tests creating files).
@Suite(.timeLimit(.minutes(1)))
struct PrivateFileModeTests {
    static func mode(_ path: String) -> mode_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    static func isPrivate(_ path: String, owner: mode_t) -> Bool {
        guard let mode = mode(path) else { return false }
        return mode & 0o077 == 0 && mode & owner == owner
    }

    @Test func aSavedCookieJarIsPrivateAndKeepsTheModeOfTheFileItReplaces() throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/jar.txt"
        let storage = CookieStorage()
        storage.storeCookies(fromResponseHeaders: ["Set-Cookie": "session=secret"], for: URL(string: "http://example.com/")!)
        try storage.saveCookies(toFile: path)
        #expect(Self.isPrivate(path, owner: 0o600), "new jar: \(String(Self.mode(path) ?? 0, radix: 8))")
        for kept: mode_t in [0o600, 0o640] {
            #expect(chmod(path, kept) == 0)
            try storage.saveCookies(toFile: path)
            #expect(Self.mode(path) == kept, "kept \(String(kept, radix: 8)): \(String(Self.mode(path) ?? 0, radix: 8))")
        }
        #expect(try CookieStorage().loadCookies(fromFile: path).cookies.map(\.value) == ["secret"])
    }

    @Test func theCacheDirectoryAndItsEntriesArePrivate() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let directory = folder + "/http/cache"
        let cache = URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
        let request = ClientRequest(url: URL(string: "http://cache.test/a")!)
        let response = ClientResponse(url: request.url, statusCode: 200, headers: ["Cache-Control": "max-age=600"])
        await cache.storeCachedResponse(CachedResponse(response: response, data: Data("private".utf8)), for: request)
        #expect(Self.isPrivate(folder + "/http", owner: 0o700), "\(String(Self.mode(folder + "/http") ?? 0, radix: 8))")
        #expect(Self.isPrivate(directory, owner: 0o700), "\(String(Self.mode(directory) ?? 0, radix: 8))")
        let entries = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(entries.count == 1)
        for name in entries { #expect(Self.isPrivate(directory + "/" + name, owner: 0o600)) }
    }

    @Test func credentialsInAURLNeverReachTheCacheKeyOrFile() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cache = URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: folder)
        let request = ClientRequest(url: URL(string: "http://alice:s3cret@cache.test/a?q=1#frag")!)
        let response = ClientResponse(url: request.url, statusCode: 200, headers: ["Cache-Control": "max-age=600"])
        await cache.storeCachedResponse(CachedResponse(response: response, data: Data("body".utf8)), for: request)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(names.count == 1)
        for name in names {
            let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)), as: UTF8.self)
            #expect(!text.contains("s3cret") && !text.contains("alice"))
            #expect(text.contains("http://cache.test/a?q=1"))
        }
        // The entry is the URL's without its userinfo, from a new cache object too.
        let reopened = URLCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: folder)
        let found = await reopened.cachedResponse(for: ClientRequest(url: URL(string: "http://cache.test/a?q=1")!))
        #expect(found?.data == Data("body".utf8))
        #expect(found?.response.url.absoluteString == "http://cache.test/a?q=1")
        // An @ after the authority is not userinfo.
        let pathAt = ClientRequest(url: URL(string: "http://cache.test/p@x")!)
        await reopened.storeCachedResponse(
            CachedResponse(
                response: ClientResponse(
                    url: pathAt.url, statusCode: 200,
                    headers: ["Cache-Control": "max-age=600"]),
                data: Data("at".utf8)), for: pathAt)
        #expect(await reopened.cachedResponse(for: pathAt)?.data == Data("at".utf8))
        #expect(await reopened.cachedResponse(for: ClientRequest(url: URL(string: "http://cache.test/x")!)) == nil)
    }
}
