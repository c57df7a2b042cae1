import Testing

import Wire

struct HTTP1LenientTests {
    private func run(_ text: String, kind: HTTP1Parser.Kind = .request, leniency: HTTP1Leniency = .all) -> [String] {
        HTTP1TestDriver.runEverySplit(text, kind: kind, configuration: HTTP1ParserConfiguration(leniency: leniency))
    }

    @Test func bareLineFeedsAreRepairedAndReported() {
        #expect(
            run("GET / HTTP/1.1\nHost: a\nX: b\n\n", leniency: .bareLineFeed) == [
                "head GET / HTTP/1.1 | Host: a | X: b repairs=[bare_lf@14]", "end",
            ])
    }

    @Test func eachObsFoldBecomesOneSpace() {
        // RFC 9112 §5.2: obs-fold = OWS CRLF RWS, the whole run replaced; whitespace inside a line is kept.
        #expect(
            run("GET / HTTP/1.1\r\nHost: a\r\nX: one \t\r\n  two\r\n\tthree  four\r\nY:\r\n y\r\n\r\n") == [
                "head GET / HTTP/1.1 | Host: a | X: one two three  four | Y: y repairs=[obsolete_line_folding@35]", "end",
            ])
    }

    @Test func obsFoldInResponses() {
        #expect(
            run("HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n", kind: .response) == [
                "head HTTP/1.1 200 OK | X: a b | Content-Length: 0 repairs=[obsolete_line_folding@23]", "end",
            ])
    }

    @Test func theUserAgentDefaultsUnfoldResponsesButNothingElse() {
        // RFC 9112 §5.2: a user agent MUST replace obs-fold in a response; a server MUST refuse it in a request.
        let response = "HTTP/1.1 200 OK\r\nX: a\r\n\tb\r\nContent-Length: 0\r\n\r\n"
        #expect(
            HTTP1TestDriver.runEverySplit(response, kind: .response, configuration: .userAgent) == [
                "head HTTP/1.1 200 OK | X: a b | Content-Length: 0 repairs=[obsolete_line_folding@23]", "end",
            ])
        #expect(HTTP1TestDriver.run(Array(response.utf8), kind: .response).last == "error obsolete_line_folding@23")
        let request = "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n"
        #expect(HTTP1TestDriver.run(Array(request.utf8), kind: .request).last == "error obsolete_line_folding@31")
        #expect(
            HTTP1TestDriver.run(
                Array("HTTP/1.1 200 OK\nContent-Length: 0\n\n".utf8), kind: .response,
                configuration: .userAgent
            ).last == "error bare_lf@15")
        #expect(HTTPClientConfiguration().parserConfiguration == .userAgent)
    }

    @Test func whitespaceSplitRequestLine() {
        #expect(
            run("GET \t /x\t HTTP/1.1 \r\nHost: a\r\n\r\n") == [
                "head GET /x HTTP/1.1 | Host: a repairs=[start_line_whitespace@4]", "end",
            ])
    }

    @Test func missingSpaceBeforeEmptyReason() {
        #expect(
            run("HTTP/1.1 204\r\n\r\n", kind: .response) == [
                "head HTTP/1.1 204  repairs=[start_line_whitespace@12]", "end",
            ])
    }

    @Test func identicalContentLengthsAreMerged() {
        #expect(
            run("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nhi") == [
                "head POST / HTTP/1.1 | Host: a | Content-Length: 2, 2 | Content-Length: 2"
                    + " repairs=[duplicate_content_length@45]",
                "body hi", "end",
            ])
    }

    @Test(arguments: [
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2, «3\r\n\r\nhi", "conflicting_content_length"),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5«\nhello\n0\n\n", "bare_lf"),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: 1\r\n« y\r\n\r\n", "obsolete_line_folding"),
        ("GET / HTTP/1.1\r\n« Host: a\r\n\r\n", "whitespace_before_first_field"),
        (
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n«Content-Length: 1\r\n\r\n",
            "transfer_encoding_with_content_length"
        ),
    ])
    func stillRefusedWhenLenient(text: String, kind: String) {
        let (bytes, offset) = HTTP1TestDriver.marked(text)
        let log = HTTP1TestDriver.run(bytes, kind: .request, configuration: .lenient)
        #expect(log.last == "error \(kind)@\(offset)")
    }

    @Test func strictParserReportsNoRepairs() throws {
        var parser = HTTP1Parser(kind: .request)
        let bytes = Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        guard case .requestHead(let head) = try parser.parse(bytes.span).event else {
            Issue.record("no head")
            return
        }
        #expect(head.repairs.isEmpty)
    }
}
