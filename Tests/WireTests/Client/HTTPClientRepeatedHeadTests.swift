import Testing
import Wire

extension IOSuite {
    /// The client reuses the head it serialized last for a request without a body that matches it exactly (its URL,
    /// method and fields): every request must still go out as its own, whichever of them differs from the one before.
    @Suite struct HTTPClientRepeatedHeadTests {
        /// What the server saw: the method, the target and every field, in order.
        static func echo(_ head: HTTPRequestHead) -> String {
            let fields = head.headers.indices.map { "\(head.headers.name(at: $0)): \(head.headers.value(at: $0))" }
            return ([head.method.rawValue + " " + head.target] + fields).joined(separator: " | ")
        }

        @Test func eachRequestGoesOutAsItsOwnWhenOnlyOnePartDiffers() async throws {
            let (seen, expected) = try await withLoopbackRig { rig in
                let port = try await rig.server { request, response in
                    var headers = HTTPHeaders()
                    headers.add(name: "X-Echo", value: Self.echo(request.head))
                    try await response.respond(HTTPResponseHead(status: .ok, headers: headers), body: ByteBuffer(string: "."))
                }
                let origin = "http://127.0.0.1:\(port)"
                var configuration = HTTPClientConfiguration()
                configuration.userAgent = nil
                let client = try rig.client(configuration)
                func request(_ method: HTTPMethod, _ path: String, _ fields: [(String, String)] = []) -> HTTPClientRequest {
                    var request = HTTPClientRequest(url: origin + path)
                    request.method = method
                    for (name, value) in fields { request.headers.add(name: name, value: value) }
                    return request
                }
                let host = "Host: 127.0.0.1:\(port)"
                let sequence: [(HTTPClientRequest, String)] = [
                    (request(.get, "/a"), "GET /a | \(host)"),
                    (request(.get, "/a"), "GET /a | \(host)"),
                    (request(.get, "/a", [("X-Token", "1")]), "GET /a | X-Token: 1 | \(host)"),
                    (request(.get, "/a", [("X-Token", "2")]), "GET /a | X-Token: 2 | \(host)"),
                    (request(.get, "/a", [("x-token", "2")]), "GET /a | x-token: 2 | \(host)"),
                    (request(.head, "/a", [("x-token", "2")]), "HEAD /a | x-token: 2 | \(host)"),
                    (request(.get, "/b?q=1"), "GET /b?q=1 | \(host)"),
                    (request(.post, "/b?q=1"), "POST /b?q=1 | \(host) | Content-Length: 0"),
                    (request(.get, "/a"), "GET /a | \(host)"),
                ]
                var seen: [String] = []
                for (request, _) in sequence {
                    let response = try await client.execute(request)
                    _ = try await response.body.collect(upTo: 1024)
                    seen.append(response.headers.first(name: "x-echo") ?? "")
                }
                return (seen, sequence.map(\.1))
            }
            #expect(seen == expected)
        }

        /// Texts that Swift's `==` calls equal but whose bytes differ (`;` and the Greek question mark U+037E, `K` and
        /// the Kelvin sign U+212A) are different requests: the server refuses the non-ASCII target, and the serializer
        /// the non-token method, where a cache comparing strings by `==` would send the earlier request's bytes again.
        @Test func canonicallyEquivalentTextsAreDifferentRequests() async throws {
            let seen = try await withLoopbackRig { rig in
                let port = try await rig.server { request, response in
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: Self.echo(request.head)))
                }
                let origin = "http://127.0.0.1:\(port)"
                let client = try rig.client()
                @Sendable func send(_ request: HTTPClientRequest) async -> String {
                    do {
                        let response = try await client.execute(request)
                        let body = try await response.body.collect(upTo: 1024)
                        // The echo's request line (a refusal's body is not an echo, and may be empty).
                        let echo = String(decoding: body.readableBytesArray, as: UTF8.self).split(separator: " | ").first
                        return "\(response.status.code) " + (echo.map(String.init) ?? "")
                    } catch let error as HTTPClientError {
                        return "\(error.code)"
                    } catch {
                        return "\(error)"
                    }
                }
                var seen: [String] = []
                // From text (the URL text cache, then the head cache), then from parsed URLs (the head cache).
                seen.append(await send(HTTPClientRequest(url: origin + "/a;b")))
                seen.append(await send(HTTPClientRequest(url: origin + "/a\u{37E}b")))
                seen.append(await send(HTTPClientRequest(url: try HTTPURL(origin + "/a;b"))))
                seen.append(await send(HTTPClientRequest(url: try HTTPURL(origin + "/a\u{37E}b"))))
                seen.append(await send(HTTPClientRequest(url: origin + "/k", method: HTTPMethod("K"))))
                seen.append(await send(HTTPClientRequest(url: origin + "/k", method: HTTPMethod("\u{212A}"))))
                return seen
            }
            #expect(seen[0] == "200 GET /a;b")
            #expect(seen[1].hasPrefix("400"), "the server saw the non-ASCII target: \(seen[1])")
            #expect(seen[2] == "200 GET /a;b")
            #expect(seen[3].hasPrefix("400"), "the server saw the non-ASCII target: \(seen[3])")
            #expect(seen[4] == "200 K /k")
            #expect(seen[5] == "\(HTTPClientError.Code.invalidRequest)", "the serializer refused the method: \(seen[5])")
        }

        /// One URL straight to its origin, then through a forwarding proxy: the pool differs, and so does the head
        /// (an absolute-form target), though the URL, method and fields are the same.
        @Test func theSameRequestThroughAProxyIsWrittenForTheProxy() async throws {
            let (seen, url) = try await withLoopbackRig { rig in
                let echoTarget: @Sendable (HTTPServerRequest, HTTPResponseWriter) async throws -> Void = { request, response in
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: request.head.target))
                }
                let originPort = try await rig.server(handler: echoTarget)
                let proxyPort = try await rig.server(handler: echoTarget)
                let url = "http://127.0.0.1:\(originPort)/x"
                let client = try rig.client()
                var seen: [String] = []
                for viaProxy in [false, true, false] {
                    var request = HTTPClientRequest(url: url)
                    if viaProxy { request.proxy = .proxy(try Proxy(parsing: "http://127.0.0.1:\(proxyPort)")) }
                    let body = try await client.execute(request).body.collect(upTo: 1024)
                    seen.append(String(decoding: body.readableBytesArray, as: UTF8.self))
                }
                return (seen, url)
            }
            #expect(seen == ["/x", url, "/x"])
        }

        /// Two clients to one server, each with its own `User-Agent`: a head is never taken from another client.
        @Test func aHeadStaysWithItsClient() async throws {
            let seen = try await withLoopbackRig { rig in
                let port = try await rig.server { request, response in
                    let agent = request.head.headers.first(name: "user-agent") ?? "-"
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: agent))
                }
                let url = "http://127.0.0.1:\(port)/same"
                var first = HTTPClientConfiguration()
                first.userAgent = "first/1"
                var second = HTTPClientConfiguration()
                second.userAgent = "second/2"
                let clients = [try rig.client(first), try rig.client(second)]
                var seen: [String] = []
                for client in clients + clients {
                    let body = try await client.execute(HTTPClientRequest(url: url)).body.collect(upTo: 1024)
                    seen.append(String(decoding: body.readableBytesArray, as: UTF8.self))
                }
                return seen
            }
            #expect(seen == ["first/1", "second/2", "first/1", "second/2"])
        }
    }
}
