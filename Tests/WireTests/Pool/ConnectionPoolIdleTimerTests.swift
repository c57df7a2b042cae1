import Testing
import Wire
import WireTestSupport

/// The pool's idle timer is re-armed lazily (a lease does not cancel it, a park does not arm another while one is
/// pending): a connection reused within its idle timeout must stay open, and one left idle must still close on time.
extension IOSuite {
    @Suite struct ConnectionPoolIdleTimerTests {
        @Test func aConnectionReusedWithinItsIdleTimeoutStaysAndClosesOnceLeftIdle() async throws {
            let group = try EventLoopGroup(loopCount: 1, namePrefix: "pool-idle")
            let loop = group.next()
            let server = try await ScriptedServer.start(on: loop) { _, _, _ in .respond(ScriptedServer.ok()) }
            var configuration = HTTPClientConfiguration()
            // 100 ms between uses leaves 300 ms (more under a sanitizer) for a loaded machine to get from one response
            // to the next request.
            let idleTimeout = Duration.milliseconds(400) * Sanitizer.timeScale
            configuration.idleTimeout = idleTimeout
            let client = try HTTPClient(configuration: configuration, group: group)
            let url = "http://127.0.0.1:\(server.address.port!)/"
            @Sendable func pause(_ duration: Duration) async {
                await withCheckedContinuation { continuation in _ = loop.schedule(in: duration) { continuation.resume() } }
            }
            try await withTimeout(seconds: 20) {
                var lastStart = Deadline.now()
                _ = try await client.execute(HTTPClientRequest(url: url)).body.collect(upTo: 10)
                // Six more requests, 100 ms apart: longer in all than the idle timeout (in a plain build), yet never
                // idle that long.
                for _ in 0..<6 {
                    await pause(.milliseconds(100))
                    let previousStart = lastStart
                    lastStart = .now()
                    let response = try await client.execute(HTTPClientRequest(url: url))
                    // The connection was parked after the previous request started and leased again before this one's
                    // head came back: idle for less than that span. A machine that starves the test's task for longer
                    // than the timeout (a ThreadSanitizer run once did) may see it closed, rightly.
                    if Deadline.now() - previousStart < idleTimeout {
                        #expect(response.metrics.snapshot.isReusedConnection)
                    }
                    _ = try await response.body.collect(upTo: 10)
                }
                let pool = try client.pool(for: HTTPURL(url), via: nil)
                #expect(pool.counts.connections == 1)
                // Left idle now: closed by the timer, not before the timeout has passed since its last use (which
                // began after `lastStart`).
                while pool.counts.connections > 0 { await pause(.milliseconds(5)) }
                #expect(Deadline.now() - lastStart >= idleTimeout)
                #expect(client.retainedConnectionCount == 0)
            }
            await client.shutdown()
            try await server.close()
            await group.shutdownGracefully()
        }
    }
}
