import Testing
import Wire

extension IOSuite {
    /// A response body whose consumer is behind (reading paused) when the server sends its last bytes and hangs up
    /// completely (a reset, once the client's kernel acknowledged every byte): the body still arrives whole.
    @Suite struct HTTPClientHangUpTests {
        @Test func aPausedBodyArrivesWholeAfterTheServerResets() async throws {
            let peer = try TestProcess("/usr/bin/env", ["python3", "\(testResources)/hangup_peer.py"])
            defer { peer.stop() }
            guard let port = Int(try await peer.firstLine()) else { throw TestTimeout(seconds: 0) }
            let group = try EventLoopGroup(loopCount: 1)
            let client = try HTTPClient(group: group)
            // Above the body's 256 KiB high watermark: the client stops reading before the end.
            let size = 320 * 1024
            let expected = (0..<size).map { UInt8($0 % 251) }
            do {
                let response = try await withTimeout(seconds: 30) {
                    try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/\(size)"))
                }
                // Nothing of the body is read until the peer has reset the connection (it says so within 10 s)...
                #expect(try await peer.firstLine() == "hung up")
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
                throw error
            }
            await client.shutdown()
            await group.shutdownGracefully()
        }
    }
}
