import Glibc
import Testing
import WireTestSupport
import Wire

extension IOSuite {
    @Suite struct HTTPClientSharedTests {
        @Test func theSharedClientServesRequestsAndOutlivesShutdown() async throws {
            try await withLoop { loop in
                try await withTimeout {
                    let server = try await ScriptedServer.start(on: loop) { _, request, _ in
                        .respond(ScriptedServer.ok("shared \(request)", extraHeaders: "Connection: close\r\n"))
                    }
                    let url = "http://127.0.0.1:\(server.address.port!)/"
                    let first = try await HTTPClient.shared.execute(HTTPClientRequest(url: url))
                    #expect(first.status.code == 200)
                    #expect(try await first.body.collect(upTo: 1024).readableBytes == "shared 0".utf8.count)
                    #expect(HTTPClient.shared.group?.loops.count == 1, "one loop, whatever the number of cores")

                    await HTTPClient.shared.shutdown()
                    let second = try await HTTPClient.shared.execute(HTTPClientRequest(url: url))
                    #expect(second.status.code == 200, "shutdown() on the shared client does nothing")
                    _ = try await second.body.collect(upTo: 1024)
                    try await server.close()
                }
            }
        }

        @Test func anOwnClientIsNotTheSharedOne() async throws {
            let client = try HTTPClient(group: try EventLoopGroup(loopCount: 1))
            #expect(!client.isShared)
            await client.shutdown()
            let group = try #require(client.group)
            await group.shutdownGracefully()
        }

        /// With no descriptor left for its epoll instance, `shared`'s loop cannot start: the process goes on and the
        /// first request throws `.startFailed` with the `IOError` (it used to stop the process in `fatalError`).
        /// Not under AddressSanitizer: its leak check at exit reads /proc with descriptors the child no longer has,
        /// and waits for ever.
        @Test(.disabled(if: Sanitizer.current == .address, "LeakSanitizer cannot check a process without descriptors"))
        func aSharedClientWhoseLoopCannotStartFailsItsRequestsInsteadOfStoppingTheProcess() async {
            await #expect(processExitsWith: .exitCode(0)) {
                var limit = rlimit()
                getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
                limit.rlim_cur = 0
                limit.rlim_max = 0
                guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { exit(10) }
                for _ in 0..<2 {
                    do throws(HTTPClientError) {
                        _ = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:9/"))
                        exit(11)
                    } catch {
                        guard error.code == .startFailed, error.ioError != nil else { exit(12) }
                    }
                }
                exit(0)
            }
        }
    }
}
