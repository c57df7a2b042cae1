import Testing
import Wire

extension IOSuite {
    /// The client finds the pool of a request's origin from the URL's scheme, host and port, comparing them with the
    /// last pool's before building a key: requests that alternate between origins differing in one of them each
    /// reach their own server, on connections of their own.
    @Suite struct HTTPClientOriginPoolTests {
        @Test func requestsAlternatingBetweenOriginsEachReachTheirOwn() async throws {
            let group = try EventLoopGroup(loopCount: 1)
            func server(_ name: String, _ address: SocketAddress) -> HTTPServer {
                HTTPServer(configuration: HTTPServerConfiguration(address: address), group: group) { _, response in
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: name))
                }
            }
            let first = server("first", try SocketAddress(ipAddress: "127.0.0.1", port: 0))
            let firstPort = try #require(try await first.start().port)
            let second = server("second", try SocketAddress(ipAddress: "127.0.0.1", port: 0))
            let secondPort = try #require(try await second.start().port)
            // Another host with the first one's port: only the host tells the two apart.
            let third = server("third", try SocketAddress(ipAddress: "127.0.0.2", port: firstPort))
            _ = try await third.start()
            let urls = [
                "first": "http://127.0.0.1:\(firstPort)/", "second": "http://127.0.0.1:\(secondPort)/",
                "third": "http://127.0.0.2:\(firstPort)/",
            ]
            // Each origin after each other one: after the same port on another host, the same host on another port.
            let order = ["first", "third", "first", "second", "third", "second", "first", "first"]
            let client = try HTTPClient(group: group)
            let outcome: Result<[String], any Error>
            do {
                outcome = .success(
                    try await withTimeout(seconds: 10) { () -> [String] in
                        var seen: [String] = []
                        for name in order {
                            let request = HTTPClientRequest(url: urls[name]!)
                            let body = try await client.execute(request).body.collect(upTo: 1024)
                            seen.append(String(decoding: body.readableBytesArray, as: UTF8.self))
                        }
                        return seen
                    })
            } catch {
                outcome = .failure(error)
            }
            let pools = client.poolSnapshots()
            await client.shutdown()
            for server in [first, second, third] { await server.shutdown(gracePeriod: .seconds(1)) }
            await group.shutdownGracefully()
            #expect(try outcome.get() == order)
            #expect(pools.count == 3)
            #expect(pools.allSatisfy { $0.connectionsOpened == 1 }, "each origin keeps its one connection")
        }
    }
}
