import FoundationEssentials
import Synchronization
import Wire

/// A request body as Wire sends it, made to wait while its task is suspended: each chunk is handed over only when
/// the task is not suspended, so a suspended upload stops sending (back-pressure on the request side). Replayable:
/// a 307/308 redirect makes the chunks anew.
enum GatedBody {
    /// The size of the pieces a body in memory or in a file is handed to Wire in.
    static let pieceSize = 64 * 1024

    /// The gated Wire body and its length when known (a file's size is read here; a stream of unknown length takes
    /// the request's `Content-Length`, `declaredLength`, so that it is not also sent chunked).
    /// - Throws: `.fileNotReachable` when a file body cannot be opened.
    static func make(
        _ body: RequestBody, declaredLength: Int64?, task: SessionTask,
        url: URL
    ) async throws(ClientError) -> (body: HTTPClientRequest.Body, length: Int64?) {
        switch body {
        case .data(let data):
            let bytes = ByteBuffer(bytes: data)
            return (
                .replayable(length: bytes.readableBytes, makeChunks: { pieces(of: bytes, task: task) }),
                Int64(bytes.readableBytes)
            )
        case .file(let path):
            let size = try await fileSize(path, url: url)
            return (.segments([.file(path: path, size: size)], pause: { await task.waitWhileSuspended() }), Int64(size))
        case .composite(let pieces):
            // Each file is checked now, for every attempt: one that changed since the body was made would send
            // another length than the one declared.
            for case .file(let path, let size) in pieces {
                let now = try await fileSize(path, url: url)
                guard Int64(now) == size else {
                    throw ClientError(
                        .bodyLengthMismatch, failingURL: url,
                        failureReason:
                            "the part file \(path) has \(now) bytes, \(size) when it was appended")
                }
            }
            let length = pieces.reduce(Int64(0)) { $0 + $1.count }
            return (.segments(pieces.map(\.segment), pause: { await task.waitWhileSuspended() }), length)
        case .stream(let streamLength, let makeStream):
            let length = streamLength ?? declaredLength
            let wireLength = length.flatMap { Int(exactly: $0) }
            // A stream that breaks its declared length (a multipart part, a caller's stream) fails the task with
            // that error, and the cancel closes the connection: the server sees a truncated message.
            return (
                .replayable(
                    length: wireLength,
                    makeChunks: {
                        StreamedBody.chunks(
                            of: makeStream(), length: length, gate: { await task.waitWhileSuspended() },
                            failed: { error in task.cancelTransfer(reason: error.failing(url)) })
                    }), length
            )
        }
    }

    /// The size of the file at `path` now.
    /// - Throws: `.fileNotReachable` when it cannot be opened.
    private static func fileSize(_ path: String, url: URL) async throws(ClientError) -> Int {
        do {
            let file = try await AsyncFile.open(path, mode: .read)
            let size = try await file.size()
            try await file.close()
            return size
        } catch {
            throw ClientError(
                .fileNotReachable, failingURL: url, underlying: error,
                failureReason: "cannot read the upload file \(path): \(error)")
        }
    }

    /// `bytes` in pieces, each after the task is not suspended.
    private static func pieces(of bytes: ByteBuffer, task: SessionTask) -> AsyncThrowingStream<ByteBuffer, any Error> {
        let offset = Locked(0)
        return AsyncThrowingStream(unfolding: {
            await task.waitWhileSuspended()
            return offset.withLock { offset -> ByteBuffer? in
                guard offset < bytes.readableBytes else { return nil }
                let count = min(pieceSize, bytes.readableBytes - offset)
                defer { offset += count }
                return bytes.slice(at: offset, length: count)
            }
        })
    }
}
