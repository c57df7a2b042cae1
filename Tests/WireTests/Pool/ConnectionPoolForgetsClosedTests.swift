import Testing
@testable import Wire

/// A long-lived client must let go of the connections servers close while they idle in its pool: before, the pool's
/// shell kept every one (with its stream) for the client's life.
extension IOSuite {
    @Suite struct ConnectionPoolForgetsClosedTests {
        @Test func connectionsAServerClosesWhileIdleAreForgotten() async throws {
            let group = try EventLoopGroup(loopCount: 1, namePrefix: "pool-forget")
            let server = HTTPServer(
                configuration: HTTPServerConfiguration(
                    address: try SocketAddress(ipAddress: "127.0.0.1", port: 0), idleTimeout: .milliseconds(20)),
                group: group
            ) { _, response in
                try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "ok"))
            }
            let port = try await server.start().port!
            let client = try HTTPClient(configuration: HTTPClientConfiguration(), group: group)
            let loop = group.next()
            try await withTimeout(seconds: 20) {
                for _ in 0..<10 {
                    let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/"))
                    #expect(response.status == .ok)
                    _ = try await response.body.collect(upTo: 1024)
                    // Event-driven wait: each hop onto the (shared) loop lets it handle what the kernel reported,
                    // the server's idle close and then the client's end of stream.
                    while client.retainedConnectionCount > 0 || server.connectionCount > 0 {
                        try await loop.submit {}
                        await Task.yield()
                    }
                }
            }
            #expect(client.retainedConnectionCount == 0)
            await client.shutdown()
            await server.shutdown(gracePeriod: .seconds(1))
            await group.shutdownGracefully()
        }
    }
}
