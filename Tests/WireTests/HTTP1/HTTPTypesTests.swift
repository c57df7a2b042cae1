import Testing

import Wire

struct HTTPHeadersTests {
    @Test func caseInsensitiveLookupPreservesSpelling() {
        var headers: HTTPHeaders = ["Content-Type": "text/plain", "X-Multi": "1"]
        headers.add(name: "x-multi", value: "2")
        #expect(headers["content-type"] == ["text/plain"])
        #expect(headers["X-MULTI"] == ["1", "2"])
        #expect(headers.first(name: "x-Multi") == "1")
        #expect(headers.first(name: "missing") == nil)
        #expect(headers.name(at: 2) == "x-multi")
        #expect(headers.count == 3)
    }

    @Test func replaceAndRemove() {
        var headers: HTTPHeaders = ["A": "1", "B": "2", "a": "3"]
        headers.replaceOrAdd(name: "A", value: "new")
        #expect(headers.map { "\($0.name)=\($0.value)" } == ["B=2", "A=new"])
        headers.remove(name: "b")
        #expect(headers.map { "\($0.name)=\($0.value)" } == ["A=new"])
        for index in 0..<50 { headers.replaceOrAdd(name: "Counter", value: String(index)) }
        #expect(headers["counter"] == ["49"])
        #expect(headers.count == 2)
    }

    @Test func byteViews() {
        let headers: HTTPHeaders = ["Host": "example.com"]
        let length = headers.withFirstValueBytes(name: "host") { $0.count }
        #expect(length == 11)
        let first = headers.withNameBytes(at: 0) { $0[0] }
        #expect(first == UInt8(ascii: "H"))
    }

    @Test func tokens() {
        let headers: HTTPHeaders = ["Connection": "keep-alive , Upgrade", "connection": "TE"]
        #expect(headers.containsToken("upgrade", inFieldsNamed: "CONNECTION"))
        #expect(headers.containsToken("te", inFieldsNamed: "connection"))
        #expect(!headers.containsToken("keep", inFieldsNamed: "connection"))
    }

    @Test func equalityIsOrderedAndExact() {
        let ab: HTTPHeaders = ["A": "1", "B": "2"]
        let sameAB: HTTPHeaders = ["A": "1", "B": "2"]
        let ba: HTTPHeaders = ["B": "2", "A": "1"]
        let upper: HTTPHeaders = ["A": "1"]
        let lower: HTTPHeaders = ["a": "1"]
        #expect(ab == sameAB)
        #expect(ab != ba)
        #expect(upper != lower)
        #expect(ab.hashValue == sameAB.hashValue)
    }

    @Test func copiesShareStorageUntilOneChanges() {
        let defaults: HTTPHeaders = ["Accept-Language": "en", "User-Agent": "wire"]
        var copy = defaults
        #expect(copy.sharesStorage(with: defaults) && copy == defaults)
        // Built apart: equal by their bytes, not by their storage.
        let rebuilt: HTTPHeaders = ["Accept-Language": "en", "User-Agent": "wire"]
        #expect(!rebuilt.sharesStorage(with: defaults) && rebuilt == defaults)
        copy.replaceOrAdd(name: "User-Agent", value: "curl")
        #expect(!copy.sharesStorage(with: defaults) && copy != defaults)
        #expect(!HTTPHeaders().sharesStorage(with: HTTPHeaders()) && HTTPHeaders() == HTTPHeaders())
    }

    @Test func parsedHeadersUseCompactStorage() throws {
        var parser = HTTP1Parser(kind: .request)
        let bytes = Array("GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n\r\n".utf8)
        guard case .requestHead(let head) = try parser.parse(bytes.span).event else {
            Issue.record("no head")
            return
        }
        #expect(head.headers.map { "\($0.name)=\($0.value)" } == ["Host=a", "X-A=b"])
        var copy = head.headers
        copy.add(name: "Z", value: "z")
        #expect(copy.count == 3)
        #expect(head.headers.count == 2)
    }
}

struct HTTPMethodTests {
    @Test(arguments: [
        (HTTPMethod.get, true, true), (.head, true, true), (.options, true, true), (.trace, true, true),
        (.put, false, true), (.delete, false, true), (.post, false, false), (.patch, false, false),
        (.connect, false, false),
    ])
    func properties(method: HTTPMethod, safe: Bool, idempotent: Bool) {
        #expect(method.isSafe == safe)
        #expect(method.isIdempotent == idempotent)
        #expect(HTTPMethod(method.rawValue) == method)
    }

    @Test func methodsAreCaseSensitive() {
        #expect(HTTPMethod("get") != .get)
        #expect(HTTPMethod("GET") == .get)
    }

    @Test func versionAndStatus() {
        #expect(HTTPVersion.http1_1.description == "HTTP/1.1")
        #expect(HTTPVersion.http1_0 < .http1_1)
        #expect(HTTPStatus.continue.isInterim)
        #expect(!HTTPStatus.switchingProtocols.isInterim)
        #expect(HTTPStatus.notModified.forbidsContent)
        #expect(HTTPStatus(code: 503).responseClass == .serverError)
    }

    @Test func everyRegisteredStatusHasAConstantAndItsReasonPhrase() {
        let codes = HTTPStatus.registered.map(\.code)
        #expect(codes.count == 61)
        #expect(codes == codes.sorted() && Set(codes).count == codes.count)
        #expect(!codes.contains(306) && !codes.contains(418))
        for status in HTTPStatus.registered {
            #expect(!status.defaultReasonPhrase.isEmpty, "\(status)")
            #expect(status.responseClass != .invalid)
        }
        #expect(HTTPStatus.tooManyRequests.code == 429)
        #expect(HTTPStatus.unprocessableContent.defaultReasonPhrase == "Unprocessable Content")
        #expect(HTTPStatus.imUsed.defaultReasonPhrase == "IM Used")
        #expect(HTTPStatus(code: 299).defaultReasonPhrase.isEmpty)
    }
}
