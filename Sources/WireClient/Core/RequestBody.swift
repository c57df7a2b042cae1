import FoundationEssentials
import Wire

/// A request body: bytes in memory, a file, pieces of both, or a stream that can be made anew for each attempt.
///
/// Every kind is replayable, so a 307/308 redirect, an authentication retry or a retry on a fresh connection can send
/// it again; each maps onto a replayable Wire body (`wireBody`).
public enum RequestBody: Sendable {
    /// Bytes in memory.
    case data(Data)
    /// A file's contents, read as the socket takes them.
    case file(path: String)
    /// Chunks from a stream that `makeStream` creates for each attempt; sent with a `Content-Length` when `length` is
    /// given, chunked otherwise.
    case stream(length: Int64?, makeStream: @Sendable () -> AsyncThrowingStream<Data, any Error>)
    /// Pieces sent one after another, each file's size fixed when the body was made (a multipart form of data and
    /// file parts). On a plain connection the kernel sends the files from the page cache (`sendfile(2)`); a file
    /// whose size changed since fails the task with `.bodyLengthMismatch`.
    case composite([Piece])

    /// One piece of a `.composite` body.
    public enum Piece: Sendable, Hashable {
        /// Bytes in memory.
        case data(Data)
        /// The whole file at `path`, of `size` bytes.
        case file(path: String, size: Int64)

        /// The piece's length.
        public var count: Int64 {
            switch self {
            case .data(let data): Int64(data.count)
            case .file(_, let size): size
            }
        }
    }

    /// The body's length when it is known without reading it: the data's count, the declared stream length; nil for
    /// a file (its size is read when the task starts) and an unsized stream.
    public var knownLength: Int64? {
        switch self {
        case .data(let data): Int64(data.count)
        case .file: nil
        case .stream(let length, _): length
        case .composite(let pieces): pieces.reduce(0) { $0 + $1.count }
        }
    }

    /// The body as Wire sends it: `.bytes`, `.file(path:)`, `.segments` or `.replayable(length:makeChunks:)`.
    package var wireBody: HTTPClientRequest.Body {
        switch self {
        case .data(let data):
            return .bytes(ByteBuffer(bytes: data))
        case .file(let path):
            return .file(path: path)
        case .stream(let length, let makeStream):
            let wireLength = length.flatMap { Int(exactly: $0) }
            return .replayable(length: wireLength, makeChunks: { StreamedBody.chunks(of: makeStream(), length: length) })
        case .composite(let pieces):
            return .segments(pieces.map(\.segment))
        }
    }
}

extension RequestBody.Piece {
    /// The piece as a segment of Wire's body.
    var segment: BodySegment {
        switch self {
        case .data(let data): .bytes(ByteBuffer(bytes: data))
        case .file(let path, let size): .file(path: path, size: Int(size))
        }
    }
}
