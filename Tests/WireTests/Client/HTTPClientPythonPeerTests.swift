import Testing
import Wire

extension IOSuite {
    /// The client against a real peer: Python's http.server speaking HTTP/1.1 with keep-alive.
    @Suite struct HTTPClientPythonPeerTests {
        static func withPeer(_ body: @escaping @Sendable (HTTPClient, String) async throws -> Void) async throws {
            let (peer, port) = try await startPythonPeer()
            defer { peer.stop() }
            let group = try EventLoopGroup(loopCount: 1)
            let client = try HTTPClient(group: group)
            do {
                try await withTimeout(seconds: 30) { try await body(client, "http://127.0.0.1:\(port)") }
            } catch {
                await client.shutdown()
                await group.shutdownGracefully()
                throw error
            }
            await client.shutdown()
            await group.shutdownGracefully()
        }

        @Test func getCollectsTheBodyAndReusesTheConnection() async throws {
            try await Self.withPeer { client, base in
                let first = try await client.execute(HTTPClientRequest(url: "\(base)/bytes/1000"))
                #expect(first.status.code == 200)
                let body = try await first.body.collect(upTo: 1 << 20)
                #expect(body.readableBytesArray == (0..<1000).map { UInt8($0 % 251) })
                #expect(first.metrics.snapshot.isReusedConnection == false)
                #expect(first.metrics.snapshot.timings.connected != nil)
                let second = try await client.execute(HTTPClientRequest(url: "\(base)/bytes/10"))
                _ = try await second.body.collect(upTo: 100)
                #expect(second.metrics.snapshot.isReusedConnection == true)
                #expect(second.metrics.snapshot.timings.connected == nil)
                let timings = second.metrics.snapshot.timings
                #expect(timings.firstByte != nil && timings.lastByte != nil && timings.requestSent != nil)
            }
        }

        @Test(arguments: [HTTPMethod.get, .post, .put, .delete, .patch])
        func methodsAndBodies(method: HTTPMethod) async throws {
            try await Self.withPeer { client, base in
                for size in [0, 1, 1 << 20] {
                    let payload = ByteBuffer(bytes: (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) })
                    let request = HTTPClientRequest(
                        url: "\(base)/echo", method: method, body: method == .get ? nil : .bytes(payload))
                    let response = try await client.execute(request)
                    #expect(response.headers.first(name: "x-method") == method.rawValue)
                    let echoed = try await response.body.collect(upTo: 2 << 20)
                    #expect(echoed == (method == .get ? ByteBuffer() : payload))
                }
            }
        }

        @Test func requestsFromATaskPreferringTheClientsLoopStayOnItsThread() async throws {
            try await Self.withPeer { client, base in
                let loop = try #require(client.group).next()
                let results = await withTaskExecutorPreference(loop) { () async -> [Bool] in
                    var onLoop: [Bool] = []
                    for size in [10, 100_000, 3] {
                        // Every step resumes on the loop's thread: the response head, the body, the next lease.
                        guard let response = try? await client.execute(HTTPClientRequest(url: "\(base)/bytes/\(size)")) else {
                            return []
                        }
                        onLoop.append(loop.inEventLoop)
                        let body = try? await response.body.collect(upTo: 1 << 20)
                        onLoop.append(loop.inEventLoop && body?.readableBytes == size)
                    }
                    return onLoop
                }
                #expect(results == Array(repeating: true, count: 6))
            }
        }

        @Test func aRequestMadeFromAParsedURLGoesToItsTarget() async throws {
            try await Self.withPeer { client, base in
                let parsed = try HTTPURL("\(base)/bytes/7")
                var request = HTTPClientRequest(url: parsed)
                #expect(request.url == "\(base)/bytes/7")
                let response = try await client.execute(request)
                #expect(try await response.body.collect(upTo: 100).readableBytes == 7)
                #expect(response.url == parsed)
                // Text set afterwards replaces the parsed URL.
                request.url = "\(base)/bytes/3"
                let next = try await client.execute(request)
                #expect(try await next.body.collect(upTo: 100).readableBytes == 3)
                #expect(next.url.target == "/bytes/3")
            }
        }

