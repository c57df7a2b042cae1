import Glibc
import Synchronization
import Testing
import WireTestSupport
@_spi(Locking) import Wire

extension IOSuite {
    /// Objects released while running are shut down for the program that forgot to: no trap, no thread or
    /// listener left behind.
    @Suite(.exclusiveIO) struct ReleasedWithoutShutdownTests {
        /// Whether the process still has the thread with kernel id `tid`.
        static func threadExists(_ tid: Int32) -> Bool { access("/proc/self/task/\(tid)", F_OK) == 0 }

        /// Waits until none of `tids` runs any more.
        static func threadsEnd(_ tids: [Int32]) async -> Bool {
            await eventually { tids.allSatisfy { !threadExists($0) } }
        }

        @Test func aGroupReleasedWithoutShutdownStopsItsThreads() async throws {
            let tids = try Self.startAndReleaseGroup()
            #expect(tids.count == 2)
            #expect(await Self.threadsEnd(tids), "the loops of a released group stop")
        }

        @Test func aGroupReleasedOnItsOwnLoopStopsWithoutWaitingForItself() async throws {
            let (tids, done) = try Self.releaseGroupOnItsLoop()
            try await done.next()
            #expect(await Self.threadsEnd(tids), "the loop released its group from its own thread and still stopped")
        }

        @Test func aClientReleasedWithoutShutdownStopsItsLoops() async throws {
            try await withLoop { serverLoop in
                let server = try await ScriptedServer.start(on: serverLoop) { _, _, _ in .respond(ScriptedServer.ok("hi")) }
                let tids = try await Self.useAndReleaseClient(port: server.address.port!)
                #expect(!tids.isEmpty)
                #expect(await Self.threadsEnd(tids), "the loops a released client owned stop")
                try await server.close()
            }
        }

        @Test func aServerReleasedWithoutShutdownClosesItsListener() async throws {
            let group = try EventLoopGroup(loopCount: 1, namePrefix: "released-server")
            let port = try await Self.startAndReleaseServer(on: group)
            let refused = await eventually { !LoopbackPort.accepts(port) }
            #expect(refused, "the released server's port refuses connections")
            await group.shutdownGracefully()
        }

        @Test func theWarningIsSaidOncePerKind() {
            #expect(ImplicitShutdownWarning.emit(for: "TestKind"))
            #expect(!ImplicitShutdownWarning.emit(for: "TestKind"))
        }

        // The objects live only inside these functions, so they are released when the functions return.

        private static func startAndReleaseGroup() throws -> [Int32] {
            let group = try EventLoopGroup(loopCount: 2, namePrefix: "released")
            for loop in group.loops { loop.runBlocking {} }
            return group.loops.map(\.threadID)
        }

        private static func releaseGroupOnItsLoop() throws -> ([Int32], AsyncStreamBox<Void>) {
            let holder = Lock<EventLoopGroup?>(try EventLoopGroup(loopCount: 1, namePrefix: "self-released"))
            let loop = holder.withLock { $0!.loops[0] }
            let done = AsyncStreamBox<Void>()
            loop.execute {
                holder.withLock { $0 = nil }
                done.yield(())
            }
            return ([loop.threadID], done)
        }

        private static func useAndReleaseClient(port: Int) async throws -> [Int32] {
            let client = try HTTPClient()
            let response = try await withTimeout { try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/")) }
            #expect(try await response.body.collect(upTo: 1024).readableBytes == 2)
            return client.group?.loops.map(\.threadID) ?? []
        }

        private static func startAndReleaseServer(on group: EventLoopGroup) async throws -> Int {
            let server = HTTPServer(
                configuration: HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0)), group: group
            ) { _, response in
                try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "ok"))
            }
            let port = try await server.start().port!
            #expect(LoopbackPort.accepts(port))
            return port
        }
    }
}
