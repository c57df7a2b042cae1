import Dispatch
import Foundation
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireClient
import WireTestSupport

/// `HTTPSessionManager`: the base URL's normalisation, resolution, where parameters go, per-call headers over
/// the serializer's, and failures before sending.
@Suite struct HTTPSessionManagerTests {
    @Test func aNonEmptyBasePathGetsATerminalSlashAndTheQueryStays() throws {
        #expect(try HTTPSessionManager(baseURL: "http://example.com/v1").baseURL?.absoluteString == "http://example.com/v1/")
        #expect(try HTTPSessionManager(baseURL: "http://example.com/v1/").baseURL?.absoluteString == "http://example.com/v1/")
        #expect(try HTTPSessionManager(baseURL: "http://h/v1?x=1").baseURL?.absoluteString == "http://h/v1/?x=1")
        #expect(try HTTPSessionManager(baseURL: "http://example.com").baseURL?.absoluteString == "http://example.com")
        #expect(try HTTPSessionManager().baseURL == nil)
    }

    @Test func anUnusableBaseIsBadURL() {
        for base in ["not a url", "/relative/only", "http://"] {
            #expect(throws: ClientError(.badURL), "\(base)") { try HTTPSessionManager(baseURL: base) }
        }
    }

    @Test func pathsResolveAsAFNetworkingDocuments() throws {
        let manager = try HTTPSessionManager(baseURL: "http://example.com/v1/")
        let cases: [(String, String)] = [
            ("foo", "http://example.com/v1/foo"),
            ("foo?bar=baz", "http://example.com/v1/foo?bar=baz"),
            ("/foo", "http://example.com/foo"),
            ("foo/", "http://example.com/v1/foo/"),
            ("/foo/", "http://example.com/foo/"),
            ("http://example2.com/", "http://example2.com/"),
            ("", "http://example.com/v1/"),
            ("a b/é", "http://example.com/v1/a%20b/%C3%A9"),
        ]
        for (path, expected) in cases {
            #expect(try manager.request(method: "GET", path: path).url.absoluteString == expected, "\(path)")
        }
    }

    /// Paths resolved lately are remembered (eight of them, replaced in turn): each path, asked again in any order
    /// and past the memory's size, still gives its own URL, and one that failed still fails.
    @Test func rememberedPathsResolveToTheirOwnURLs() throws {
        let manager = try HTTPSessionManager(baseURL: "http://example.com/v1/")
        let paths = (0..<20).map { "items/\($0)" } + ["/root", "http://other.example/x", ""]
        for round in 0..<3 {
            for path in (round == 1 ? paths.reversed() : paths) {
                let expected =
                    path.hasPrefix("http:")
                    ? path
                    : path.hasPrefix("/") ? "http://example.com\(path)" : "http://example.com/v1/\(path)"
                #expect(try manager.request(method: "GET", path: path).url.absoluteString == expected, "\(path)")
                #expect(try manager.request(method: "GET", path: path).url.absoluteString == expected, "\(path), again")
            }
        }
        // Canonically equivalent text is not the same path: escaping works on bytes, and so does the memory.
        let equivalent = [
            ("/users/K", "/users/K"), ("/users/\u{212A}", "/users/%E2%84%AA"),
            ("/caf\u{E9}", "/caf%C3%A9"), ("/cafe\u{301}", "/cafe%CC%81"),
        ]
        for _ in 0..<2 {
            for (path, expected) in equivalent {
                #expect(try manager.request(method: "GET", path: path).url.absoluteString == "http://example.com\(expected)")
            }
        }
        let bare = try HTTPSessionManager()
        for _ in 0..<2 {
            #expect(throws: ClientError.self) { try bare.request(method: "GET", path: "items/1") }
            #expect(try bare.request(method: "GET", path: "http://h/a").url.absoluteString == "http://h/a")
        }
    }

