import FoundationEssentials
import Testing
import Wire
import WireClient

/// The shared values: literals, `ClientRequest`'s header helpers, and `RequestBody`'s mapping onto Wire's bodies.
@Suite struct SharedValueTests {
    @Test func parameterValueIsExpressibleByEveryLiteral() {
        let parameters: Parameters = ["s": "x", "i": 2, "d": 0.5, "b": true, "n": nil, "a": [1, "two"], "o": ["k": "v"]]
        #expect(
            parameters
                == .dictionary([
                    "s": .string("x"), "i": .int(2), "d": .double(0.5), "b": .bool(true), "n": .null,
                    "a": .array([.int(1), .string("two")]), "o": .dictionary(["k": .string("v")]),
                ]))
        let json: JSONValue = ["a": [1, 2.5, "x", true, nil]]
        #expect(json["a"]?[1] == .double(2.5))
        #expect(json["a"]?[9] == nil)
        #expect(json["missing"] == nil)
    }

    @Test func requestDefaultsAndHeaderHelpers() {
        var request = ClientRequest(url: URL(string: "http://example.com/")!)
        #expect(request.method == "GET")
        #expect(request.body == nil && request.timeoutInterval == nil && request.cachePolicy == nil)
        #expect(request.shouldHandleCookies == nil && request.allowsCellularAccess == nil)
        #expect(request.shouldUsePipelining == nil && request.networkServiceType == nil)
        request.setValue("a", forHTTPHeaderField: "X-One")
        request.setValue("b", forHTTPHeaderField: "x-one")
        #expect(request.headers.count == 1)
        #expect(request.value(forHTTPHeaderField: "X-ONE") == "b")
        request.setValue(nil, forHTTPHeaderField: "X-One")
        #expect(request.headers.isEmpty)
    }

    @Test func dataAndFileBodiesMapOntoWireBodies() {
        if case .bytes(let buffer) = RequestBody.data(Data("abc".utf8)).wireBody {
            #expect(buffer.readableBytesArray == Array("abc".utf8))
        } else {
            Issue.record("data must map to .bytes")
        }
        if case .file(let path) = RequestBody.file(path: "/tmp/x").wireBody {
            #expect(path == "/tmp/x")
        } else {
            Issue.record("file must map to .file")
        }
        #expect(RequestBody.data(Data(count: 3)).knownLength == 3)
        #expect(RequestBody.file(path: "/tmp/x").knownLength == nil)
    }

    @Test func aStreamBodyIsReplayable() async throws {
        let body = RequestBody.stream(length: 6) {
            AsyncThrowingStream { continuation in
                continuation.yield(Data("abc".utf8))
                continuation.yield(Data("def".utf8))
                continuation.finish()
            }
        }
        #expect(body.knownLength == 6)
        guard case .replayable(let length, let makeChunks) = body.wireBody else {
            Issue.record("a stream must map to .replayable")
            return
        }
        #expect(length == 6)
        for _ in 0..<2 {
            var bytes: [UInt8] = []
            for try await chunk in makeChunks() { bytes += chunk.readableBytesArray }
            #expect(bytes == Array("abcdef".utf8))
        }
    }
}
