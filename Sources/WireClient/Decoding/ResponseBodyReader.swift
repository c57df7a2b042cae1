import FoundationEssentials
import Wire

/// A task's response body as the task stores it: decoded when it carries a `Content-Encoding` (gzip or deflate),
/// as it came otherwise, with the bytes that came off the wire counted apart for progress.
///
/// Decoding is skipped, and the bytes pass through, when the session's `decodesContent` is off, for responses that
/// have no body (HEAD, 1xx, 204, 304), for a 206 (a byte range of the encoded representation cannot be decoded on
/// its own), and for a coding WireClient did not offer when the caller chose `Accept-Encoding` itself.
struct ResponseBodyReader {
    private var iterator: HTTPBody.Iterator
    /// The decoder of an encoded body; nil for identity, whose chunks go out as Wire read them, whole (no copy,
    /// no 64 KiB pieces), so a download's progress is the bytes on disk after every write.
    private let decoder: ContentDecoder?
    /// Why decoding cannot start (an unsupported coding), thrown by the first `next()`.
    private var refusal: ContentDecodingError?
    private let url: URL
    private let response: ClientResponse?
    private var unreportedWireBytes = 0
    private var ended = false

    /// A reader of `body`, the body of `response` to `request`, decoded when `decodes` (the session decodes content)
    /// within `limits`. A coding WireClient cannot decode is handed over as it is when the caller asked for codings
    /// itself (an `Accept-Encoding` of the request's or of the session's additional `sessionHeaders`).
    init(_ body: HTTPBody, response: ClientResponse?, request: ClientRequest, decodes: Bool, limits: ContentDecodingLimits,
         sessionHeaders: HTTPHeaders) {
        iterator = body.makeAsyncIterator()
        url = request.url
        self.response = response
        var coding = ContentCoding.identity
        if decodes, let response, Self.mayDecode(response, method: request.method) {
            do {
                coding = try ContentCoding(headers: response.headers)
            } catch {
                let callerChose = request.headers.contains(name: "Accept-Encoding")
                    || sessionHeaders.contains(name: "Accept-Encoding")
                if !callerChose { refusal = error }
            }
        }
        if coding == .identity || refusal != nil {
            decoder = nil
        } else {
            do {
                decoder = try ContentDecoder(coding: coding, limits: limits)
            } catch {
                refusal = error
                decoder = nil
            }
        }
    }

    /// Whether a response may carry an encoded body at all.
    private static func mayDecode(_ response: ClientResponse, method: String) -> Bool {
        let status = response.statusCode
        // `method` is HEAD in any case: compared byte by byte (A–Z and a–z differ by 0x20 only), no upper-cased copy.
        let isHead = method.utf8.count == 4 && method.utf8.elementsEqual("HEAD".utf8) { $0 & 0xDF == $1 }
        return !isHead && status >= 200 && status != 204 && status != 206 && status != 304
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
        ClientError(.cannotDecodeContentData, failingURL: url, response: response, underlying: error,
                    failureReason: "cannot decode the body: \(error)")
    }
}