    /// A verb without parameters or headers of its own, called again, gets the request built the last time: only
    /// for the same method and path bytes, never across a replaced serializer, and never from a serializer of the
    /// caller's, which may add what changes from call to call.
    @Test func aRepeatedPlainRequestIsRememberedUntilTheSerializerChanges() throws {
        let manager = try HTTPSessionManager(baseURL: "http://example.com/v1/")
        let first = try manager.request(method: "GET", path: "items")
        #expect(try manager.request(method: "GET", path: "items").headers == first.headers)
        #expect(try manager.request(method: "POST", path: "items").method == "POST")
        #expect(try manager.request(method: "POST", path: "items").body != nil, "a POST's empty form body")
        #expect(try manager.request(method: "GET", path: "items").body == nil)
        #expect(try manager.request(method: "GET", path: "items/\u{212A}").url.absoluteString.hasSuffix("%E2%84%AA"))
        #expect(try manager.request(method: "GET", path: "items/K").url.absoluteString.hasSuffix("items/K"))
        #expect(try manager.request(method: "GET", path: "items", parameters: ["a": 1]).url.query == "a=1")
        #expect(try manager.request(method: "GET", path: "items").url.query == nil)
        #expect(try manager.request(method: "GET", path: "items", headers: ["X-Call": "1"]).headers["X-Call"] == ["1"])
        #expect(try manager.request(method: "GET", path: "items").headers["X-Call"] == [])

        manager.requestSerializer.setValue("two", forHTTPHeaderField: "X-Version")
        #expect(try manager.request(method: "GET", path: "items").headers["X-Version"] == ["two"])
        manager.requestSerializer.timeoutInterval = .seconds(5)
        #expect(try manager.request(method: "GET", path: "items").timeoutInterval == .seconds(5))
        #expect(try manager.request(method: "GET", path: "items").headers["X-Version"] == ["two"])

        let counting = CountingSerializer()
        manager.requestSerializer = counting
        for expected in 1...3 {
            #expect(try manager.request(method: "GET", path: "items").headers["X-Count"] == ["\(expected)"])
        }
    }

    @Test func parametersGoIntoTheURIForGetHeadDeleteAndIntoTheBodyOtherwise() throws {
        let manager = try HTTPSessionManager(baseURL: "http://example.com/v1/")
        let parameters: Parameters = ["b": 2, "a": "x y"]
        for method in ["GET", "HEAD", "DELETE"] {
            let request = try manager.request(method: method, path: "items", parameters: parameters)
            #expect(request.url.absoluteString == "http://example.com/v1/items?a=x%20y&b=2", "\(method)")
            #expect(request.body == nil)
        }
        for method in ["POST", "PUT", "PATCH"] {
            let request = try manager.request(method: method, path: "items", parameters: parameters)
            #expect(request.url.absoluteString == "http://example.com/v1/items", "\(method)")
            guard case .data(let body)? = request.body else {
                Issue.record("\(method): no form body")
                continue
            }
            #expect(String(decoding: body, as: UTF8.self) == "a=x%20y&b=2")
            #expect(request.headers.first(name: "content-type") == "application/x-www-form-urlencoded")
        }
    }

    @Test func perCallHeadersReplaceTheSerializersFieldsOfTheSameName() throws {
        let manager = try HTTPSessionManager(baseURL: "http://example.com/")
        var serializer = HTTPRequestSerializer()
        serializer.setValue("from-serializer", forHTTPHeaderField: "X-Token")
        manager.requestSerializer = serializer
        let request = try manager.request(
            method: "GET", path: "a",
            headers: ["user-agent": "mine", "x-token": "per-call", "X-Extra": "1"])
        #expect(request.headers["User-Agent"] == ["mine"])
        #expect(request.headers["X-Token"] == ["per-call"])
        #expect(request.headers["X-Extra"] == ["1"])
        #expect(request.headers.contains(name: "Accept-Language"), "the serializer's other defaults stay")
    }

    /// A request that cannot be built: nil back, then `failure(nil, error)` once, after the verb returned, on the
    /// completion queue.
    @Test func aRequestThatCannotBeBuiltFailsLaterOnTheCompletionQueue() async throws {
        let manager = try HTTPSessionManager()
        let queue = DispatchQueue(label: "test.completion")
        queue.suspend()
        manager.completionQueue = queue
        let calls = Lock<[ClientError]>([])
        let task = manager.get(
            "relative/without/base", success: { _, _ in Issue.record("success without a request") },
            failure: { task, error in
                #expect(task == nil)
                calls.withLock { $0.append(error) }
            })
        #expect(task == nil)
        #expect(calls.withLock { $0.isEmpty }, "the failure must wait until the verb returned")
        queue.resume()
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        #expect(calls.withLock { $0.map(\.code) } == [.badURL])
    }
}

