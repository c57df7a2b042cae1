import Testing

import Wire

struct HTTP1ResponseParserTests {
    private func run(
        _ text: String,
        methods: [HTTPMethod] = [],
        configuration: HTTP1ParserConfiguration = .strict,
        finish: Bool = true
    ) -> [String] {
        HTTP1TestDriver.runEverySplit(
            text, kind: .response, configuration: configuration, methods: methods, finish: finish)
    }

    @Test func contentLength() {
        #expect(
            run("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello") == [
                "head HTTP/1.1 200 OK | Content-Length: 5", "body hello", "end",
            ])
    }

    @Test func chunkedFramingIsPassedOnWhenAsked() {
        // curl's --raw: every byte of the chunked body, still validated and still ending the message where it ends.
        var configuration = HTTP1ParserConfiguration.userAgent
        configuration.passesChunkedFraming = true
        let body = "5;name=\"a b\"\r\nhello\r\n00A\r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\n"
        let log = run(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body + "HTTP/1.1 204 No Content\r\n\r\n",
            configuration: configuration)
        #expect(
            log == [
                "head HTTP/1.1 200 OK | Transfer-Encoding: chunked", "body " + HTTP1TestDriver.escape(Array(body.utf8)),
                "end trailers | X-Trailer: 1", "head HTTP/1.1 204 No Content", "end",
            ])
        // Without trailers, and a Content-Length body as it always is.
        #expect(
            run("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n", configuration: configuration) == [
                "head HTTP/1.1 200 OK | Transfer-Encoding: chunked", "body 2\\r\\nab\\r\\n0\\r\\n\\r\\n", "end",
            ])
        // Framing is still checked: a bad chunk size fails as without the option.
        let bad = run("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nZ\r\n", configuration: configuration)
        #expect(bad.last?.hasPrefix("error") == true, "\(bad)")
    }

    @Test func closeDelimitedBodyEndsAtFinish() {
        #expect(
            run("HTTP/1.1 200 OK\r\nServer: x\r\n\r\nall of this until close") == [
                "head HTTP/1.1 200 OK | Server: x", "body all of this until close", "end",
            ])
        #expect(run("HTTP/1.1 200 OK\r\n\r\nabc", finish: false) == ["head HTTP/1.1 200 OK", "body abc"])
    }

    @Test func transferEncodingNotEndingInChunkedIsCloseDelimited() {
        #expect(
            run("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n\u{1F}zz") == [
                "head HTTP/1.1 200 OK | Transfer-Encoding: gzip", "body \\x1fzz", "end",
            ])
    }

    @Test func chunked() {
        #expect(
            run("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nX: y\r\n\r\n") == [
                "head HTTP/1.1 200 OK | Transfer-Encoding: chunked", "body ab", "end trailers | X: y",
            ])
    }

    @Test func reasonPhraseVariants() {
        #expect(run("HTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n") == ["head HTTP/1.1 404  | Content-Length: 0", "end"])
        #expect(
            run("HTTP/1.1 200 Very\tFine  OK\r\nContent-Length: 0\r\n\r\n").first
                == "head HTTP/1.1 200 Very\tFine  OK | Content-Length: 0")
    }

    @Test func headResponseHasNoBody() {
        let text = "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
        #expect(
            run(text, methods: [.head, .get]) == [
                "head HTTP/1.1 200 OK | Content-Length: 1234", "end",
                "head HTTP/1.1 200 OK | Content-Length: 2", "body hi", "end",
            ])
    }

    @Test(arguments: [204, 304])
    func noContentStatuses(code: Int) {
        let text = "HTTP/1.1 \(code) X\r\nContent-Length: 10\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nz"
        #expect(
            run(text) == [
                "head HTTP/1.1 \(code) X | Content-Length: 10", "end",
                "head HTTP/1.1 200 OK | Content-Length: 1", "body z", "end",
            ])
    }

    @Test func interimResponsesPrecedeFinal() {
        let text =
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        #expect(
            run(text, methods: [.post]) == [
                "head HTTP/1.1 100 Continue", "head HTTP/1.1 103 Early Hints | Link: </a.css>",
                "head HTTP/1.1 200 OK | Content-Length: 2", "body ok", "end",
            ])
    }

    @Test func aStreamEndingAfterInterimResponsesOnlyIsTruncated() {
        // RFC 9110 §15.2: a 1xx precedes the final response; an end of stream before it cuts that response short.
        #expect(
            run("HTTP/1.1 100 Continue\r\n\r\n") == [
                "head HTTP/1.1 100 Continue", "error unexpected_end_of_stream@25",
            ])
        #expect(
            run("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n", methods: [.post]) == [
                "head HTTP/1.1 100 Continue", "head HTTP/1.1 103 Early Hints", "error unexpected_end_of_stream@53",
            ])
        // After the final response the stream may end.
        #expect(
            run("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n") == [
                "head HTTP/1.1 100 Continue", "head HTTP/1.1 204 No Content", "end",
            ])
    }

    @Test func interimDoesNotDequeueMethod() throws {
        var parser = HTTP1Parser(kind: .response)
        parser.expectResponse(to: .head)
        let bytes = Array("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n".utf8)
        let first = try parser.parse(bytes.span)
        guard case .responseHead(let interim) = first.event else {
            Issue.record("no interim head")
            return
        }
        #expect(interim.isInterim)
        let rest = Array(bytes[first.consumed...])
        let second = try parser.parse(rest.span)
        #expect(second.consumed == rest.count)
        #expect(try parser.parse([UInt8]().span).event == .end(trailers: nil))
    }

    @Test func switchingProtocolsUpgrades() {
        let text = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\u{81}\u{5}hello"
        #expect(
            run(text) == [
                "head HTTP/1.1 101 Switching Protocols | Upgrade: websocket | Connection: Upgrade", "upgraded",
                "rest=\\xc2\\x81\\x05hello",
            ])
    }

    @Test func successfulConnectIsATunnel() {
        #expect(
            run("HTTP/1.1 200 Connection established\r\n\r\n\u{16}\u{3}\u{1}", methods: [.connect]) == [
                "head HTTP/1.1 200 Connection established", "upgraded", "rest=\\x16\\x03\\x01",
            ])
    }

    @Test func refusedConnectHasABody() {
        let text = "HTTP/1.1 407 Proxy Auth\r\nContent-Length: 3\r\n\r\nno!"
        #expect(
            run(text, methods: [.connect]) == [
                "head HTTP/1.1 407 Proxy Auth | Content-Length: 3", "body no!", "end",
            ])
    }

    @Test func pipelinedResponsesFollowTheMethodQueue() {
        let text =
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
            + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n"
        #expect(
            run(text, methods: [.head, .get, .post]) == [
                "head HTTP/1.1 200 OK | Content-Length: 3", "end",
                "head HTTP/1.1 200 OK | Content-Length: 3", "body abc", "end",
                "head HTTP/1.1 200 OK | Transfer-Encoding: chunked", "body z", "end",
            ])
    }

    @Test func http10ResponseIsNotKeepAliveByDefault() throws {
        var parser = HTTP1Parser(kind: .response)
        let bytes = Array("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)
        guard case .responseHead(let head) = try parser.parse(bytes.span).event else {
            Issue.record("no head")
            return
        }
        #expect(!head.isKeepAlive)
        #expect(head.version == .http1_0)
    }

    @Test func transferEncodingWithContentLengthIsRefusedByDefault() {
        let text = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
        #expect(
            HTTP1TestDriver.run(Array(text.utf8), kind: .response).last
                == "error transfer_encoding_with_content_length@36")
    }

    @Test func transferEncodingWithContentLengthWhenAllowed() {
        let text = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n"
        let configuration = HTTP1ParserConfiguration(allowsResponseTransferEncodingWithContentLength: true)
        #expect(run(text, configuration: configuration).suffix(2) == ["body x", "end"])
    }

    /// RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 response is faulty framing, whatever the coding, a
    /// Content-Length beside it, the status, the request method or the configuration say.
    @Test(arguments: [
        ("HTTP/1.0 200 OK\r\n«Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", HTTPMethod.get),
        ("HTTP/1.0 200 OK\r\nContent-Length: 5\r\n«Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", .get),
        ("HTTP/1.0 200 OK\r\n«Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", .get),
        ("HTTP/1.0 200 OK\r\n«Transfer-Encoding: gzip\r\n\r\nzz", .get),
        ("HTTP/1.0 204 No Content\r\n«Transfer-Encoding: chunked\r\n\r\n", .get),
        ("HTTP/1.0 200 OK\r\n«Transfer-Encoding: chunked\r\n\r\n", .head),
    ])
    func transferEncodingInHTTP10ResponseIsRefused(text: String, method: HTTPMethod) {
        let (bytes, offset) = HTTP1TestDriver.marked(text)
        let lenient = HTTP1ParserConfiguration(allowsResponseTransferEncodingWithContentLength: true, leniency: .all)
        for configuration in [HTTP1ParserConfiguration.strict, lenient] {
            let whole = HTTP1TestDriver.run(bytes, kind: .response, configuration: configuration, methods: [method])
            #expect(whole.last == "error transfer_encoding_in_http10@\(offset)")
            let trickled = HTTP1TestDriver.run(
                bytes, kind: .response, configuration: configuration, methods: [method], splits: Array(0..<bytes.count))
            #expect(trickled.last == whole.last)
        }
        // The same head in HTTP/1.1 is framed by its Transfer-Encoding, not refused.
        var http11 = bytes
        http11[7] = UInt8(ascii: "1")
        #expect(HTTP1TestDriver.run(http11, kind: .response, configuration: lenient, methods: [method]).last == "end")
    }

    @Test(arguments: [
        ("HTTP/1.1 2000 OK\r\n\r\n", "invalid_status_code@12"),
        ("HTTP/1.1 20 OK\r\n\r\n", "invalid_status_code@11"),
        ("HTTP/1.1 099 OK\r\n\r\n", "invalid_status_code@9"),
        ("HTTP/1.1 2x0 OK\r\n\r\n", "invalid_status_code@10"),
        ("HTTP/1.1  200 OK\r\n\r\n", "invalid_status_code@9"),
        ("HTTP/1.1 200\r\n\r\n", "invalid_status_line@12"),
        ("HTTP/1.1 200 O\u{1}K\r\n\r\n", "invalid_reason_phrase@14"),
        ("HTTP/2.0 200 OK\r\n\r\n", "unsupported_version@0"),
        ("HTTP/1.2 200 OK\r\n\r\n", "unsupported_version@0"),
        ("http/1.1 200 OK\r\n\r\n", "invalid_version@0"),
        ("HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", "obsolete_line_folding@23"),
        ("\r\nHTTP/1.1 200 OK\r\n\r\n", "invalid_version@0"),
    ])
    func malformedStatusLines(text: String, expected: String) {
        #expect(HTTP1TestDriver.run(Array(text.utf8), kind: .response).last == "error \(expected)")
    }

    @Test func statusCodesAboveFiveHundredNinetyNineAreServerErrors() throws {
        var parser = HTTP1Parser(kind: .response)
        let bytes = Array("HTTP/1.1 999 Custom\r\nContent-Length: 0\r\n\r\n".utf8)
        guard case .responseHead(let head) = try parser.parse(bytes.span).event else {
            Issue.record("no head")
            return
        }
        #expect(head.status.responseClass == .serverError)
    }

    @Test func truncatedContentLengthBodyFails() {
        let text = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"
        #expect(
            HTTP1TestDriver.run(Array(text.utf8), kind: .response).last == "error unexpected_end_of_stream@\(text.utf8.count)")
    }
}
