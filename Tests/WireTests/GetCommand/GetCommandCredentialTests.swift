import Foundation
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireTestSupport

extension IOSuite {
    /// `user:password@` in a URL, as curl treats it: sent as Basic credentials, never kept in a cache key or file;
    /// and the cache key's transport: the same URL through another Unix socket is another server.
    @Suite struct GetCommandCredentialTests {
        /// The request heads a server received.
        final class Heads: Sendable {
            private let list = Lock<[String]>([])
            func append(_ head: String) { list.withLock { $0.append(head) } }
            var all: [String] { list.withLock { $0 } }
            /// The `Authorization` value of request `index`, if it had one.
            func authorization(_ index: Int) -> String? {
                let heads = all
                guard index < heads.count else { return nil }
                return heads[index].components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("authorization:") }
                    .map { String($0.dropFirst("authorization:".count).drop { $0 == " " }) }
            }
        }

        /// A loopback server answering every request with `body` (cacheable for anyone for ten minutes), recording
        /// the heads; `address` nil for TCP on a free port.
        static func withServer(
            _ body: String, address: SocketAddress? = nil, group: EventLoopGroup,
            _ run: (ScriptedServer, Heads) async throws -> Void
        ) async throws {
            let heads = Heads()
            let server = try await ScriptedServer.start(
                on: group.next(),
                address: address ?? (try SocketAddress(ipAddress: "127.0.0.1", port: 0))
            ) { _, _, head in
                heads.append(head)
                return .respond(ScriptedServer.ok(body, extraHeaders: "Cache-Control: public, max-age=600\r\n"))
            }
            do { try await run(server, heads) } catch {
                try await server.close()
                throw error
            }
            try await server.close()
        }

        /// Runs `body` with a one-loop group, shut down after.
        static func withGroup(_ body: (EventLoopGroup) async throws -> Void) async throws {
            let group = try EventLoopGroup(loopCount: 1)
            do { try await body(group) } catch {
                await group.shutdownGracefully()
                throw error
            }
            await group.shutdownGracefully()
        }

        static func basic(_ credentials: String) -> String { "Basic " + Data(credentials.utf8).base64EncodedString() }

        @Test func credentialsInTheURLAreSentAsBasicAndTheOptionsOverrideThem() async throws {
            try await Self.withGroup { group in
                try await Self.withServer("ok", group: group) { server, heads in
                    let port = server.address.port!
                    // Percent-decoded, each part on its own, as curl decodes them.
                    var run = try await WireToolRunner.run(["get", "-s", "http://al%20ice:p%40ss%3Aword@127.0.0.1:\(port)/a"])
                    #expect(run.status == 0 && run.text == "ok", "\(run.errors)")
                    #expect(heads.authorization(0) == Self.basic("al ice:p@ss:word"))
                    // The request line and Host carry no userinfo.
                    #expect(
                        heads.all[0].hasPrefix("GET /a HTTP/1.1\r\n") && heads.all[0].contains("\r\nHost: 127.0.0.1:\(port)\r\n"))
                    #expect(!heads.all[0].contains("ice@") && !heads.all[0].contains("p%40ss"))
                    // A user without a password: an empty one, as curl sends it.
                    run = try await WireToolRunner.run(["get", "-s", "http://bob@127.0.0.1:\(port)/b"])
                    #expect(heads.authorization(1) == Self.basic("bob:"))
                    // -u wins, and -H Authorization over both.
                    run = try await WireToolRunner.run(["get", "-s", "-u", "carol:c", "http://bob:b@127.0.0.1:\(port)/c"])
                    #expect(heads.authorization(2) == Self.basic("carol:c"))
                    run = try await WireToolRunner.run([
                        "get", "-s", "-H", "Authorization: Bearer t", "http://bob:b@127.0.0.1:\(port)/d",
                    ])
                    #expect(heads.authorization(3) == "Bearer t")
                    // No userinfo, no credentials.
                    run = try await WireToolRunner.run(["get", "-s", "http://127.0.0.1:\(port)/e"])
                    #expect(heads.all.count == 5 && heads.authorization(4) == nil)
                    run = try await WireToolRunner.run(["get", "-s", "http://a:%zz@127.0.0.1:\(port)/f"])
                    #expect(run.status == 3 && heads.all.count == 5, "\(run.errors)")
                }
            }
        }

        @Test func noCredentialReachesTheCacheDirectory() async throws {
            try await Self.withGroup { group in
                try await Self.withServer("public body", group: group) { server, heads in
                    let folder = try WireToolRunner.temporaryFolder()
                    defer { try? FileManager.default.removeItem(at: folder) }
                    let cache = folder.appendingPathComponent("cache").path
                    let url = "http://alice:s3cret@127.0.0.1:\(server.address.port!)/doc"
                    var run = try await WireToolRunner.run(["get", "-v", "--cache-dir", cache, url])
                    #expect(run.status == 0 && run.text == "public body", "\(run.errors)")
                    #expect(run.errors.contains("* cache: stored\n"), "\(run.errors)")
                    #expect(heads.authorization(0) == Self.basic("alice:s3cret"))
                    for name in try FileManager.default.contentsOfDirectory(atPath: cache) {
                        let bytes = try Data(contentsOf: URL(fileURLWithPath: cache + "/" + name))
                        let text = String(decoding: bytes, as: UTF8.self)
                        #expect(!text.contains("s3cret") && !text.contains("alice"), "\(name) holds the credentials")
                        #expect(text.contains("http://127.0.0.1:\(server.address.port!)/doc"))
                    }
                    // The entry is the URL's, whoever asks (the answer said public).
                    run = try await WireToolRunner.run([
                        "get", "-v", "--cache-dir", cache, "http://127.0.0.1:\(server.address.port!)/doc",
                    ])
                    #expect(run.text == "public body" && run.errors.contains("* cache: hit (fresh)\n"), "\(run.errors)")
                    #expect(heads.all.count == 1)
                }
            }
        }

        @Test func theSameURLThroughAnotherUnixSocketIsNotAnsweredFromTheFirstOnesEntry() async throws {
            try await Self.withGroup { group in
                let folder = try WireToolRunner.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let cache = folder.appendingPathComponent("cache").path
                let socketA = folder.appendingPathComponent("a.sock").path
                let socketB = folder.appendingPathComponent("b.sock").path
                try await Self.withServer("from A", address: try SocketAddress(unixPath: socketA), group: group) { _, headsA in
                    try await Self.withServer("from B", address: try SocketAddress(unixPath: socketB), group: group) {
                        _, headsB in
                        var answers: [String] = []
                        // A, then B, then each again: each socket's own entry answers it from then on.
                        for socket in [socketA, socketB, socketA, socketB] {
                            let run = try await WireToolRunner.run([
                                "get", "-s", "--cache-dir", cache, "--unix-socket", socket,
                                "http://app.test/x",
                            ])
                            answers.append(run.text)
                        }
                        #expect(answers == ["from A", "from B", "from A", "from B"])
                        #expect(headsA.all.count == 1 && headsB.all.count == 1)
                    }
                }
            }
        }
    }
}
