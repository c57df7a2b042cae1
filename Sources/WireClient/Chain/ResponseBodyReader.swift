import FoundationEssentials
import Wire

/// Reads a `ResponseBody` chunk by chunk, whatever it holds (Wire's stream, a stage's decoder, bytes), with the
/// bytes that came off the wire counted apart for progress: how the task receives a body.
struct ResponseBodyReader {
    private enum Input {
        /// Wire's stream, read through `wire`.
        case wire
        case source(any ResponseBodyChunks)
        case bytes(ByteBuffer?)
    }

    private var input: Input
    /// Wire's stream when the input is `.wire`: beside the enum, not in it, so that reading it binds no copy of the
    /// enum (an existential's case makes each copy go through the value witnesses).
    private var wire: HTTPBody.Iterator?
    private var unreportedWireBytes = 0

    /// A reader of `body`; a body already received reads as empty.
    init(_ body: ResponseBody) {
        switch body.content {
        case .wire(let stream):
            input = .wire
            wire = stream.makeAsyncIterator()
        case .source(let source): input = .source(source.makeReader())
        case .bytes(let box): input = .bytes(box.value.isEmpty ? nil : ByteBuffer(bytes: box.value))
        case .received: input = .bytes(nil)
        }
    }

    /// The bytes read off the wire since the last call, for progress.
    mutating func takeWireByteCount() -> Int {
        switch input {
        case .source(var source):
            let count = source.takeWireByteCount()
            input = .source(source)
            return count
        case .wire, .bytes:
            defer { unreportedWireBytes = 0 }
            return unreportedWireBytes
        }
    }

    /// What `next()` would return without waiting: `.some` of a chunk or of nil at the end, or nil when it would wait
    /// (and for a stage's decoder, which is always asked through `next()`). A small response's body and end arrive with
    /// its head: taken this way, they cost the task no async call.
    /// - Throws: Wire's body errors as they are.
    mutating func nextIfReady() throws -> ByteBuffer?? {
        switch input {
        case .wire:
            guard let ready = try wire?.nextIfReady() else { return nil }
            if let chunk = ready { unreportedWireBytes += chunk.readableBytes }
            return ready
        case .source:
            return nil
        case .bytes(let bytes):
            input = .bytes(nil)
            if let bytes { unreportedWireBytes += bytes.readableBytes }
            return .some(bytes)
        }
    }

    /// The next chunk; nil at the end. An empty chunk only carries wire bytes (a trailer that decoded to nothing).
    /// - Throws: Wire's body errors as they are; a decoder's as `ClientError`.
    nonisolated(nonsending) mutating func next() async throws -> ByteBuffer? {
        switch input {
        case .wire:
            // Wire's iterator is a reference to the stream: the copy reads the same bytes.
            guard var iterator = wire, let chunk = try await iterator.next() else { return nil }
            wire = iterator
            unreportedWireBytes += chunk.readableBytes
            return chunk
        case .source(var source):
            input = .bytes(nil)
            let chunk = try await source.next()
            input = .source(source)
            return chunk
        case .bytes(let bytes):
            input = .bytes(nil)
            if let bytes { unreportedWireBytes += bytes.readableBytes }
            return bytes
        }
    }
}
