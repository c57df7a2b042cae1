import FoundationEssentials
import Wire

/// A request body: bytes in memory, a file, or a stream that can be made anew for each attempt.
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

    /// The body's length when it is known without reading it: the data's count, the declared stream length; nil for
    /// a file (its size is read when the task starts) and an unsized stream.
    public var knownLength: Int64? {
        switch self {
        case .data(let data): Int64(data.count)
        case .file: nil
        case .stream(let length, _): length
        }
    }

    /// The body as Wire sends it: `.bytes`, `.file(path:)` or `.replayable(length:makeChunks:)`.
    public var wireBody: HTTPClientRequest.Body {
        switch self {
        case .data(let data):
            return .bytes(ByteBuffer(bytes: data))
        case .file(let path):
            return .file(path: path)
        case .stream(let length, let makeStream):
            let wireLength = length.flatMap { Int(exactly: $0) }
            return .replayable(length: wireLength, makeChunks: { StreamedBody.chunks(of: makeStream(), length: length) })
        }
    }
}
