import Testing
import Wire

/// The consumer's side of `BodyChannel`: bytes already buffered are taken without waiting, yet a cancelled reader
/// still hears that it was cancelled.
@Suite(.timeLimit(.minutes(1)))
struct BodyChannelReadTests {
    @Test func bufferedChunksAndTheEndAreReadInOrder() async throws {
        let channel = BodyChannel()
        _ = channel.yield(ByteBuffer(string: "ab"))
        _ = channel.yield(ByteBuffer(string: "cd"))
        channel.finish()
        let body = HTTPBody(channel: channel)
        var iterator = body.makeAsyncIterator()
        #expect(try await iterator.next() == ByteBuffer(string: "ab"))
        #expect(try await iterator.next() == ByteBuffer(string: "cd"))
        #expect(try await iterator.next() == nil)
    }

    /// Whether the body still has a producer (`arriving`) or had ended when it was handed over.
    @Test(arguments: [false, true]) func aCancelledReaderIsToldSoEvenWithBytesBuffered(ended: Bool) async throws {
        let channel = BodyChannel()
        _ = channel.yield(ByteBuffer(string: "buffered"))
        channel.finish()
        let body = ended ? HTTPBody(ended: channel) : HTTPBody(channel: channel)
        let reader = Task {
            // Wait for the cancellation first, so the read below starts in a cancelled task.
            while !Task.isCancelled { await Task.yield() }
            return try await body.collect(upTo: 100)
        }
        reader.cancel()
        await #expect(throws: HTTPBodyError.cancelled) { try await reader.value }
    }

    @Test func aWaitingReaderIsResumedByTheNextChunk() async throws {
        let channel = BodyChannel()
        let body = HTTPBody(channel: channel)
        let reader = Task { try await body.collect(upTo: 100) }
        // Whether the reader is already waiting or not, the chunk and the end must reach it.
        _ = channel.yield(ByteBuffer(string: "late"))
        channel.finish()
        #expect(try await reader.value == ByteBuffer(string: "late"))
    }

    // A body that ended before it was handed over (a small response read whole) is held without a consumer object.

    @Test func anEndedBodyIsCollectedWholeInOneStep() async throws {
        let channel = BodyChannel()
        _ = channel.yield(ByteBuffer(string: "ab"))
        _ = channel.yield(ByteBuffer(string: "cd"))
        channel.finish()
        #expect(try await HTTPBody(ended: channel).collect(upTo: 4) == ByteBuffer(string: "abcd"))
    }

    @Test func anEndedBodyOverTheLimitIsRefusedAndAbandoned() async throws {
        let channel = BodyChannel()
        _ = channel.yield(ByteBuffer(string: "abcd"))
        channel.finish()
        let body = HTTPBody(ended: channel)
        await #expect(throws: HTTPBodyError.tooLarge(limit: 3)) { try await body.collect(upTo: 3) }
        #expect(channel.isConsumerGone)
    }

    @Test func anEndedBodyIsReadOnce() async throws {
        let body = HTTPBody(ByteBuffer(string: "once"))
        #expect(try await body.collect(upTo: 10) == ByteBuffer(string: "once"))
        await #expect(throws: HTTPBodyError.alreadyConsumed) { try await body.collect(upTo: 10) }
    }

    @Test func aFailedEndedBodyHandsOverItsBytesThenTheError() async throws {
        struct Reset: Error {}
        let channel = BodyChannel()
        _ = channel.yield(ByteBuffer(string: "part"))
        channel.fail(Reset())
        var iterator = HTTPBody(ended: channel).makeAsyncIterator()
        #expect(try await iterator.next() == ByteBuffer(string: "part"))
        await #expect(throws: Reset.self) { try await iterator.next() }
    }
}
