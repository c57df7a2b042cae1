import Testing
import Wire

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

        /// The pool leases an idle connection, and the server closes it before the request starts on it: the pool
        /// forgets it as it closes (the lease holds it), and the request's refusal to start on it, with its release,
        /// changes nothing more. It used to leave the entry, and the closed connection, in the pool for the client's
        /// life.
        @Test func aConnectionClosedBetweenItsLeaseAndItsRequestIsForgotten() async throws {
            let group = try EventLoopGroup(loopCount: 1, namePrefix: "pool-forget-lease")
            let server = try await ScriptedServer.start(on: group.next()) { _, _, _ in .respond(ScriptedServer.ok()) }
            let client = try HTTPClient(configuration: HTTPClientConfiguration(), group: group)
            let url = "http://127.0.0.1:\(server.address.port!)/"
            try await withTimeout(seconds: 20) {
                _ = try await client.execute(HTTPClientRequest(url: url)).body.collect(upTo: 10)
                // The lease, as a request gets it: the idle connection, decided and handed over.
                let pool = try client.pool(for: HTTPURL(url), via: nil)
                let lease = try await pool.lease { _ in }
                #expect(!lease.isNew)
                // The server's idle close reaches the connection before the request starts on it. Each hop onto the
                // loop lets it handle what the kernel reported.
                try await server.closeConnections()
                let connection = lease.connection
                while try await connection.loop.submit({ connection.value.isUsable }) { await Task.yield() }
                // Forgotten as it closed: the lease alone holds it now.
                #expect(client.retainedConnectionCount == 0)
                let refused = try await connection.loop.submit {
                    connection.value.start(
                        head: Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), inlineBody: nil, method: .get,
                        keepAlive: true, requestComplete: true, readTimeout: .seconds(10),
                        metrics: HTTPClientMetrics(start: .now())
                    ).0
                }
                let error = await #expect(throws: HTTPClientError.self) { try await refused.get() }
                // Failed before any response: the kind of failure a request retries on a fresh connection.
                #expect(error?.failedBeforeResponse == true)
                #expect(client.retainedConnectionCount == 0)
                // Released once: the pool goes on with one fresh connection.
                let next = try await client.execute(HTTPClientRequest(url: url))
                #expect(try await next.body.collect(upTo: 10) == ByteBuffer(string: "ok"))
                #expect(pool.counts.connections == 1)
                #expect(client.retainedConnectionCount == 1)
            }
            await client.shutdown()
            try await server.close()
            await group.shutdownGracefully()
        }
    }
}
