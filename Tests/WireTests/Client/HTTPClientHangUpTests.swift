import Testing
import Wire
import WireFaults
import WireTestSupport

extension IOSuite {
    /// A response body whose consumer is behind (reading paused) when the server sends its last bytes and hangs up
    /// completely (a reset, once the client's kernel acknowledged every byte): the body still arrives whole. The peer
    /// is the fault engine of `wire serve --faults`, closing with `"how": "rst-after-ack"`.
    @Suite struct HTTPClientHangUpTests {
        @Test func aPausedBodyArrivesWholeAfterTheServerResets() async throws {
            // Above the body's 256 KiB high watermark: the client stops reading before the end.
            let size = 320 * 1024
            let expected = (0..<size).map { UInt8($0 % 251) }
            let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\n\r\n".utf8) + expected
            let serverLoop = try EventLoop(name: "hangup-peer")
            let peer = try await FaultServer.start(
                FaultScenario(rules: [FaultRule(actions: [.write(answer), .close(.rstAfterAck)])]), on: serverLoop,
                address: try SocketAddress(ipAddress: "127.0.0.1", port: 0))
            let group = try EventLoopGroup(loopCount: 1)
            let client = try HTTPClient(group: group)
            do {
                let response = try await withTimeout(seconds: 30) {
                    try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(peer.address.port!)/\(size)"))
                }
                // Nothing of the body is read until the peer has reset the connection (it waits at most 10 s)...
                let hungUp = await eventually(within: .seconds(20)) { (try? await peer.openConnectionCount()) == 0 }
                #expect(hungUp, "the peer did not reset the connection")
                #expect(try await peer.connectionCount() == 1)
                try await withTimeout(seconds: 30) {
                    // ...and the client's loop has seen the reset while its reader is still behind.
                    for _ in 0..<3 { try await group.next().submit {} }
                    let body = try await response.body.collect(upTo: 2 * size)
                    #expect(body.readableBytes == size)
                    #expect(body.readableBytesArray == expected)
                }
            } catch {
                await client.shutdown()
                await group.shutdownGracefully()
                try await peer.close()
                await serverLoop.shutdownGracefully()
                throw error
            }
            await client.shutdown()
            await group.shutdownGracefully()
            try await peer.close()
            await serverLoop.shutdownGracefully()
        }
    }
}
