import Testing

import Wire

struct HTTP1LimitsTests {
    private func lastEntry(_ text: String, _ configuration: HTTP1ParserConfiguration, kind: HTTP1Parser.Kind = .request)
        -> String?
    {
        let bytes = Array(text.utf8)
        let whole = HTTP1TestDriver.run(bytes, kind: kind, configuration: configuration)
        let trickled = HTTP1TestDriver.run(bytes, kind: kind, configuration: configuration, splits: Array(0..<bytes.count))
        #expect(whole == trickled)
        return whole.last
    }

    @Test func defaultsFollowTheRFCs() {
        let configuration = HTTP1ParserConfiguration()
        #expect(configuration.maxStartLineLength >= 8000)
        #expect(configuration.maxHeaderSectionSize == 64 * 1024)
        #expect(configuration.maxHeaderCount == 256)
        #expect(configuration.leniency.isEmpty)
    }

    @Test func requestLineAtTheLimitIsAccepted() {
        let configuration = HTTP1ParserConfiguration.strict
        let prefix = "GET /"
        let suffix = " HTTP/1.1"
        let path = String(repeating: "a", count: configuration.maxStartLineLength - prefix.count - suffix.count)
        let text = prefix + path + suffix + "\r\nHost: a\r\n\r\n"
        #expect(HTTP1TestDriver.run(Array(text.utf8), kind: .request).last == "end")
        let longer = prefix + "b" + path + suffix + "\r\nHost: a\r\n\r\n"
        #expect(lastEntry(longer, configuration) == "error request_line_too_long@\(configuration.maxStartLineLength)")
    }

