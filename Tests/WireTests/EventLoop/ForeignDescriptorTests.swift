import Glibc
import Synchronization
import Testing
import Wire

extension IOSuite {
    /// A descriptor kind Wire does not know (here a pipe; a netlink socket in WireClient's reachability) watched on a
    /// Wire loop through the `package` registration seam, without `@testable`.
    @Suite
    struct ForeignDescriptorTests {
        /// Reads the pipe when it is readable and reports what came, then the loop's closing.
        final class PipeReader: Selectable {
            let readEnd: CInt
            let received: AsyncStream<String>.Continuation
            var key: UInt64 = 0

            init(readEnd: CInt, received: AsyncStream<String>.Continuation) {
                self.readEnd = readEnd
                self.received = received
            }

            func ready(_ event: ReadinessEvent) {
                guard event.isReadable else { return }
                var bytes = [UInt8](repeating: 0, count: 64)
                let count = bytes.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if count > 0 { received.yield(String(decoding: bytes[..<count], as: UTF8.self)) }
            }

            func eventLoopIsClosing() {
                received.yield("closing")
                received.finish()
            }
        }

        @Test func aPipeRegisteredOnALoopReportsReadinessAndTheLoopsClosing() async throws {
            var ends: [CInt] = [0, 0]
            #expect(pipe(&ends) == 0)
            #expect(fcntl(ends[0], F_SETFL, O_NONBLOCK) == 0)
            defer { close(ends[0]); close(ends[1]) }
            let loop = try EventLoop(name: "foreign-descriptor")
            let (stream, continuation) = AsyncStream<String>.makeStream()
            let readEnd = ends[0]
            try await loop.submit { () throws in
                let reader = PipeReader(readEnd: readEnd, received: continuation)
                reader.key = try loop.register(readEnd, interest: .read, handler: reader)
            }
            var iterator = stream.makeAsyncIterator()
            #expect(write(ends[1], "hello", 5) == 5)
            #expect(await iterator.next() == "hello")
            await loop.shutdownGracefully()
            #expect(await iterator.next() == "closing")
        }

        /// More descriptors ready at once than one wait takes (`EventLoop.eventsPerWait`): every one is handled, once.
        @Test func aHundredPipesReadyAtOnceAreEachReadOnce() async throws {
            let count = 100
            var pipes: [(read: CInt, write: CInt)] = []
            defer { for ends in pipes { close(ends.read); close(ends.write) } }
            for _ in 0..<count {
                var ends: [CInt] = [0, 0]
                try #require(pipe(&ends) == 0)
                pipes.append((ends[0], ends[1]))
                try #require(fcntl(ends[0], F_SETFL, O_NONBLOCK) == 0)
            }
            let loop = try EventLoop(name: "many-ready")
            let (stream, continuation) = AsyncStream<String>.makeStream()
            let ends = pipes
            // Registered and made readable in one job on the loop, so that all of them are ready at its next wait.
            try await loop.submit { () throws in
                for (index, end) in ends.enumerated() {
                    let reader = PipeReader(readEnd: end.read, received: continuation)
                    reader.key = try loop.register(end.read, interest: .read, handler: reader)
                    #expect(write(end.write, "\(index);", "\(index);".utf8.count) > 0)
                }
            }
            var seen: [String] = []
            var iterator = stream.makeAsyncIterator()
            while seen.count < count, let text = await iterator.next() { seen.append(text) }
            #expect(seen.sorted() == (0..<count).map { "\($0);" }.sorted())
            await loop.shutdownGracefully()
            // Nothing more came before the loop's closing: no pipe was read twice.
            #expect(await iterator.next() == "closing")
        }
    }
}
