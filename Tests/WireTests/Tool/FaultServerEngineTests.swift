import Synchronization
import Testing
import Wire
import WireFaults
import WireTestSupport

extension IOSuite {
    /// `FaultServer` started in process from a parsed scenario, as the client tests start it, driven over a raw
    /// socket or by Wire's client: answers held back until a later request releases them, a rule that waits for the
    /// first byte of an upload, and a random trickle that repeats for its seed. The server reports each of its writes,
    /// so the checks count writes, not time.
    @Suite struct FaultServerEngineTests {
        /// The sizes of the server's writes, in order.
        final class Writes: Sendable {
            private let sizes = Mutex<[Int]>([])
            func record(_ size: Int) { sizes.withLock { $0.append(size) } }
            var all: [Int] { sizes.withLock { $0 } }
        }

        static func withServer<T: Sendable>(
            _ json: String, seed: UInt64? = nil,
            _ body: @escaping @Sendable (FaultServer, Writes, EventLoop) async throws -> T
        ) async throws -> T {
            var scenario = try FaultScenario.parse(Array(json.utf8))
            if let seed { scenario.seed = seed }
            let loop = try EventLoop(name: "faults")
            let clientLoop = try EventLoop(name: "client")
            let writes = Writes()
            let server = try await FaultServer.start(
                scenario, on: loop, address: try SocketAddress(ipAddress: "127.0.0.1", port: 0),
                onWrite: { _, size in writes.record(size) })
            let outcome: Result<T, any Error>
            do {
                outcome = .success(try await withTimeout(seconds: 60) { try await body(server, writes, clientLoop) })
            } catch {
                outcome = .failure(error)
            }
            try await server.close()
            await clientLoop.shutdownGracefully()
            await loop.shutdownGracefully()
            return try outcome.get()
        }

        @Test func heldAnswersGoOutInOneWriteWhenALaterRuleReleasesThem() async throws {
            let scenario = """
                {"rules": [
                  {"request": 0, "actions": [{"do": "hold"}, {"do": "response", "status": 200, "body": "first"}]},
                  {"request": 1, "actions": [{"do": "hold"}, {"do": "response", "status": 200, "body": "second"}]},
                  {"request": 2, "actions": [{"do": "release"}, {"do": "response", "status": 200, "body": "third"}]}
                ]}
                """
            try await Self.withServer(scenario) { server, writes, clientLoop in
                let client = try await RawClient.connect(port: server.address.port!, loop: clientLoop)
                try await client.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
                // Both requests are in and both answers held: nothing has gone out.
                #expect(await eventually { (try? await server.heldCount()) == 2 })
                #expect(writes.all.isEmpty)
                try await client.send("GET /c HTTP/1.1\r\nHost: x\r\n\r\n")
                let first = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst"
                let second = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecond"
                let third = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nthird"
                let total = (first + second + third).utf8.count
                #expect(await client.waitForReceivedCount(atLeast: total) == total)
                #expect(await client.received() == Array((first + second + third).utf8))
                // The release is one write of both held answers; the third is its own.
                #expect(writes.all == [first.utf8.count + second.utf8.count, third.utf8.count])
                #expect(try await server.heldCount() == 0)
                await client.close()
            }
        }

        @Test func aBodyRuleWaitsForTheUploadsFirstByte() async throws {
            let scenario = """
                {"rules": [{"when": "body", "actions": [
                  {"do": "response", "status": 413, "body": "too big"}, {"do": "stopReading"}]}]}
                """
            try await Self.withServer(scenario) { server, writes, clientLoop in
                let client = try await RawClient.connect(port: server.address.port!, loop: clientLoop)
                try await client.send("PUT /up HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
                // The head is in (the request was taken) and nothing is answered: the rule waits for body bytes.
                #expect(await eventually { (try? await server.maxRequestsPerRead()) == 1 })
                #expect(writes.all.isEmpty)
                try await client.send("x")
                let answer = "HTTP/1.1 413 Content Too Large\r\nContent-Length: 7\r\n\r\ntoo big"
                #expect(await client.waitForReceivedCount(atLeast: answer.utf8.count) == answer.utf8.count)
                #expect(await client.received() == Array(answer.utf8))
                #expect(writes.all == [answer.utf8.count])
                await client.close()
            }
        }

        @Test func aResetAfterAcknowledgementWaitsUntilTheClientHoldsEveryByte() async throws {
            // Far more than the client's receive buffer (fixed, so not grown) holds while it does not read.
            let size = 4 << 20
            let scenario = """
                {"rules": [{"actions": [{"do": "body", "size": \(size)}, {"do": "close", "how": "rst-after-ack"}]}]}
                """
            try await Self.withServer(scenario) { server, writes, clientLoop in
                let client = try await RawClient.connect(
                    port: server.address.port!, loop: clientLoop, receiveBufferSize: 64 * 1024)
                try await client.setReading(false)
                try await client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(await eventually { writes.all == [size] })
                // Written, not acknowledged: the connection stays up (a plain `rst` would drop the rest now).
                #expect(try await server.openConnectionCount() == 1)
                try await client.setReading(true)
                #expect(await client.waitForReceivedCount(atLeast: size) == size)
                // Every byte is in: then the reset comes.
                _ = await client.readUntilClosed()
                let delegate = client.delegate
                let ending = try await delegate.loop.submit { (delegate.value.closeError as? IOError)?.errno }
                #expect(ending == .connectionReset)
                #expect(await client.received().count == size)
                #expect(await eventually { (try? await server.openConnectionCount()) == 0 })
            }
        }

        /// The sizes of the writes of one trickled 300-byte response, under `seed`.
        static func trickledWrites(seed: UInt64) async throws -> [Int] {
            let scenario = """
                {"rules": [{"actions": [
                  {"do": "trickle", "bytes": 16, "everyMs": 0, "random": true},
                  {"do": "response", "status": 200, "size": 300}]}]}
                """
            return try await Self.withServer(scenario, seed: seed) { server, writes, _ in
                let client = try HTTPClient(configuration: HTTPClientConfiguration())
                do {
                    let response = try await client.execute(
                        HTTPClientRequest(url: "http://127.0.0.1:\(server.address.port!)/"))
                    #expect(try await response.body.collect(upTo: 1000).readableBytes == 300)
                } catch {
                    await client.shutdown()
                    throw error
                }
                await client.shutdown()
                return writes.all
            }
        }

        @Test func aRandomTrickleRepeatsForItsSeed() async throws {
            let first = try await Self.trickledWrites(seed: 42)
            let again = try await Self.trickledWrites(seed: 42)
            let other = try await Self.trickledWrites(seed: 43)
            #expect(first == again)
            #expect(first != other)
            // Every piece is 1...16 bytes and together they are the whole response.
            for sizes in [first, other] {
                #expect(sizes.allSatisfy { (1...16).contains($0) })
                #expect(sizes.reduce(0, +) == "HTTP/1.1 200 OK\r\nContent-Length: 300\r\n\r\n".utf8.count + 300)
            }
            #expect(first.count > 300 / 16)
        }
    }
}