    @Test func statusLineTooLong() {
        let configuration = HTTP1ParserConfiguration(maxStartLineLength: 20)
        #expect(lastEntry("HTTP/1.1 200 OK\r\n\r\n", configuration, kind: .response) == "end")
        #expect(
            lastEntry("HTTP/1.1 200 OK, sure thing\r\n\r\n", configuration, kind: .response)
                == "error status_line_too_long@20")
    }

    @Test func headerSectionTooLarge() {
        let configuration = HTTP1ParserConfiguration(maxHeaderSectionSize: 64)
        let fits = "GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "v", count: 32) + "\r\n\r\n"
        #expect(fits.utf8.count == 64)
        #expect(lastEntry(fits, configuration) == "end")
        let tooBig = "GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "v", count: 33) + "\r\n\r\n"
        #expect(lastEntry(tooBig, configuration) == "error header_section_too_large@64")
    }

    @Test func headerSectionLimitDoesNotCountIgnoredEmptyLines() {
        let configuration = HTTP1ParserConfiguration(maxHeaderSectionSize: 32)
        #expect(lastEntry("\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", configuration) == "end")
    }

    @Test func tooManyHeaders() {
        let configuration = HTTP1ParserConfiguration(maxHeaderCount: 3)
        #expect(lastEntry("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\n\r\n", configuration) == "end")
        #expect(
            lastEntry("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", configuration)
                == "error too_many_headers@37")
    }

    /// A head of `count` realistic fields (about 60 bytes each).
    static func manyFields(_ count: Int) -> String {
        (0..<count).map { "X-Field-\($0): value \($0) " + String(repeating: "v", count: 40) + "\r\n" }.joined()
    }

    @Test(arguments: [HTTP1Parser.Kind.request, .response])
    func theDefaultsAdmitAHundredAndMoreFields(kind: HTTP1Parser.Kind) {
        // Real responses carry 60–100 fields; the head's size, not the count, is what bounds memory.
        let start = kind == .request ? "GET / HTTP/1.1\r\nHost: a\r\n" : "HTTP/1.1 204 No Content\r\n"
        let hundred = start + Self.manyFields(kind == .request ? 99 : 100) + "\r\n"
        let log = HTTP1TestDriver.run(Array(hundred.utf8), kind: kind)
        #expect(log.last == "end")
        #expect(log.first?.split(separator: "|").count == 101)
        for configuration in [HTTP1ParserConfiguration.strict, .userAgent] {
            let most = start + Self.manyFields(configuration.maxHeaderCount - (kind == .request ? 1 : 0)) + "\r\n"
            #expect(HTTP1TestDriver.run(Array(most.utf8), kind: kind, configuration: configuration).last == "end")
            let over = start + Self.manyFields(configuration.maxHeaderCount + 1) + "\r\n"
            #expect(
                HTTP1TestDriver.run(Array(over.utf8), kind: kind, configuration: configuration).last?
                    .hasPrefix("error too_many_headers@") == true)
        }
        // The total stays bounded: 100 fields of 700 bytes exceed the default 64 KiB head.
        let huge = start + (0..<100).map { "X-\($0): " + String(repeating: "v", count: 700) + "\r\n" }.joined() + "\r\n"
        #expect(HTTP1TestDriver.run(Array(huge.utf8), kind: kind).last == "error header_section_too_large@65536")
    }

    @Test func limitErrorsNameTheirSetting() {
        #expect(HTTP1ParseError.Kind.tooManyHeaders.limit == "maxHeaderCount")
        #expect(HTTP1ParseError.Kind.headerSectionTooLarge.limit == "maxHeaderSectionSize")
        #expect(HTTP1ParseError.Kind.trailerSectionTooLarge.limit == "maxHeaderSectionSize")
        #expect(HTTP1ParseError.Kind.requestLineTooLong.limit == "maxStartLineLength")
        #expect(HTTP1ParseError.Kind.statusLineTooLong.limit == "maxStartLineLength")
        #expect(HTTP1ParseError.Kind.chunkExtensionTooLong.limit == "maxChunkExtensionLength")
        #expect(HTTP1ParseError.Kind.bodyTooLarge.limit == "maxBodySize")
        #expect(HTTP1ParseError.Kind.invalidFieldValue.limit == nil)
    }

    @Test func trailerSectionLimits() {
        let configuration = HTTP1ParserConfiguration(maxHeaderSectionSize: 80)
        let head = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
        let trailer = "X: " + String(repeating: "t", count: 100) + "\r\n\r\n"
        #expect(
            lastEntry(head + "0\r\n" + trailer, configuration)
                == "error trailer_section_too_large@\(head.utf8.count + 3 + 80)")
        let fewer = HTTP1ParserConfiguration(maxHeaderCount: 2)
        #expect(
            lastEntry(head + "0\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", fewer)
                == "error too_many_headers@\(head.utf8.count + 3 + 12)")
    }

    @Test func chunkExtensionTooLong() {
        let configuration = HTTP1ParserConfiguration(maxChunkExtensionLength: 8)
        let head = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(lastEntry(head + "1;abc=def\r\nx\r\n0\r\n\r\n", configuration) == "end")
        #expect(
            lastEntry(head + "1;abc=defg\r\nx\r\n0\r\n\r\n", configuration)
                == "error chunk_extension_too_long@\(head.utf8.count + 10)")
    }

    @Test func bodyLimits() {
        let configuration = HTTP1ParserConfiguration(maxBodySize: 4)
        let post = "POST / HTTP/1.1\r\nHost: a\r\n"
        #expect(lastEntry(post + "Content-Length: 4\r\n\r\nabcd", configuration) == "end")
        #expect(lastEntry(post + "Content-Length: 5\r\n\r\nabcde", configuration) == "error body_too_large@26")
        let chunked = post + "Transfer-Encoding: chunked\r\n\r\n"
        #expect(lastEntry(chunked + "2\r\nab\r\n2\r\ncd\r\n0\r\n\r\n", configuration) == "end")
        #expect(
            lastEntry(chunked + "2\r\nab\r\n3\r\ncde\r\n0\r\n\r\n", configuration)
                == "error body_too_large@\(chunked.utf8.count + 9)")
        #expect(lastEntry("HTTP/1.1 200 OK\r\n\r\nabcdef", configuration, kind: .response) == "error body_too_large@23")
    }
}
