import CWireZlib
import Wire

/// One zlib inflate stream: the only place WireClient touches zlib's pointers.
///
/// The `z_stream` lives on the heap because zlib keeps a pointer back to it in its state and refuses a stream that
/// moved; the stream is ended (`inflateEnd`) exactly once, when the object goes. Input is never kept across calls: each
/// `inflate` points zlib at the caller's bytes for that call only. A class with one owner (a `ContentDecoder`), not a
/// noncopyable struct: an `Optional` of a noncopyable struct inside another was miscompiled in release builds
/// (Swift 6.3: a release of an uninitialised reference when the outer value was made).
final class ZlibStream {
    /// The wrapping zlib expects around the deflate data.
    enum Format {
        /// RFC 1952 (`Content-Encoding: gzip`).
        case gzip
        /// RFC 1950 (`Content-Encoding: deflate` as specified).
        case zlib
        /// RFC 1951 without a wrapper (`deflate` as some servers send it).
        case raw

        /// inflateInit2's window bits: 15 (32 KiB window), plus 16 for gzip only, negated for raw.
        var windowBits: Int32 {
            switch self {
            case .gzip: 16 + 15
            case .zlib: 15
            case .raw: -15
            }
        }
    }

    /// What one `inflate` call did.
    struct Step {
        /// Input bytes consumed.
        var consumed: Int
        /// Output bytes written.
        var produced: Int
        /// The deflate stream (and its wrapper's trailer) ended.
        var ended: Bool
    }

    /// zlib refused the data or could not allocate.
    struct Failure: Error {
        /// Input bytes consumed by the failing call before zlib stopped.
        var consumed: Int
        /// zlib's message (`msg`), or its return code.
        var message: String
    }

    private let stream: UnsafeMutablePointer<z_stream>

    /// Starts a stream for `format`.
    /// - Throws: `Failure` when zlib cannot allocate its state.
    init(format: Format) throws(Failure) {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let result = c_wire_zlib_inflate_init(stream, format.windowBits)
        guard result == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw Failure(consumed: 0, message: "inflateInit2 returned \(result)")
        }
        self.stream = stream
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Starts over on a new stream of `format`, keeping the allocated state (the next gzip member, or another
    /// wrapper after sniffing).
    func reset(format: Format) throws(Failure) {
        let result = inflateReset2(stream, format.windowBits)
        guard result == Z_OK else { throw Failure(consumed: 0, message: "inflateReset2 returned \(result)") }
    }

    /// Inflates the readable bytes of `input` into the writable space of `output` (its writer index moves by what was
    /// produced); `input` is left as it is.
    /// - Throws: `Failure` for data zlib refuses (a bad header, a bad block, a checksum mismatch) or memory.
    func inflate(_ input: ByteBuffer, into output: inout ByteBuffer) throws(Failure) -> Step {
        let stream = self.stream
        let outcome: (consumed: Int, produced: Int, result: Int32) = input.withUnsafeReadableBytes { source in
            output.withUnsafeWritableBytes { target in
                // zlib's next_in is not const (an old API); it never writes through it.
                stream.pointee.next_in = source.baseAddress.map {
                    UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: UInt8.self))
                }
                stream.pointee.avail_in = UInt32(clamping: source.count)
                stream.pointee.next_out = target.baseAddress?.assumingMemoryBound(to: UInt8.self)
                stream.pointee.avail_out = UInt32(clamping: target.count)
                let result = CWireZlib.inflate(stream, Z_NO_FLUSH)
                let consumed = min(source.count, Int(UInt32.max)) - Int(stream.pointee.avail_in)
                let produced = min(target.count, Int(UInt32.max)) - Int(stream.pointee.avail_out)
                stream.pointee.next_in = nil
                stream.pointee.avail_in = 0
                stream.pointee.next_out = nil
                stream.pointee.avail_out = 0
                return (consumed, produced, result)
            }
        }
        output.moveWriterIndex(forwardBy: outcome.produced)
        switch outcome.result {
        case Z_OK, Z_BUF_ERROR:
            // Z_BUF_ERROR: no progress was possible (no input, or no room); not an error for a stream fed in pieces.
            return Step(consumed: outcome.consumed, produced: outcome.produced, ended: false)
        case Z_STREAM_END:
            return Step(consumed: outcome.consumed, produced: outcome.produced, ended: true)
        default:
            let message = stream.pointee.msg.map { String(cString: $0) } ?? "inflate returned \(outcome.result)"
            throw Failure(consumed: outcome.consumed, message: message)
        }
    }
}
