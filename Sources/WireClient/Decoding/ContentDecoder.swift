import Wire

/// Decodes a `Content-Encoding` stream piece by piece: encoded chunks in (`push`), decoded chunks out (`next`), at
/// most `maximumChunkSize` bytes each, so a body is never inflated whole and a bomb is refused as soon as a limit is
/// crossed.
///
/// ```swift
/// let decoder = try ContentDecoder(contentEncoding: response.headers.first(name: "Content-Encoding"))
/// for try await chunk in body {
///     decoder.push(chunk)
///     while let decoded = try decoder.next() { write(decoded) }
/// }
/// try decoder.finish()   // a body that ended inside the stream throws .truncated
/// ```
///
/// A decoder owns a zlib stream, so it is a reference and not `Sendable`: one task feeds it, start to end. (It was a
/// noncopyable struct; Swift 6.3's optimizer released an uninitialised reference when such a value was stored into
/// another noncopyable struct from a `do`/`catch`, so it is a class.)
package final class ContentDecoder {
    /// The coding being decoded.
    package let coding: ContentCoding
    /// The limits checked after every decoded chunk.
    package let limits: ContentDecodingLimits
    /// The most bytes one `next()` returns.
    package let maximumChunkSize: Int
    /// Encoded bytes consumed so far.
    package private(set) var encodedByteCount: Int64 = 0
    /// Decoded bytes produced so far.
    package private(set) var decodedByteCount: Int64 = 0

    private enum Phase {
        /// deflate only: the first two bytes decide between the zlib wrapper and raw deflate.
        case sniffing
        /// Inside a stream.
        case inflating
        /// A stream ended; for gzip another member may follow.
        case ended
    }

    private var phase: Phase
    private var stream: ZlibStream?
    /// Pushed bytes not yet consumed.
    private var pending = ByteBuffer()
    /// The last call filled its output: zlib may hold more output without any new input.
    private var outputFull = false
    /// Output space left from a call that produced nothing, reused by the next.
    private var spare = ByteBuffer()

    /// A decoder for `coding`.
    /// - Parameters:
    ///   - coding: What to decode.
    ///   - limits: The bomb limits. Identity is not limited: nothing expands.
    ///   - maximumChunkSize: The most bytes one `next()` returns; default 64 KiB.
    /// - Throws: `.decoderUnavailable` when zlib cannot allocate its state.
    package init(
        coding: ContentCoding, limits: ContentDecodingLimits = ContentDecodingLimits(),
        maximumChunkSize: Int = 65_536
    ) throws(ContentDecodingError) {
        self.coding = coding
        self.limits = limits
        self.maximumChunkSize = max(maximumChunkSize, 1)
        switch coding {
        case .identity, .deflate:
            phase = coding == .identity ? .inflating : .sniffing
            stream = nil
        case .gzip:
            phase = .inflating
            stream = try Self.makeStream(.gzip)
        }
    }

    /// A decoder for a `Content-Encoding` field value (see `ContentCoding.init(contentEncoding:)`).
    /// - Throws: `.unsupportedCoding` for a coding other than gzip, x-gzip, deflate and identity.
    package convenience init(
        contentEncoding: String?, limits: ContentDecodingLimits = ContentDecodingLimits(),
        maximumChunkSize: Int = 65_536
    ) throws(ContentDecodingError) {
        try self.init(coding: ContentCoding(contentEncoding: contentEncoding), limits: limits, maximumChunkSize: maximumChunkSize)
    }

    /// Hands over the next encoded bytes. Call `next()` until it returns nil before pushing again (bytes pushed
    /// before are kept, at the cost of a copy).
    package func push(_ chunk: ByteBuffer) {
        if pending.isEmpty {
            pending = chunk
        } else {
            pending.discardReadBytes()
            pending.writeBuffer(chunk)
        }
    }

    /// The next decoded chunk (1 to `maximumChunkSize` bytes), or nil when the pushed bytes are used up.
    /// - Throws: `.corrupt`, `.trailingGarbage`, `.ratioExceeded` or `.sizeExceeded`; the decoder is unusable after.
    package func next() throws(ContentDecodingError) -> ByteBuffer? {
        if coding == .identity {
            guard !pending.isEmpty else { return nil }
            let chunk = pending.readSlice(min(pending.readableBytes, maximumChunkSize))
            encodedByteCount += Int64(chunk.readableBytes)
            decodedByteCount += Int64(chunk.readableBytes)
            return chunk
        }
        var output = spare.capacity >= maximumChunkSize ? spare : ByteBuffer(capacity: maximumChunkSize)
        spare = ByteBuffer()
        while output.readableBytes < maximumChunkSize {
            if pending.isEmpty && !outputFull { break }
            switch phase {
            case .sniffing:
                guard try sniff() else { break }
                continue
            case .ended:
                guard !pending.isEmpty else { break }
                try startNextMember()
                continue
            case .inflating:
                break
            }
            guard phase == .inflating else { break }
            let step: ZlibStream.Step
            do throws(ZlibStream.Failure) {
                // The stream exists in .inflating for every coding but identity (handled above).
                step = try stream!.inflate(pending, into: &output)
            } catch {
                throw .corrupt(coding, offset: encodedByteCount + Int64(error.consumed), reason: error.message)
            }
            pending.moveReaderIndex(forwardBy: step.consumed)
            encodedByteCount += Int64(step.consumed)
            decodedByteCount += Int64(step.produced)
            outputFull = output.writableBytes == 0
            if step.ended {
                phase = .ended
                outputFull = false
            } else if step.consumed == 0 && step.produced == 0 {
                break
            }
        }
        guard output.readableBytes > 0 else {
            spare = output
            return nil
        }
        if let violation = limits.violation(decoded: decodedByteCount, encoded: encodedByteCount) { throw violation }
        return output
    }

    /// Checks that the body ended where the encoded stream does. Call it after the last `next()` returned nil.
    /// - Throws: `.truncated` when the body ended inside the stream (an empty body is an empty stream, no error).
    package func finish() throws(ContentDecodingError) {
        if coding == .identity || phase == .ended { return }
        if phase == .sniffing {
            // Fewer than two bytes: none is an empty body; one cannot be a whole deflate stream.
            guard pending.isEmpty else { throw .truncated(coding, encodedBytes: Int64(pending.readableBytes)) }
            return
        }
        precondition(pending.isEmpty && !outputFull, "ContentDecoder.finish() with input left: call next() until nil first")
        // A gzip body with no byte at all is an empty body too.
        if encodedByteCount == 0 { return }
        throw .truncated(coding, encodedBytes: encodedByteCount)
    }

    /// deflate's first bytes: a valid zlib header (RFC 1950 §2.2: method 8, window at most 32 KiB, a multiple of 31)
    /// means the zlib wrapper; anything else raw deflate. Returns false while fewer than two bytes have arrived.
    private func sniff() throws(ContentDecodingError) -> Bool {
        guard pending.readableBytes >= 2 else { return false }
        let first = pending[readable: 0]
        let second = pending[readable: 1]
        let wrapped = first & 0x0F == 8 && first >> 4 <= 7 && (UInt16(first) << 8 | UInt16(second)) % 31 == 0
        stream = try Self.makeStream(wrapped ? .zlib : .raw)
        phase = .inflating
        return true
    }

    /// After a gzip member, another member must start (its first byte 0x1F; zlib checks the rest of the header).
    private func startNextMember() throws(ContentDecodingError) {
        guard coding == .gzip, pending[readable: 0] == 0x1F else {
            throw .trailingGarbage(coding, offset: encodedByteCount)
        }
        do throws(ZlibStream.Failure) {
            try stream!.reset(format: .gzip)
        } catch {
            throw .decoderUnavailable(error.message)
        }
        phase = .inflating
    }

    private static func makeStream(_ format: ZlibStream.Format) throws(ContentDecodingError) -> ZlibStream {
        do throws(ZlibStream.Failure) {
            return try ZlibStream(format: format)
        } catch {
            throw .decoderUnavailable(error.message)
        }
    }
}
