import Testing

import Wire

/// The server's lean parse path: what it reports must agree with the public events and the head's own properties.
struct HTTP1LeanParseTests {
    private static func lean(_ text: String, parser: inout HTTP1Parser) throws -> HTTP1LeanStep {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { (buffer) throws(HTTP1ParseError) -> HTTP1LeanStep in
            try parser.parseLean(buffer)
        }
    }

    @Test(arguments: [
        "GET / HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Close\r\n\r\n",
        "GET / HTTP/1.0\r\n\r\n",
        "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
        "GET / HTTP/1.0\r\nConnection: foo, keep-alive\r\n\r\n",
        "PUT /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n",
        "PUT /x HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n",
        "PUT /x HTTP/1.1\r\nHost: a\r\nExpect: something-else\r\nContent-Length: 1\r\n\r\n",
    ])
    func leanFactsMatchTheHead(_ text: String) throws {
        var parser = HTTP1Parser(kind: .request)
        let step = try Self.lean(text, parser: &parser)
        #expect(step == HTTP1LeanStep(consumed: text.utf8.count, kind: .head))
        let head = parser.takeRequestHead()
        #expect(parser.lastRequestKeepsAlive == head.isKeepAlive)
        #expect(parser.lastRequestExpectsContinue == head.headers.containsToken("100-continue", inFieldsNamed: "expect"))
    }

    /// The client connection decides reuse from `lastResponseKeepsAlive`, not from the head's fields.
    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nConnection: closed\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.0 200 OK\r\nConnection: foo, keep-alive\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
    ])
    func lastResponseKeepsAliveMatchesTheHead(_ text: String) throws {
        var parser = HTTP1Parser(kind: .response)
        parser.expectResponse(to: .get)
        let step = try Array(text.utf8).withUnsafeBufferPointer { (buffer) throws(HTTP1ParseError) in
            try parser.parse(buffer)
        }
        guard case .responseHead(let head) = step.event else {
            Issue.record("no head from \(text)")
            return
        }
        #expect(parser.lastResponseKeepsAlive == head.isKeepAlive)
    }

    @Test func leanStepsFollowAMessageAndTheParserIsReusable() throws {
        var parser = HTTP1Parser(kind: .request)
        let message = "POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"
        let bytes = Array(message.utf8)
        var offset = 0
        var kinds: [HTTP1LeanStep.Kind] = []
        while offset < bytes.count || kinds.last != .end {
            let step = try Array(bytes[offset...]).withUnsafeBufferPointer { (buffer) throws(HTTP1ParseError) in
                try parser.parseLean(buffer)
            }
            if case .head = step.kind { #expect(parser.takeRequestHead().target == "/a") }
            if case .end = step.kind { #expect(parser.takeTrailers() == nil) }
            kinds.append(step.kind)
            offset += step.consumed
        }
        #expect(kinds == [.head, .body(0..<3), .end])
        #expect(parser.bytesConsumed == bytes.count)
        parser.resetForNewStream()
        #expect(parser.bytesConsumed == 0, "offsets start over for the next stream")
        #expect(try Self.lean("GET /b HTTP/1.1\r\nHost: a\r\n\r\n", parser: &parser).kind == .head)
        #expect(parser.takeRequestHead().target == "/b")
    }

    @Test func resetAfterAPartialHeadForgetsIt() throws {
        var parser = HTTP1Parser(kind: .request)
        #expect(try Self.lean("GET /half HTTP/1.1\r\nHo", parser: &parser).kind == .needMore)
        parser.resetForNewStream()
        let step = try Self.lean("GET /whole HTTP/1.1\r\nHost: a\r\n\r\n", parser: &parser)
        #expect(step.kind == .head)
        #expect(parser.takeRequestHead().target == "/whole")
    }

    @Test func aHeadWaitingInTheParserStillComesOutOfParse() throws {
        var parser = HTTP1Parser(kind: .request)
        let step = try parser.parse(Array("GET /p HTTP/1.1\r\nHost: a\r\n\r\n".utf8).span)
        guard case .requestHead(let head)? = step.event else {
            Issue.record("expected a request head, got \(String(describing: step.event))")
            return
        }
        #expect(head.target == "/p")
    }

    @Test func fieldsAddedOneByOneAreCheckedOnceAndUnsafeOnesStillRefused() throws {
        var safe = HTTPHeaders()
        safe.add(name: "X-Fine", value: "a b\tc")
        #expect(safe.isKnownValid)
        var unsafe = safe
        unsafe.add(name: "X-Bad", value: "a\r\nInjected: yes")
        #expect(!unsafe.isKnownValid)
        var out: [UInt8] = []
        #expect(throws: HTTP1SerializationError.self) {
            try HTTP1Serializer.writeResponseHead(HTTPResponseHead(status: .ok, headers: unsafe), into: &out)
        }
        #expect(out.isEmpty)
        var badName = HTTPHeaders()
        badName.add(name: "Bad Name", value: "v")
        #expect(throws: HTTP1SerializationError.self) {
            try HTTP1Serializer.writeResponseHead(HTTPResponseHead(status: .ok, headers: badName), into: &out)
        }
        try HTTP1Serializer.writeResponseHead(
            HTTPResponseHead(status: .ok, headers: safe), framing: .contentLength(12), into: &out)
        #expect(String(decoding: out, as: UTF8.self) == "HTTP/1.1 200 OK\r\nX-Fine: a b\tc\r\nContent-Length: 12\r\n\r\n")
    }
}