        @Test func headHasNoBodyAndKeepsTheConnection() async throws {
            try await Self.withPeer { client, base in
                let head = try await client.execute(HTTPClientRequest(url: "\(base)/bytes/5000", method: .head))
                #expect(head.headers.first(name: "content-length") == "5000")
                #expect(try await head.body.collect(upTo: 10).readableBytes == 0)
                let next = try await client.execute(HTTPClientRequest(url: "\(base)/bytes/3"))
                #expect(try await next.body.collect(upTo: 10).readableBytes == 3)
                #expect(next.metrics.snapshot.isReusedConnection)
            }
        }

        @Test func chunkedResponseStreamsInChunks() async throws {
            try await Self.withPeer { client, base in
                let response = try await client.execute(HTTPClientRequest(url: "\(base)/chunked/100000"))
                var total = 0
                var chunks = 0
                for try await chunk in response.body {
                    total += chunk.readableBytes
                    chunks += 1
                }
                #expect(total == 100_000)
                #expect(chunks >= 1)
            }
        }

        @Test func streamedUploadOfUnknownLengthIsChunked() async throws {
            try await Self.withPeer { client, base in
                let parts = (0..<10).map { ByteBuffer(bytes: Array(repeating: UInt8($0), count: 10_000)) }
                let stream = AsyncThrowingStream<ByteBuffer, any Error> { continuation in
                    for part in parts { continuation.yield(part) }
                    continuation.finish()
                }
                let response = try await client.execute(
                    HTTPClientRequest(url: "\(base)/echo", method: .post, body: .stream(length: nil, stream)))
                let echoed = try await response.body.collect(upTo: 1 << 20)
                #expect(echoed.readableBytes == 100_000)
                #expect(echoed.readableBytesArray == parts.flatMap { $0.readableBytesArray })
            }
        }

        @Test func redirectsFollowAndRewriteMethods() async throws {
            try await Self.withPeer { client, base in
                // 302 turns POST into GET (and drops the body); 307 keeps both.
                let found = try await client.execute(
                    HTTPClientRequest(url: "\(base)/redirect/2/302", method: .post, body: .bytes(ByteBuffer(string: "data"))))
                #expect(found.status.code == 200)
                #expect(found.headers.first(name: "x-method") == "GET")
                #expect(found.metrics.snapshot.redirects == 3)
                #expect(found.url.target == "/echo")
                let temporary = try await client.execute(
                    HTTPClientRequest(url: "\(base)/redirect/1/307", method: .post, body: .bytes(ByteBuffer(string: "data"))))
                #expect(temporary.headers.first(name: "x-method") == "POST")
                #expect(try await temporary.body.collect(upTo: 100) == ByteBuffer(string: "data"))
            }
        }

        @Test func tooManyRedirectsIsItsOwnError() async throws {
            let (peer, port) = try await startPythonPeer()
            defer { peer.stop() }
            var configuration = HTTPClientConfiguration()
            configuration.redirects = .follow(max: 2)
            let client = try HTTPClient(configuration: configuration)
            let error = await #expect(throws: HTTPClientError.self) {
                try await withTimeout {
                    _ = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/redirect/5/301"))
                }
            }
            #expect(error?.code == .tooManyRedirects)
            await client.shutdown()
        }

        @Test func connectionCloseIsHonoured() async throws {
            try await Self.withPeer { client, base in
                let closing = try await client.execute(HTTPClientRequest(url: "\(base)/close"))
                #expect(try await closing.body.collect(upTo: 10) == ByteBuffer(string: "bye"))
                let next = try await client.execute(HTTPClientRequest(url: "\(base)/bytes/1"))
                _ = try await next.body.collect(upTo: 10)
                #expect(next.metrics.snapshot.isReusedConnection == false)
            }
        }
    }
}
