import Testing

import Wire

/// Request-smuggling and desync vectors: each must be refused with a precise kind at the `«` marker's offset.
struct HTTP1SmugglingTests {
    static let post = "POST / HTTP/1.1\r\nHost: a\r\n"
    static let chunkedPost = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"

    static let cases: [(String, String)] = [
        // Transfer-Encoding with Content-Length, either order.
        (post + "Transfer-Encoding: chunked\r\n«Content-Length: 3\r\n\r\n", "transfer_encoding_with_content_length"),
        (post + "Content-Length: 3\r\n«Transfer-Encoding: chunked\r\n\r\n", "transfer_encoding_with_content_length"),
        (post + "Content-Length: 0\r\n«Transfer-Encoding: gzip, chunked\r\n\r\n", "transfer_encoding_with_content_length"),
        // Content-Length variants.
        (post + "Content-Length: 3\r\nContent-Length: «4\r\n\r\n", "conflicting_content_length"),
        (post + "Content-Length: 3\r\nContent-Length: «3\r\n\r\n", "duplicate_content_length"),
        (post + "Content-Length: 5, «5\r\n\r\n", "duplicate_content_length"),
        (post + "Content-Length: 5, «6\r\n\r\n", "conflicting_content_length"),
        (post + "Content-Length: «-5\r\n\r\n", "invalid_content_length"),
        (post + "Content-Length: «+5\r\n\r\n", "invalid_content_length"),
        (post + "Content-Length: 0«x5\r\n\r\n", "invalid_content_length"),
        (post + "Content-Length: 1 «2\r\n\r\n", "invalid_content_length"),
        (post + "Content-Length: «\r\n\r\n", "invalid_content_length"),
        (post + "Content-Length: 5,«\r\n\r\n", "invalid_content_length"),
        (post + "Content-Length: 1«e3\r\n\r\n", "invalid_content_length"),
        (post + "Content-Length: 9223372036854775807«0\r\n\r\n", "invalid_content_length"),
        (post + "Content-Length: 999999999999999999«99\r\n\r\n", "invalid_content_length"),
        // Transfer-Encoding variants.
        (post + "Transfer-Encoding: chunked, «identity\r\n\r\n", "transfer_encoding_not_chunked"),
        // RFC 9112 §6.1: any coding but chunked is one Wire does not decode (a server answers 501).
        (post + "Transfer-Encoding: «gzip\r\n\r\n", "unsupported_transfer_coding"),
        (post + "Transfer-Encoding: «gzip, chunked\r\n\r\n0\r\n\r\n", "unsupported_transfer_coding"),
        (post + "Transfer-Encoding: «deflate, chunked\r\n\r\n0\r\n\r\n", "unsupported_transfer_coding"),
        (post + "Transfer-Encoding: «identity\r\n\r\n", "unsupported_transfer_coding"),
        (post + "Transfer-Encoding: «gzip\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "unsupported_transfer_coding"),
        (post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: «gzip\r\n\r\n", "transfer_encoding_not_chunked"),
        (post + "Transfer-Encoding: «xchunked\r\n\r\n", "unsupported_transfer_coding"),
        (post + "Transfer-Encoding: «identity, chunked\r\n\r\n", "unsupported_transfer_coding"),
        (post + "Transfer-Encoding: chunked, «chunked\r\n\r\n", "chunked_applied_twice"),
        (post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: «chunked\r\n\r\n", "chunked_applied_twice"),
        (post + "Transfer-Encoding: «chunked;q=1\r\n\r\n", "invalid_transfer_encoding"),
        (post + "Transfer-Encoding: «,\r\n\r\n", "invalid_transfer_encoding"),
        (post + "Transfer-Encoding: «\r\n\r\n", "invalid_transfer_encoding"),
        (post + "Transfer-Encoding: chunked«\"\r\n\r\n", "invalid_transfer_encoding"),
        (post + "Transfer-Encoding« : chunked\r\n\r\n", "whitespace_before_colon"),
        (post + "Transfer-Encoding«\t: chunked\r\n\r\n", "whitespace_before_colon"),
        (post + "Transfer-Encoding: «\u{0B}chunked\r\n\r\n", "invalid_field_value"),
        (post + "Transfer-Encoding: chunked«\u{0C}\r\n\r\n", "invalid_field_value"),
        (post + "Transfer-Encoding: gzip\r\n« chunked\r\n\r\n", "obsolete_line_folding"),
        (post + "Transfer-Encoding:\r\n«\tchunked\r\n\r\n", "obsolete_line_folding"),
        (post + "«\u{0}Transfer-Encoding: chunked\r\n\r\n", "invalid_field_name"),
        ("POST / HTTP/1.0\r\n«Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "transfer_encoding_in_http10"),
        ("POST / HTTP/1.0\r\nContent-Length: 5\r\n«Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "transfer_encoding_in_http10"),
        ("POST / HTTP/1.0\r\n«Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", "transfer_encoding_in_http10"),
        // Chunk framing.
        (chunkedPost + "0«x5\r\nhello\r\n0\r\n\r\n", "invalid_chunk_size"),
        (chunkedPost + "«-5\r\nhello\r\n0\r\n\r\n", "invalid_chunk_size"),
        (chunkedPost + "«\r\n", "invalid_chunk_size"),
        (chunkedPost + "5;«\r\nhello\r\n0\r\n\r\n", "invalid_chunk_extension"),
        (chunkedPost + "5 «\r\nhello\r\n0\r\n\r\n", "invalid_chunk_extension"),
        (chunkedPost + "5;a«@b\r\nhello\r\n0\r\n\r\n", "invalid_chunk_extension"),
        (chunkedPost + "5;a=\"«\u{1}\"\r\nhello\r\n0\r\n\r\n", "invalid_chunk_extension"),
        (chunkedPost + "5;a=«\r\nhello\r\n0\r\n\r\n", "invalid_chunk_extension"),
        (chunkedPost + "5;a «\r\nhello\r\n0\r\n\r\n", "invalid_chunk_extension"),
        (chunkedPost + "fffffffffffffff«f\r\n", "chunk_size_too_large"),
        (chunkedPost + "5«\nhello\r\n0\r\n\r\n", "bare_lf"),
        (chunkedPost + "5\r\nhello«\n0\r\n\r\n", "invalid_chunk_terminator"),
        (chunkedPost + "5\r\nhello«XX0\r\n\r\n", "invalid_chunk_terminator"),
        (chunkedPost + "5\r\nhello\r«X0\r\n\r\n", "invalid_chunk_terminator"),
        (chunkedPost + "5«\rX", "bare_cr"),
        (chunkedPost + "0\r\nX-Trailer«\r\n\r\n", "invalid_field_name"),
        (chunkedPost + "0\r\nX: y«\n\r\n", "bare_lf"),
        // Line structure and start line.
        (post + "X: a«\rb\r\n\r\n", "bare_cr"),
        (post + "X: a«\u{0}b\r\n\r\n", "invalid_field_value"),
        (post + "X: a«\u{7F}\r\n\r\n", "invalid_field_value"),
        ("POST / HTTP/1.1\r\nHost: a«\n\r\n", "bare_lf"),
        ("GET / HTTP/1.1«\nHost: a\r\n\r\n", "bare_lf"),
        ("GET / HTTP/1.1\r\n« Host: a\r\n\r\n", "whitespace_before_first_field"),
        ("GET « / HTTP/1.1\r\nHost: a\r\n\r\n", "invalid_request_line"),
        ("GET / « HTTP/1.1\r\nHost: a\r\n\r\n", "invalid_request_line"),
        ("GET«\t/ HTTP/1.1\r\nHost: a\r\n\r\n", "invalid_request_line"),
        ("GET /«\r\n\r\n", "invalid_request_line"),
        ("GET / HTTP/1.1\r\nHost: a\r\n«Host: b\r\n\r\n", "duplicate_host"),
        ("GET / HTTP/1.1\r\nX: y\r\n«\r\n", "missing_host"),
        ("GET / HTTP/1.1\r\nHost: a«@b\r\n\r\n", "invalid_host"),
        ("GET / HTTP/1.1\r\nHost: a« b\r\n\r\n", "invalid_host"),
        ("GET / HTTP/1.1\r\nHost: a:8«x\r\n\r\n", "invalid_host"),
        ("GET / HTTP/1.1\r\nHost: a«/\r\n\r\n", "invalid_host"),
    ]

    @Test(arguments: HTTP1SmugglingTests.cases)
    func refused(text: String, kind: String) {
        let (bytes, offset) = HTTP1TestDriver.marked(text)
        let whole = HTTP1TestDriver.run(bytes, kind: .request)
        #expect(whole.last == "error \(kind)@\(offset)", "\(HTTP1TestDriver.escape(bytes))")
        let trickled = HTTP1TestDriver.run(bytes, kind: .request, splits: Array(0..<bytes.count))
        #expect(trickled.last == whole.last)
    }

    @Test func atLeastThirtyCases() {
        #expect(HTTP1SmugglingTests.cases.count >= 30)
    }
}
