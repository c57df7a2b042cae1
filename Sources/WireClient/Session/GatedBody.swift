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
    static func make(_ body: RequestBody, declaredLength: Int64?, task: SessionTask,
                     url: URL) async throws(ClientError) -> (body: HTTPClientRequest.Body, length: Int64?) {
        switch body {
        case .data(let data):
            let bytes = ByteBuffer(bytes: data)
            return (.replayable(length: bytes.readableBytes, makeChunks: { pieces(of: bytes, task: task) }), Int64(bytes.readableBytes))
        case .file(let path):
            let size: Int
            do {
                let file = try await AsyncFile.open(path, mode: .read)
                size = try await file.size()
                try await file.close()
            } catch {
                throw ClientError(.fileNotReachable, failingURL: url, underlying: error,
                                  failureReason: "cannot read the upload file \(path): \(error)")
            }
            return (.replayable(length: size, makeChunks: { filePieces(path, size: size, task: task) }), Int64(size))
        case .stream(let streamLength, let makeStream):
            let length = streamLength ?? declaredLength
            let wireLength = length.flatMap { Int(exactly: $0) }
            // A stream that breaks its declared length (a multipart part, a caller's stream) fails the task with
            // that error, and the cancel closes the connection: the server sees a truncated message.
            return (.replayable(length: wireLength, makeChunks: {
                StreamedBody.chunks(of: makeStream(), length: length, gate: { await task.waitWhileSuspended() },
                                    failed: { error in task.cancelTransfer(reason: error.failing(url)) })
            }), length)
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

    /// The file's first `size` bytes in pieces read on Wire's file threads when Wire asks for them, each after the
    /// task is not suspended. The file is opened at the first piece and closed at the end (or when the stream is
    /// dropped: `AsyncFile` closes its descriptor when released).
    private static func filePieces(_ path: String, size: Int, task: SessionTask) -> AsyncThrowingStream<ByteBuffer, any Error> {
        let cursor = FileCursor(path: path)
        return AsyncThrowingStream(unfolding: {
            await task.waitWhileSuspended()
            return try await cursor.next(upTo: size)
        })
    }
}

/// Where a file body's reading is: the open file and the offset. The stream's unfolding closure calls `next` one
/// at a time.
private final class FileCursor: Sendable {
    private let path: String
    private let state = Mutex<(file: AsyncFile?, offset: Int)>((nil, 0))

    init(path: String) {
        self.path = path
    }

    /// The next piece of at most `GatedBody.pieceSize` bytes below `size`, or nil at the end (the file then closed).
    func next(upTo size: Int) async throws -> ByteBuffer? {
        var (file, offset) = state.withLock { $0 }
        if file == nil {
            file = try await AsyncFile.open(path, mode: .read)
        }
        guard let file else { return nil }
        let piece = offset < size ? try await file.read(at: offset, upTo: min(GatedBody.pieceSize, size - offset)) : ByteBuffer()
        if piece.readableBytes == 0 {
            try await file.close()
            state.withLock { $0 = (nil, size) }
            return nil
        }
        offset += piece.readableBytes
        state.withLock { $0 = (file, offset) }
        return piece
    }
}
