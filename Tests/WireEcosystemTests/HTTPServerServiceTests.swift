import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing
import Wire
import WireEcosystem
import WireTestSupport

/// `HTTPServerService` under ServiceLifecycle's graceful shutdown, triggered as a `ServiceGroup` would on SIGTERM.
@Suite(.exclusiveIO(minutes: 1))
struct HTTPServerServiceTests {
    /// Holds handlers until opened.
    actor Gate {
        private var waiters: [CheckedContinuation<Void, Never>] = []
        private var isOpen = false
        private(set) var arrivals = 0
        private var arrivalWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        func pass() async {
            arrivals += 1
            for waiter in arrivalWaiters where waiter.count <= arrivals { waiter.continuation.resume() }
            arrivalWaiters.removeAll { $0.count <= arrivals }
            if isOpen { return }
            await withCheckedContinuation { waiters.append($0) }
        }

        func waitForArrivals(_ count: Int) async {
            if arrivals >= count { return }
            await withCheckedContinuation { arrivalWaiters.append((count, $0)) }
        }

        func open() {
            isOpen = true
            for waiter in waiters { waiter.resume() }
            waiters = []
        }
    }

    @Test func aGracefulShutdownLetsRequestsInFlightFinishWithConnectionCloseThenReturns() async throws {
        let gate = Gate()
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "ecosystem-service")
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0)), group: group
        ) { request, response in
            // Probes are answered at once; the others wait at the gate.
            if request.target != "/probe" { await gate.pass() }
            try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: request.target))
        }
        let port = try await server.start().port ?? 0
        let client = try HTTPClient(group: group)
        // Each probe on a connection of its own: it fails once the server's loop has closed its listener, which it
        // does as it begins the graceful shutdown (and marks the connections in flight to close).
        let prober = try HTTPClient(group: group)
        let inFlight = 4

        let results = try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: (String, Int, String?, String)?.self) { tasks in
                tasks.addTask {
                    try await HTTPServerService(server: server, gracePeriod: .seconds(20)).run()
                    return nil
                }
                for index in 0..<inFlight {
                    tasks.addTask {
                        let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/r\(index)"))
                        let body = try await response.body.collect(upTo: 1024)
                        return (
                            "/r\(index)", response.status.code, response.headers.first(name: "connection"),
                            String(decoding: body.readableBytesArray, as: UTF8.self)
                        )
                    }
                }
                await gate.waitForArrivals(inFlight)
                trigger.triggerGracefulShutdown()
                // The server has begun its shutdown (it no longer listens) before the handlers may answer: their
                // responses are written during it.
                #expect(
                    await eventually(within: .seconds(10)) {
                        let probe = HTTPClientRequest(url: "http://127.0.0.1:\(port)/probe", headers: ["Connection": "close"])
                        guard let response = try? await prober.execute(probe)
                        else { return true }
                        _ = try? await response.body.collect(upTo: 1024)
                        return false
                    })
                await gate.open()
                var results: [(String, Int, String?, String)] = []
                for try await result in tasks {
                    if let result { results.append(result) }
                }
                return results
            }
        }
        // Stopped: nothing listens on the port any more.
        await #expect(throws: (any Error).self) {
            _ = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/late"))
        }
        await client.shutdown()
        await prober.shutdown()
        await group.shutdownGracefully()

        #expect(results.count == inFlight)
        for (path, status, connection, body) in results {
            #expect(status == 200)
            #expect(body == path)
            #expect(connection?.lowercased() == "close", "a response written during shutdown announces the close")
        }
        #expect(server.localAddress == nil)
    }

    @Test func cancellingTheServiceClosesAtOnce() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "ecosystem-cancel")
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0)), group: group
        ) { _, response in
            try await response.respond(HTTPResponseHead(status: .ok))
        }
        let service = HTTPServerService(server: server)
        let run = Task { try await service.run() }
        // The service starts the server itself; wait until it listens.
        #expect(await eventually(within: .seconds(10)) { server.localAddress != nil })
        let port = server.localAddress?.port ?? 0
        let client = try HTTPClient(group: group)
        let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/"))
        _ = try await response.body.collect(upTo: 1024)
        run.cancel()
        try await run.value
        #expect(server.localAddress == nil)
        await client.shutdown()
        await group.shutdownGracefully()
    }
}
