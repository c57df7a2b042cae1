import Testing

import Wire

struct HTTP1RequestParserTests {
    private func run(
        _ text: String,
        configuration: HTTP1ParserConfiguration = .strict,
        acceptsUpgrades: Bool = false
    ) -> [String] {
        HTTP1TestDriver.runEverySplit(
            text, kind: .request, configuration: configuration, acceptsUpgrades: acceptsUpgrades)
    }

    @Test func simpleGet() {
        #expect(
            run("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n") == [
                "head GET / HTTP/1.1 | Host: example.com", "end",
            ])
    }

    /// RFC 9112 §2.1 example request.
    @Test func rfc9112Example() {
        let text =
            "GET /hello.txt HTTP/1.1\r\nUser-Agent: curl/7.64.1\r\nHost: www.example.com\r\n"
            + "Accept-Language: en, mi\r\n\r\n"
        #expect(
            run(text) == [
                "head GET /hello.txt HTTP/1.1 | User-Agent: curl/7.64.1 | Host: www.example.com | Accept-Language: en, mi",
                "end",
            ])
    }

    @Test func contentLengthBody() {
        #expect(
            run("POST /submit HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world") == [
                "head POST /submit HTTP/1.1 | Host: a | Content-Length: 11", "body hello world", "end",
            ])
    }

    @Test func zeroContentLength() {
        #expect(
            run("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n") == [
                "head POST / HTTP/1.1 | Host: a | Content-Length: 0", "end",
            ])
    }

    @Test func leadingZerosInContentLength() {
        #expect(
            run("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 003\r\n\r\nabc") == [
                "head POST / HTTP/1.1 | Host: a | Content-Length: 003", "body abc", "end",
            ])
    }

    /// RFC 9112 §7.1: chunk extensions with token and quoted values, and a trailer section.
    @Test func chunkedWithExtensionsAndTrailers() {
        let text =
            "POST /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "4;name=value\r\nWiki\r\n5 ; a = \"q\\\"x\" ;b\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n"
            + "000\r\nExpires: never\r\nX-Sum: 1\r\n\r\n"
        #expect(
            run(text) == [
                "head POST /upload HTTP/1.1 | Host: a | Transfer-Encoding: chunked",
                "body Wikipedia in\\r\\n\\r\\nchunks.",
                "end trailers | Expires: never | X-Sum: 1",
            ])
    }

    @Test func chunkedWithoutTrailers() {
        let text = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: , Chunked \r\n\r\n3\r\nabc\r\n0\r\n\r\n"
        #expect(
            run(text) == [
                "head POST / HTTP/1.1 | Host: a | Transfer-Encoding: , Chunked", "body abc", "end",
            ])
    }

    @Test(arguments: ["gzip, chunked", "deflate, chunked", "identity", "x-gzip, chunked", "GZIP,chunked"])
    func codingsOtherThanChunkedAreUnsupported(codings: String) {
        // RFC 9112 §6.1: Wire decodes no other coding, so the request is refused (a server answers 501), at the
        // first such coding, whether the body would be read or not.
        let text = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \(codings)\r\n\r\n0\r\n\r\n"
        #expect(run(text) == ["error unsupported_transfer_coding@45"])
    }

    @Test func transferEncodingAcrossFieldsIsOneList() {
        let text =
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
        #expect(run(text) == ["error unsupported_transfer_coding@45"])
    }

    @Test func pipelinedRequests() {
        let text =
            "GET /1 HTTP/1.1\r\nHost: a\r\n\r\n"
            + "POST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi"
            + "\r\n"  // RFC 9112 §2.2: an empty line before a request-line is ignored.
            + "PUT /3 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n"
            + "GET /4 HTTP/1.0\r\n\r\n"
        #expect(
            run(text) == [
                "head GET /1 HTTP/1.1 | Host: a", "end",
                "head POST /2 HTTP/1.1 | Host: a | Content-Length: 2", "body hi", "end",
                "head PUT /3 HTTP/1.1 | Host: a | Transfer-Encoding: chunked", "body x", "end",
                "head GET /4 HTTP/1.0", "end",
            ])
    }

    @Test func severalLeadingEmptyLines() {
        #expect(run("\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n") == ["head GET / HTTP/1.1 | Host: a", "end"])
    }

    @Test func leadingEmptyLinesAreConsumed() throws {
        var parser = HTTP1Parser(kind: .request)
        let bytes = Array("\r\n\r\nGE".utf8)
        let step = try parser.parse(bytes.span)
        #expect(step.consumed == 4)
        #expect(step.event == nil)
    }

    @Test func incompleteHeadIsNotConsumed() throws {
        var parser = HTTP1Parser(kind: .request)
        var bytes = Array("GET / HTTP/1.1\r\nHost: a\r\n".utf8)
        #expect(try parser.parse(bytes.span) == HTTP1ParseStep(consumed: 0, event: nil))
        bytes += Array("\r".utf8)
        #expect(try parser.parse(bytes.span) == HTTP1ParseStep(consumed: 0, event: nil))
        bytes += Array("\n".utf8)
        let step = try parser.parse(bytes.span)
        #expect(step.consumed == bytes.count)
        #expect(parser.bytesConsumed == bytes.count)
    }

    @Test func fieldValueWhitespaceIsTrimmed() {
        #expect(
            run("GET / HTTP/1.1\r\nHost:a\r\nX-A: \t value with  spaces \t \r\nX-Empty:\r\nX-E2:   \r\n\r\n") == [
                "head GET / HTTP/1.1 | Host: a | X-A: value with  spaces | X-Empty:  | X-E2: ", "end",
            ])
    }

    @Test func obsTextInValueIsAccepted() {
        let log = run("GET / HTTP/1.1\r\nHost: a\r\nX: caf\u{E9}\r\n\r\n")
        #expect(log == ["head GET / HTTP/1.1 | Host: a | X: caf\u{E9}", "end"])
    }

    @Test(arguments: [
        ("GET http://example.com:8080/a?b=c HTTP/1.1\r\nHost: example.com:8080\r\n\r\n", "http://example.com:8080/a?b=c"),
        ("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", "example.com:443"),
        ("CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\n\r\n", "[::1]:443"),
        ("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", "*"),
        ("GET /p%20a/t;h?q=1&r=%7e#x HTTP/1.1\r\nHost: a\r\n\r\n", ""),
        ("GET /a/b/../c?x=y/z:@!$&'()*+,;= HTTP/1.1\r\nHost: a\r\n\r\n", "/a/b/../c?x=y/z:@!$&'()*+,;="),
    ])
    func requestTargetForms(text: String, target: String) throws {
        var parser = HTTP1Parser(kind: .request)
        let bytes = Array(text.utf8)
        if target.isEmpty {
            #expect(throws: HTTP1ParseError.self) { try parser.parse(bytes.span) }
            return
        }
        guard case .requestHead(let head) = try parser.parse(bytes.span).event else {
            Issue.record("no head")
            return
        }
        #expect(head.target == target)
        head.withTargetBytes { #expect($0.count == target.utf8.count) }
    }

    @Test(arguments: [
        "GET http://user:pw«@host/ HTTP/1.1\r\nHost: host\r\n\r\n",
        "GET https://«@host HTTP/1.1\r\nHost: host\r\n\r\n",
        "OPTIONS http://u«@host:80?x HTTP/1.1\r\nHost: host\r\n\r\n",
        "CONNECT user:pw«@host:443 HTTP/1.1\r\nHost: host:443\r\n\r\n",
        "CONNECT «@host:443 HTTP/1.1\r\nHost: host:443\r\n\r\n",
    ])
    func userinfoInTargetIsRefused(text: String) {
        // RFC 9110 §4.2.4: userinfo in an http(s) target is an error (a server answers 400), reported at the "@".
        let (bytes, offset) = HTTP1TestDriver.marked(text)
        #expect(HTTP1TestDriver.run(bytes, kind: .request) == ["error userinfo_in_target@\(offset)"])
    }

    @Test func anAtSignOutsideTheAuthorityIsNotUserinfo() {
        #expect(
            run("GET http://host/a@b?c@d HTTP/1.1\r\nHost: host\r\n\r\n") == [
                "head GET http://host/a@b?c@d HTTP/1.1 | Host: host", "end",
            ])
        #expect(run("GET /a@b HTTP/1.1\r\nHost: host\r\n\r\n") == ["head GET /a@b HTTP/1.1 | Host: host", "end"])
    }

    @Test func unknownMethodIsKeptVerbatim() throws {
        var parser = HTTP1Parser(kind: .request)
        let bytes = Array("PROPFIND /x HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        guard case .requestHead(let head) = try parser.parse(bytes.span).event else {
            Issue.record("no head")
            return
        }
        #expect(head.method == HTTPMethod("PROPFIND"))
        #expect(head.method.rawValue == "PROPFIND")
        #expect(!head.method.isSafe)
    }

    @Test func http10WithoutHost() {
        #expect(run("GET / HTTP/1.0\r\n\r\n") == ["head GET / HTTP/1.0", "end"])
    }

    @Test func emptyHostIsValid() {
        #expect(run("GET / HTTP/1.1\r\nHost:\r\n\r\n") == ["head GET / HTTP/1.1 | Host: ", "end"])
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: a\r\n\r\n", true),
        ("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", false),
        ("GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, CLOSE\r\n\r\n", false),
        ("GET / HTTP/1.1\r\nHost: a\r\nConnection: closed\r\n\r\n", true),
        ("GET / HTTP/1.0\r\n\r\n", false),
        ("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true),
        ("GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n", false),
    ])
    func keepAlive(text: String, expected: Bool) throws {
        var parser = HTTP1Parser(kind: .request)
        let bytes = Array(text.utf8)
        guard case .requestHead(let head) = try parser.parse(bytes.span).event else {
            Issue.record("no head")
            return
        }
        #expect(head.isKeepAlive == expected)
    }

    @Test func upgradeAcceptedStopsHTTPParsing() {
        let text =
            "GET /chat HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n\u{1}\u{2}binary"
        #expect(
            run(text, acceptsUpgrades: true) == [
                "head GET /chat HTTP/1.1 | Host: a | Connection: Upgrade | Upgrade: websocket", "end",
                "upgrade-requested", "upgraded", "rest=\\x01\\x02binary",
            ])
    }

    @Test func upgradeDeclinedContinuesHTTP() {
        let text =
            "GET / HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\nUpgrade: h2c\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n"
        #expect(
            run(text) == [
                "head GET / HTTP/1.1 | Host: a | Connection: upgrade | Upgrade: h2c", "end", "upgrade-requested",
                "head GET /2 HTTP/1.1 | Host: a", "end",
            ])
    }

    @Test func upgradeWithoutConnectionTokenIsIgnored() {
        #expect(
            run("GET / HTTP/1.1\r\nHost: a\r\nUpgrade: h2c\r\n\r\n") == [
                "head GET / HTTP/1.1 | Host: a | Upgrade: h2c", "end",
            ])
    }

    @Test func connectRequestAwaitsDecision() {
        #expect(
            run("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n\u{16}\u{3}", acceptsUpgrades: true) == [
                "head CONNECT a:443 HTTP/1.1 | Host: a:443", "end", "upgrade-requested", "upgraded", "rest=\\x16\\x03",
            ])
    }

    @Test func endOfStreamBetweenMessagesIsClean() {
        #expect(run("GET / HTTP/1.1\r\nHost: a\r\n\r\n") == ["head GET / HTTP/1.1 | Host: a", "end"])
    }

    @Test(arguments: [
        "GET / HTTP/1.1\r\nHost: a\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nabc",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\r\n",
    ])
    func endOfStreamMidMessageFails(text: String) {
        let log = HTTP1TestDriver.run(Array(text.utf8), kind: .request)
        #expect(log.last == "error unexpected_end_of_stream@\(text.utf8.count)")
    }

    @Test func errorIsSticky() throws {
        var parser = HTTP1Parser(kind: .request)
        let bad = Array("GET / HTTP/1.1\r\nHost : a\r\n\r\n".utf8)
        #expect(throws: HTTP1ParseError(.whitespaceBeforeColon, at: 20)) { try parser.parse(bad.span) }
        let good = Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        #expect(throws: HTTP1ParseError(.whitespaceBeforeColon, at: 20)) { try parser.parse(good.span) }
        #expect(throws: HTTP1ParseError(.whitespaceBeforeColon, at: 20)) { try parser.finish() }
    }

    @Test func offsetsCountAcrossMessages() {
        let first = "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
        let log = HTTP1TestDriver.run(Array((first + "GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n").utf8), kind: .request)
        #expect(log.last == "error whitespace_before_colon@\(first.utf8.count + 28)")
    }

    @Test func bodyRangesIndexTheCallersBytes() throws {
        var parser = HTTP1Parser(kind: .request)
        let bytes = Array("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabcGET".utf8)
        let head = try parser.parse(bytes.span)
        let rest = Array(bytes[head.consumed...])
        let body = try parser.parse(rest.span)
        #expect(body == HTTP1ParseStep(consumed: 3, event: .body(0..<3)))
        let end = try parser.parse(Array(rest[3...]).span)
        #expect(end == HTTP1ParseStep(consumed: 0, event: .end(trailers: nil)))
    }

    @Test func unsafeRawInterfaceMatchesSpan() throws {
        var parser = HTTP1Parser(kind: .request)
        let bytes = Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        let step = try bytes.withUnsafeBufferPointer { buffer throws(HTTP1ParseError) in try parser.parse(buffer) }
        #expect(step.consumed == bytes.count)
    }
}
