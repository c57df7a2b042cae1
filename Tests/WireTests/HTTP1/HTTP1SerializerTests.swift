import Testing

import Wire

struct HTTP1SerializerTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func requestHead() throws {
        var buffer: [UInt8] = []
        let head = HTTPRequestHead(method: .post, target: "/a?b=c", headers: ["Host": "example.com", "X-A": "1"])
        try HTTP1Serializer.writeRequestHead(head, framing: .contentLength(3), into: &buffer)
        buffer += Array("abc".utf8)
        #expect(text(buffer) == "POST /a?b=c HTTP/1.1\r\nHost: example.com\r\nX-A: 1\r\nContent-Length: 3\r\n\r\nabc")
    }

    @Test func responseHeadAppends() throws {
        var buffer = Array("prefix|".utf8)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Length", value: "99")
        headers.add(name: "Server", value: "wire")
        try HTTP1Serializer.writeResponseHead(
            HTTPResponseHead(status: .notFound, headers: headers), framing: .chunked, into: &buffer)
        #expect(text(buffer) == "prefix|HTTP/1.1 404 Not Found\r\nServer: wire\r\nTransfer-Encoding: chunked\r\n\r\n")
    }

    @Test func chunkedBody() throws {
        var buffer: [UInt8] = []
        try HTTP1Serializer.writeChunk(Array(repeating: UInt8(ascii: "x"), count: 26), into: &buffer)
        try HTTP1Serializer.writeChunk([], into: &buffer)
        try HTTP1Serializer.writeChunk(Array("hi".utf8), extensions: ";a=\"b c\"", into: &buffer)
        try HTTP1Serializer.writeLastChunk(trailers: ["Digest": "x"], into: &buffer)
        #expect(text(buffer) == "1a\r\n" + String(repeating: "x", count: 26) + "\r\n2;a=\"b c\"\r\nhi\r\n0\r\nDigest: x\r\n\r\n")
    }

    /// The one home of chunk-size framing, in both buffer kinds: lowercase hex without leading zeros, then CRLF.
    @Test(arguments: [
        (1, "1"), (15, "f"), (16, "10"), (255, "ff"), (4096, "1000"), (0, "0"),
        (Int.max >> 4, "7ffffffffffffff"), (Int.max, "7fffffffffffffff"),
    ])
    func chunkHeads(_ size: Int, _ hex: String) {
        var buffer = ByteBuffer(string: "prefix|")
        HTTP1Serializer.appendChunkHead(size: size, to: &buffer)
        #expect(String(decoding: buffer.readableBytesArray, as: UTF8.self) == "prefix|\(hex)\r\n")
        var bytes = Array("prefix|".utf8)
        HTTP1Serializer.appendChunkHead(size: size, extensions: ";x=1", to: &bytes)
        #expect(text(bytes) == "prefix|\(hex);x=1\r\n")
    }

    @Test(arguments: [
        (HTTPRequestHead(method: HTTPMethod("GE T"), target: "/"), "invalid_method"),
        (HTTPRequestHead(method: HTTPMethod(""), target: "/"), "invalid_method"),
        (HTTPRequestHead(method: .get, target: "/a\r\nX: y"), "invalid_target"),
        (HTTPRequestHead(method: .get, target: "/a b"), "invalid_target"),
        (HTTPRequestHead(method: .get, target: "/a\u{0}"), "invalid_target"),
        (HTTPRequestHead(method: .get, target: ""), "invalid_target"),
        (HTTPRequestHead(method: .get, target: "/", headers: ["X Y": "1"]), "invalid_field_name"),
        (HTTPRequestHead(method: .get, target: "/", headers: ["X:": "1"]), "invalid_field_name"),
        (HTTPRequestHead(method: .get, target: "/", headers: ["": "1"]), "invalid_field_name"),
        (HTTPRequestHead(method: .get, target: "/", headers: ["X": "a\r\nInjected: 1"]), "invalid_field_value"),
        (HTTPRequestHead(method: .get, target: "/", headers: ["X": "a\nb"]), "invalid_field_value"),
        (HTTPRequestHead(method: .get, target: "/", headers: ["X": "a\u{0}b"]), "invalid_field_value"),
        (HTTPRequestHead(method: .get, target: "/", headers: ["X": "a\rb"]), "invalid_field_value"),
    ])
    func refusesUnsafeRequests(head: HTTPRequestHead, kind: String) {
        var buffer = Array("keep".utf8)
        let error = #expect(throws: HTTP1SerializationError.self) {
            try HTTP1Serializer.writeRequestHead(head, into: &buffer)
        }
        #expect(error?.kind.name == kind)
        #expect(buffer == Array("keep".utf8))
    }

    @Test func refusesUnsafeResponses() {
        var buffer: [UInt8] = []
        #expect(throws: HTTP1SerializationError.self) {
            try HTTP1Serializer.writeResponseHead(HTTPResponseHead(status: .ok, reasonPhrase: "OK\r\nX: y"), into: &buffer)
        }
        #expect(throws: HTTP1SerializationError.self) {
            try HTTP1Serializer.writeResponseHead(HTTPResponseHead(status: HTTPStatus(code: 42)), into: &buffer)
        }
        #expect(throws: HTTP1SerializationError.self) {
            try HTTP1Serializer.writeChunk(Array("x".utf8), extensions: "\r\n0\r\n\r\n", into: &buffer)
        }
        #expect(throws: HTTP1SerializationError.self) {
            try HTTP1Serializer.writeLastChunk(trailers: ["X": "a\r\n"], into: &buffer)
        }
        #expect(buffer.isEmpty)
    }

    /// Parse, serialize, parse again: the same message.
    @Test(arguments: [
        "GET /index.html?q=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\nX-Empty:\r\n\r\n",
        "POST /form HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
        "PUT /up HTTP/1.0\r\nTransfer-Encoding-Not: x\r\nContent-Length: 0\r\n\r\n",
        "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n",
    ])
    func requestRoundTrip(text: String) throws {
        let first = try parseRequest(Array(text.utf8))
        var wire: [UInt8] = []
        let framing: HTTP1Serializer.BodyFraming =
            first.head.headers.contains(name: "transfer-encoding") ? .chunked : .asInHeaders
        try HTTP1Serializer.writeRequestHead(first.head, framing: framing, into: &wire)
        if framing == .chunked {
            try HTTP1Serializer.writeChunk(first.body, into: &wire)
            try HTTP1Serializer.writeLastChunk(trailers: first.trailers, into: &wire)
        } else {
            wire += first.body
        }
        let second = try parseRequest(wire)
        #expect(second.head == first.head)
        #expect(second.body == first.body)
        #expect(second.trailers == first.trailers)
    }

    @Test func responseRoundTrip() throws {
        let text = "HTTP/1.1 201 Created\r\nLocation: /x\r\nContent-Length: 2\r\n\r\nok"
        var parser = HTTP1Parser(kind: .response)
        let bytes = Array(text.utf8)
        guard case .responseHead(let head) = try parser.parse(bytes.span).event else {
            Issue.record("no head")
            return
        }
        var wire: [UInt8] = []
        try HTTP1Serializer.writeResponseHead(head, into: &wire)
        wire += Array("ok".utf8)
        #expect(wire == bytes)
    }

    private func parseRequest(_ bytes: [UInt8]) throws -> (head: HTTPRequestHead, body: [UInt8], trailers: HTTPHeaders?) {
        var parser = HTTP1Parser(kind: .request)
        var buffer = bytes
        var head: HTTPRequestHead?
        var body: [UInt8] = []
        var trailers: HTTPHeaders?
        loop: while true {
            let step = try parser.parse(buffer.span)
            switch step.event {
            case .requestHead(let parsed): head = parsed
            case .body(let range): body += buffer[range]
            case .end(let parsedTrailers):
                trailers = parsedTrailers
                break loop
            case .responseHead, .upgraded, nil:
                Issue.record("unexpected \(String(describing: step.event))")
                break loop
            }
            buffer.removeFirst(step.consumed)
        }
        return (try #require(head), body, trailers)
    }
}
