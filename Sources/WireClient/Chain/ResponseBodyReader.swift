import FoundationEssentials
import Wire

/// Reads a `ResponseBody` chunk by chunk, whatever it holds (Wire's stream, a stage's decoder, bytes), with the
/// bytes that came off the wire counted apart for progress: how the task receives a body.
struct ResponseBodyReader {
    /// What the reader reads. Its input sits in a field of its own per kind, beside this tag: a switch over an enum
    /// with an existential's case copies the enum through the value witnesses, and the reader is asked once or twice
    /// per response.
    private enum Kind {
        /// Wire's stream, read through `wire`.
        case wire
        /// A stage's decoder, read through `source`.
        case source
        /// Bytes in memory, in `bytes` until read.
        case bytes
    }

    private var kind: Kind
    private var wire: HTTPBody.Iterator?
    private var source: (any ResponseBodyChunks)?
    private var bytes: ByteBuffer?
    private var unreportedWireBytes = 0

    /// A reader of `body`; a body already received reads as empty.
    init(_ body: ResponseBody) {
        switch body.content {
        case .wire(let stream):
            kind = .wire
            wire = stream.makeAsyncIterator()
        case .source(let made):
            kind = .source
            source = made.makeReader()
        case .bytes(let box):
            kind = .bytes
            bytes = box.value.isEmpty ? nil : ByteBuffer(bytes: box.value)
        case .received:
            kind = .bytes
        }
    }

    /// The bytes read off the wire since the last call, for progress.
    mutating func takeWireByteCount() -> Int {
        switch kind {
        case .source:
            return source?.takeWireByteCount() ?? 0
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
        switch kind {
        case .wire:
            guard let ready = try wire?.nextIfReady() else { return nil }
            if let chunk = ready { unreportedWireBytes += chunk.readableBytes }
            return ready
        case .source:
            return nil
        case .bytes:
            let chunk = bytes.take()
            if let chunk { unreportedWireBytes += chunk.readableBytes }
            return .some(chunk)
        }
    }

    /// The next chunk; nil at the end. An empty chunk only carries wire bytes (a trailer that decoded to nothing).
    /// - Throws: Wire's body errors as they are; a decoder's as `ClientError`.
    nonisolated(nonsending) mutating func next() async throws -> ByteBuffer? {
        switch kind {
        case .wire:
            // Wire's iterator is a reference to the stream: the copy reads the same bytes.
            guard var iterator = wire, let chunk = try await iterator.next() else { return nil }
            wire = iterator
            unreportedWireBytes += chunk.readableBytes
            return chunk
        case .source:
            // Taken out across the wait, and put back: the reader is not accessed while it waits.
            guard var reading = source.take() else { return nil }
            let chunk = try await reading.next()
            source = reading
            return chunk
        case .bytes:
            let chunk = bytes.take()
            if let chunk { unreportedWireBytes += chunk.readableBytes }
            return chunk
        }
    }
}
