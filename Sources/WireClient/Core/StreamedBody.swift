import FoundationEssentials
import Wire

/// A streamed request body as Wire pulls it: one chunk per request from Wire, so nothing piles up in memory when
/// the socket is slower than the source, each chunk made on the global concurrent executor (Wire's body pump runs on
/// its event loop, and a stream's closures are the caller's code), and the declared length held to: a stream that
/// yields more or fewer bytes fails with `.bodyLengthMismatch` before its extra bytes go out.
enum StreamedBody {
    /// Wire's chunks of one pass over `stream`.
    /// - Parameters:
    ///   - stream: The pass's source.
    ///   - length: The declared length, or nil when the body is sent chunked.
    ///   - gate: Awaited before each chunk (a suspended task waits there).
    ///   - failed: Told of a `ClientError` that ends the pass (so the task can fail with it, not with Wire's write
    ///     error), before the stream throws it.
    static func chunks(
        of stream: AsyncThrowingStream<Data, any Error>, length: Int64?,
        gate: (@Sendable () async -> Void)? = nil,
        failed: (@Sendable (ClientError) -> Void)? = nil
    ) -> AsyncThrowingStream<ByteBuffer, any Error> {
        let puller = Puller(stream, length: length)
        return AsyncThrowingStream(unfolding: {
            await gate?()
            do {
                return try await withTaskExecutorPreference(globalConcurrentExecutor) { try await puller.next() }
            } catch let error as ClientError {
                failed?(error)
                throw error
            }
        })
    }

    /// The iterator of one pass and the bytes it has yielded; the unfolding stream calls `next()` one at a time.
    private actor Puller {
        private var iterator: AsyncThrowingStream<Data, any Error>.Iterator?
        private var sent: Int64 = 0
        private let length: Int64?

        init(_ stream: AsyncThrowingStream<Data, any Error>, length: Int64?) {
            iterator = stream.makeAsyncIterator()
            self.length = length
        }

        func next() async throws -> ByteBuffer? {
            guard var current = iterator else { return nil }
            // Taken out for the call (an actor's stored property cannot be mutated across a suspension); a pass
            // that throws is over, so it is not put back then.
            iterator = nil
            while true {
                guard let chunk = try await current.next(isolation: self) else {
                    if let length, sent != length {
                        throw ClientError(
                            .bodyLengthMismatch,
                            failureReason:
                                "the body stream ended after \(sent) bytes, \(length) were declared")
                    }
                    return nil
                }
                guard !chunk.isEmpty else { continue }
                if let length, Int64(chunk.count) > length - sent {
                    throw ClientError(
                        .bodyLengthMismatch,
                        failureReason:
                            "the body stream yielded more than the \(length) bytes declared")
                }
                sent += Int64(chunk.count)
                iterator = current
                return ByteBuffer(bytes: chunk)
            }
        }
    }
}

extension ClientError {
    /// The error with `url` as its failing URL unless it has one.
    func failing(_ url: URL) -> ClientError {
        var error = self
        error.failingURL = error.failingURL ?? url
        return error
    }
}
