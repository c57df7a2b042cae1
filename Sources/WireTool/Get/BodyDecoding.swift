import Wire
import WireClient

/// `--compressed`: the body's `Content-Encoding` undone on its way to the output, through WireClient's
/// `ContentDecoder`, in bounded pieces. Without the flag, bytes pass through as they came, as with curl.
///
/// A corrupt or truncated encoded body, or a coding the tool does not know, fails with curl's
/// CURLE_BAD_CONTENT_ENCODING (61). curl sets no decompression limit; the tool keeps WireClient's default bomb limit
/// (more than 1000:1 after the first MiB), also exit 61, since a few kB that would fill a disk are never a real file.
struct BodyDecoding {
    /// nil without a coding: chunks go to the output whole, one write per chunk.
    private let decoder: ContentDecoder?

    /// The decoding for `response`: identity without `--compressed`.
    /// - Throws: `TransferFailure` 61 for an unknown coding.
    init(_ response: HTTPClientResponse, compressed: Bool) throws(TransferFailure) {
        try self.init(headers: response.headers, compressed: compressed)
    }

    /// The decoding for a body with `headers` (a response from `--cache-dir`'s cache, stored as it came).
    /// - Throws: `TransferFailure` 61 for an unknown coding.
    init(headers: HTTPHeaders, compressed: Bool) throws(TransferFailure) {
        do {
            let coding = compressed ? try ContentCoding(headers: headers) : .identity
            decoder = coding == .identity ? nil : try ContentDecoder(coding: coding, limits: ContentDecodingLimits())
        } catch {
            throw Self.failure(error)
        }
    }

    /// Decodes `chunk` and hands each decoded piece to `write`; without a coding, `chunk` itself, whole (one write per
    /// chunk, as before there was decoding).
    mutating func write(_ chunk: ByteBuffer, to write: (ByteBuffer) throws(TransferFailure) -> Void) throws(TransferFailure) {
        guard let decoder else {
            try write(chunk)
            return
        }
        decoder.push(chunk)
        do {
            while let piece = try decoder.next() { try write(piece) }
        } catch let error as ContentDecodingError {
            throw Self.failure(error)
        } catch let error as TransferFailure {
            throw error
        } catch {
            throw TransferFailure(any: error)
        }
    }

    /// Checks that the body ended with the encoded stream.
    /// - Throws: `TransferFailure` 61 for a truncated stream.
    mutating func finish() throws(TransferFailure) {
        do throws(ContentDecodingError) {
            try decoder?.finish()
        } catch {
            throw Self.failure(error)
        }
    }

    private static func failure(_ error: ContentDecodingError) -> TransferFailure {
        TransferFailure(status: ExitStatus.badContentEncoding, message: "bad content encoding: \(error)")
    }
}
