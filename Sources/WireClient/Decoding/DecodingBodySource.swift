import FoundationEssentials
import Wire

/// A response body decoded from its `Content-Encoding` (gzip or deflate) as it is read, with the bytes that came
/// off the wire counted apart for progress; or, for a coding that cannot be decoded, a body whose first read throws
/// why. Made by `DecodingStage` for encoded bodies only: an identity body stays Wire's stream.
final class DecodingBodySource: ResponseBodySource {
    let body: HTTPBody
    let response: ClientResponse
    let request: ClientRequest
    let coding: ContentCoding
    let limits: ContentDecodingLimits
    let refusal: ContentDecodingError?

    init(
        body: HTTPBody, response: ClientResponse, request: ClientRequest, coding: ContentCoding,
        limits: ContentDecodingLimits, refusal: ContentDecodingError?
    ) {
        self.body = body
        self.response = response
        self.request = request
        self.coding = coding
        self.limits = limits
        self.refusal = refusal
    }

    func makeReader() -> any ResponseBodyChunks {
        DecodingBodyReader(body, response: response, request: request, coding: coding, limits: limits, refusal: refusal)
    }

    /// Whether a response may carry an encoded body at all.
    static func mayDecode(_ response: ClientResponse, method: String) -> Bool {
        let status = response.statusCode
        // `method` is HEAD in any case: compared byte by byte (A–Z and a–z differ by 0x20 only), no upper-cased copy.
        let isHead = method.utf8.count == 4 && method.utf8.elementsEqual("HEAD".utf8) { $0 & 0xDF == $1 }
        return !isHead && status >= 200 && status != 204 && status != 206 && status != 304
    }
}

/// The reader of a `DecodingBodySource`: Wire's chunks through the decoder.
struct DecodingBodyReader: ResponseBodyChunks {
    private var iterator: HTTPBody.Iterator
    /// The decoder of an encoded body; nil for identity, whose chunks go out as Wire read them, whole (no copy,
    /// no 64 KiB pieces), so a download's progress is the bytes on disk after every write.
    private let decoder: ContentDecoder?
    /// Why decoding cannot start (an unsupported coding), thrown by the first `next()`.
    private var refusal: ContentDecodingError?
    private let url: URL
    private let response: ClientResponse
    private var unreportedWireBytes = 0
    private var ended = false

    /// A decoder of `body`, the body of `response` to `request`, in `coding` within `limits`; or, with `refusal`, a
    /// body that fails with it.
    init(
        _ body: HTTPBody, response: ClientResponse, request: ClientRequest, coding: ContentCoding,
        limits: ContentDecodingLimits, refusal: ContentDecodingError?
    ) {
        iterator = body.makeAsyncIterator()
        url = request.url
        self.response = response
        self.refusal = refusal
        if refusal != nil || coding == .identity {
            decoder = nil
        } else {
            do {
                decoder = try ContentDecoder(coding: coding, limits: limits)
            } catch {
                self.refusal = error
                decoder = nil
            }
        }
    }

    /// The bytes read off the wire since the last call, for progress.
    mutating func takeWireByteCount() -> Int {
        defer { unreportedWireBytes = 0 }
        return unreportedWireBytes
    }

    /// The next decoded chunk; nil at the end. An empty chunk only carries wire bytes (a trailer that decoded to
    /// nothing) to `takeWireByteCount()`.
    /// - Throws: Wire's body errors as they are; decoding failures as `ClientError` `.cannotDecodeContentData`.
    nonisolated(nonsending) mutating func next() async throws -> ByteBuffer? {
        if let refusal { throw failure(refusal) }
        guard let decoder else {
            guard let chunk = try await iterator.next() else { return nil }
            unreportedWireBytes += chunk.readableBytes
            return chunk
        }
        while true {
            do throws(ContentDecodingError) {
                if let piece = try decoder.next() { return piece }
                if ended { return nil }
            } catch {
                throw failure(error)
            }
            guard let chunk = try await iterator.next() else {
                ended = true
                do throws(ContentDecodingError) {
                    try decoder.finish()
                } catch {
                    throw failure(error)
                }
                return unreportedWireBytes > 0 ? ByteBuffer() : nil
            }
            unreportedWireBytes += chunk.readableBytes
            decoder.push(chunk)
        }
    }

    private func failure(_ error: ContentDecodingError) -> ClientError {
        ClientError(
            .cannotDecodeContentData, failingURL: url, response: response, underlying: error,
            failureReason: "cannot decode the body: \(error)")
    }
}
