import Synchronization
import Testing
import WireTestSupport
import Wire

/// `HTTPBody(_:)` from an async sequence and `HTTPClientResponse`'s public initialiser, through the public API only.
@Suite(.timeLimit(.minutes(1)))
struct HTTPBodySequenceTests {
    struct Broken: Error, Equatable {}

    /// An endless sequence of 64 KiB chunks that counts how many were asked for and notes when its iteration ends.
    struct CountingChunks: AsyncSequence, Sendable {
        final class Tally: Sendable {
            let requested = Atomic<Int>(0)
            let ended = Atomic<Bool>(false)
        }

        final class Lifetime: Sendable {
            let tally: Tally
            init(_ tally: Tally) { self.tally = tally }
            deinit { tally.ended.store(true, ordering: .sequentiallyConsistent) }
        }

        struct Iterator: AsyncIteratorProtocol {
            let lifetime: Lifetime
            mutating func next() async throws -> ByteBuffer? {
                lifetime.tally.requested.add(1, ordering: .sequentiallyConsistent)
                return ByteBuffer(bytes: [UInt8](repeating: 0x61, count: 64 * 1024))
            }
        }

        let tally: Tally
        func makeAsyncIterator() -> Iterator { Iterator(lifetime: Lifetime(tally)) }
    }

    @Test func chunksArriveInOrderAndAnErrorFollowsThem() async throws {
        let body = HTTPBody(
            AsyncThrowingStream<ByteBuffer, any Error> { continuation in
                continuation.yield(ByteBuffer(string: "ab"))
                continuation.yield(ByteBuffer())
                continuation.yield(ByteBuffer(string: "cd"))
                continuation.finish(throwing: Broken())
            })
        var seen: [String] = []
        do {
            for try await chunk in body { seen.append(String(decoding: chunk.readableBytesArray, as: UTF8.self)) }
            Issue.record("the error did not arrive")
        } catch let error as Broken {
            #expect(error == Broken())
        }
        #expect(seen == ["ab", "cd"])
    }

    @Test func theProducerWaitsForTheConsumerAndStopsWhenTheBodyIsDropped() async throws {
        let tally = CountingChunks.Tally()
        var body: HTTPBody? = HTTPBody(CountingChunks(tally: tally))
        // 256 KiB of high watermark: the producer pauses after about five 64 KiB chunks and asks for no more.
        #expect(await eventually(within: .seconds(10)) { tally.requested.load(ordering: .sequentiallyConsistent) >= 5 })
        for _ in 0..<2000 { await Task.yield() }
        let paused = tally.requested.load(ordering: .sequentiallyConsistent)
        #expect(paused <= 6, "the producer ran ahead to \(paused) chunks")
        // Reading resumes it.
        var iterator = body!.makeAsyncIterator()
        for _ in 0..<20 { _ = try await iterator.next() }
        #expect(tally.requested.load(ordering: .sequentiallyConsistent) > paused)
        // Dropping the body ends the iteration.
        body = nil
        _ = consume iterator
        #expect(await eventually(within: .seconds(10)) { tally.ended.load(ordering: .sequentiallyConsistent) })
    }

    @Test func aResponseMadeWithoutTheNetworkCarriesItsHeadAndBody() async throws {
        let url = try HTTPURL("http://example.org/cached")
        let response = HTTPClientResponse(
            head: HTTPResponseHead(status: .ok, headers: ["Content-Type": "text/plain"]),
            body: HTTPBody(ByteBuffer(string: "from the cache")), url: url)
        #expect(response.status == .ok)
        #expect(response.headers.first(name: "content-type") == "text/plain")
        #expect(response.url == url)
        #expect(try await response.body.collect(upTo: 100) == ByteBuffer(string: "from the cache"))
        #expect(response.metrics.snapshot.redirects == 0)
    }
}