extension HTTPSessionManagerTests {
    /// The verbs against a real server: each sends at once (the task is resumed), the async forms return value,
    /// response and data.
    @Suite(.sharedIO(minutes: 1)) struct Loopback {
        @Test func everyVerbSendsItsMethodTargetAndBody() async throws {
            try await LoopbackServer.with({ _, writer in
                try await writer.reply(200, #"{"ok":true}"#, headers: ["Content-Type": "application/json"])
            }) { server in
                let manager = try HTTPSessionManager(baseURL: server.url("/v1").absoluteString)
                let got = try await manager.get("items", parameters: ["q": "a b"])
                #expect(got.value as? JSONValue == .object(["ok": .bool(true)]))
                #expect(got.response?.statusCode == 200)
                #expect(got.data.map { String(decoding: $0, as: UTF8.self) } == #"{"ok":true}"#)
                _ = try await manager.post("items", parameters: ["a": 1])
                _ = try await manager.put("items/1", parameters: ["a": 2])
                _ = try await manager.patch("items/1", parameters: ["a": 3])
                _ = try await manager.delete("/items/1", parameters: ["force": true])
                _ = try await manager.head("items")
                let seen = server.requests.map { "\($0.method) \($0.target) \(String(decoding: $0.body, as: UTF8.self))" }
                #expect(
                    seen == [
                        "GET /v1/items?q=a%20b ", "POST /v1/items a=1", "PUT /v1/items/1 a=2", "PATCH /v1/items/1 a=3",
                        "DELETE /items/1?force=1 ", "HEAD /v1/items ",
                    ])
            }
        }

        @Test func theUserAgentIsTheSerializersOrNone() async throws {
            try await LoopbackServer.with({ _, writer in try await writer.reply(204) }) { server in
                let manager = try HTTPSessionManager(baseURL: server.url("/").absoluteString)
                _ = try await manager.get("default")
                var serializer = HTTPRequestSerializer()
                serializer.setValue(nil, forHTTPHeaderField: "User-Agent")
                manager.requestSerializer = serializer
                _ = try await manager.get("none")
                let agents = server.requests.map { $0.headers["User-Agent"] }
                #expect(agents.count == 2)
                #expect(agents.first?.count == 1 && agents.first?.first?.hasPrefix("Wire/") != true, "\(agents)")
                #expect(agents.last == [], "a removed User-Agent is not replaced by Wire's: \(agents)")
            }
        }

        @Test func callbackVerbsAreResumedAndReportTaskAndValue() async throws {
            try await LoopbackServer.with({ record, writer in
                if record.target.hasPrefix("/missing") {
                    try await writer.reply(404, #"{"error":"no"}"#, headers: ["Content-Type": "application/json"])
                } else {
                    try await writer.reply(200, #"[1,2]"#, headers: ["Content-Type": "application/json"])
                }
            }) { server in
                let manager = try HTTPSessionManager(baseURL: server.url("/").absoluteString)
                let value: JSONValue? = await withCheckedContinuation { continuation in
                    let task = manager.get(
                        "list", success: { _, value in continuation.resume(returning: value as? JSONValue) },
                        failure: { _, error in
                            Issue.record("\(error)")
                            continuation.resume(returning: nil)
                        })
                    #expect(task?.state == .running)
                }
                #expect(value == .array([.int(1), .int(2)]))
                let failure: ClientError? = await withCheckedContinuation { continuation in
                    manager.get(
                        "missing", success: { _, _ in continuation.resume(returning: nil) },
                        failure: { task, error in
                            #expect(task != nil)
                            continuation.resume(returning: error)
                        })
                }
                #expect(failure?.code == .unacceptableStatusCode(404))
                #expect(failure?.response?.statusCode == 404)
                let headed: Bool = await withCheckedContinuation { continuation in
                    manager.head(
                        "list", success: { _ in continuation.resume(returning: true) },
                        failure: { _, _ in continuation.resume(returning: false) })
                }
                #expect(headed)
            }
        }
    }
}

/// A serializer of the caller's that numbers the requests it builds: a manager must ask it every time.
private final class CountingSerializer: RequestSerializer {
    private let count = Mutex(0)
    private let settings = Mutex(HTTPRequestSerializer())

    var httpSerializer: HTTPRequestSerializer {
        get { settings.withLock { $0 } }
        set { settings.withLock { $0 = newValue } }
    }

    func request(bySerializing request: ClientRequest, parameters: Parameters?) throws(ClientError) -> ClientRequest {
        var numbered = try httpSerializer.request(bySerializing: request, parameters: parameters)
        numbered.headers.replaceOrAdd(name: "X-Count", value: "\(count.withLock { $0 += 1; return $0 })")
        return numbered
    }
}
