import Testing
import Wire

extension IOSuite {
    /// Opt-in HTTP/1.1 pipelining against a scripted server that holds responses back until it
    /// has read several requests: a client that did not pipeline would never get an answer.
    @Suite struct HTTPClientPipeliningTests {
        static func pipelining(_ depth: Int) -> HTTPClientConfiguration {
            var configuration = HTTPClientConfiguration()
            configuration.maxConnectionsPerHost = 1
            configuration.pipelining = .enabled(maxInFlight: depth)
            return configuration
        }

        /// The request target, as the server's reply body: shows which response went to which request.
        static func path(of head: String) -> String {
            String(head.split(separator: " ")[1])
        }

        static func get(_ client: HTTPClient, _ server: ScriptedServer, _ path: String) async throws -> (
            String, HTTPClientMetrics.Snapshot
        ) {
            let response = try await client.execute(HTTPClientRequest(url: HTTPClientFaultTests.url(server, path)))
            let body = try await response.body.collect(upTo: 100)
            return (String(decoding: body.readableBytesArray, as: UTF8.self), response.metrics.snapshot)
        }

        @Test func threeRequestsTravelTogetherOnOneConnectionAndEachGetsItsOwnResponse() async throws {
            try await HTTPClientFaultTests.withServer(
                configuration: Self.pipelining(3),
                script: { _, request, head in
                    // Nothing is answered until the third request is in: only a pipelining client gets there.
                    let reply = ScriptedServer.ok(Self.path(of: head))
                    return request < 2 ? .queue(reply) : .flush(reply)
                }
            ) { client, server in
                try await withThrowingTaskGroup(of: (String, String).self) { group in
                    for path in ["/a", "/b", "/c"] {
                        group.addTask { (path, try await Self.get(client, server, path).0) }
                    }
                    for try await (path, body) in group { #expect(body == path) }
                }
                #expect(try await server.connectionCount() == 1)
            }
        }

        @Test func requestsQueuedBehindAClosingResponseAreRetriedOnAFreshConnection() async throws {
            try await HTTPClientFaultTests.withServer(
                configuration: Self.pipelining(3),
                script: { connection, request, head in
                    let path = Self.path(of: head)
                    guard connection == 0 else { return .respond(ScriptedServer.ok(path)) }
                    // The first connection answers its first request with `Connection: close` and goes.
                    switch request {
                    case 0: return .queue(ScriptedServer.ok(path, extraHeaders: "Connection: close\r\n"))
                    case 1: return .queue("")
                    default: return .flushAndClose
                    }
                }
            ) { client, server in
                let results = try await withThrowingTaskGroup(of: (String, String, Int).self) { group in
                    for path in ["/a", "/b", "/c"] {
                        group.addTask {
                            let (body, metrics) = try await Self.get(client, server, path)
                            return (path, body, metrics.retries)
                        }
                    }
                    var results: [(String, String, Int)] = []
                    for try await result in group { results.append(result) }
                    return results
                }
                for (path, body, _) in results { #expect(body == path) }
                // One was answered by the first connection; the two behind it were replayed once each.
                #expect(results.map(\.2).sorted() == [0, 1, 1])
                #expect(try await server.connectionCount() >= 2)
            }
        }

        @Test func abandoningAQueuedRequestDropsOnlyItsResponse() async throws {
            let (arrivals, arrived) = AsyncStream.makeStream(of: Int.self)
            try await HTTPClientFaultTests.withServer(
                configuration: Self.pipelining(3),
                script: { _, request, head in
                    arrived.yield(request)
                    let reply = ScriptedServer.ok(Self.path(of: head))
                    return request < 3 ? .queue(reply) : .respond(reply)
                }
            ) { client, server in
                var next = arrivals.makeAsyncIterator()
                // Start in a known order, each once the server has the one before it.
                async let first = Self.get(client, server, "/a")
                _ = await next.next()
                let middle = Task { try await Self.get(client, server, "/b") }
                _ = await next.next()
                async let last = Self.get(client, server, "/c")
                _ = await next.next()
                // /b is queued behind /a: abandoning it must not disturb /a or /c.
                middle.cancel()
                let error = await #expect(throws: HTTPClientError.self) { try await middle.value }
                #expect(error?.code == .cancelled)
                try await server.flushQueued()
                #expect(try await first.0 == "/a")
                #expect(try await last.0 == "/c")
                // The dropped response was read past and the connection kept: a fourth request reuses it.
                let (body, metrics) = try await Self.get(client, server, "/d")
                #expect(body == "/d")
                #expect(metrics.isReusedConnection)
                #expect(try await server.connectionCount() == 1)
            }
        }
    }
}
