import Testing
import Wire
import WireTLS

extension IOSuite {
    /// A TLS server whose last handshake flight cannot be written (the peer reset right after its Finished): the
    /// failed write closes the stream re-entrantly, and the completed handshake must not open it again.
    @Suite struct TLSStreamCloseDuringHandshakeTests {
        struct Reset: Error {}

        /// A lower stream that forwards to a socket stream, and closes instead of writing once `failNextWrite` is
        /// set: the way a write meets a reset.
        final class FailingLower: ByteStream, ByteStreamDelegate {
            let socket: SocketStream
            weak var delegate: (any ByteStreamDelegate)?
            var readsSeen = 0
            var failNextWrite = false
            private(set) var closed = false

            init(_ socket: SocketStream) {
                self.socket = socket
                socket.delegate = self
            }

            var eventLoop: EventLoop { socket.eventLoop }
            var pendingWriteBytes: Int { socket.pendingWriteBytes }
            var drainedWriteBytes: UInt64 { socket.drainedWriteBytes }
            var isOpen: Bool { !closed && socket.isOpen }
            var closeError: (any Error)? { socket.closeError }
            var localAddress: SocketAddress? { socket.localAddress }
            var remoteAddress: SocketAddress? { socket.remoteAddress }
            var securityInfo: TransportSecurityInfo? { nil }

            func write(_ buffers: [ByteBuffer]) {
                if failNextWrite {
                    close(error: Reset())
                    return
                }
                socket.write(buffers)
            }

            func write(copying bytes: UnsafeRawBufferPointer) { write([ByteBuffer(bytes: bytes)]) }
            func setReadingEnabled(_ enabled: Bool) { socket.setReadingEnabled(enabled) }
            func shutdownWrite() { socket.shutdownWrite() }

            func close(error: (any Error)?) {
                guard !closed else { return }
                closed = true
                socket.close(error: error)
                let delegate = self.delegate
                self.delegate = nil
                delegate?.stream(self, didCloseWith: error)
            }

            func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer) {
                readsSeen += 1
                // The client's second flight (its Finished) completes the server's handshake, whose last flight
                // (a TLS 1.3 ticket or a 1.2 Finished) is written at once: that write meets the reset.
                if readsSeen >= 2 { failNextWrite = true }
                delegate?.stream(self, didRead: &buffer)
            }

            func streamDidReachEnd(_ stream: any ByteStream) { delegate?.streamDidReachEnd(self) }
            func streamDidDrainWrites(_ stream: any ByteStream) { delegate?.streamDidDrainWrites(self) }
            func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?) {
                guard !closed else { return }
                closed = true
                let delegate = self.delegate
                self.delegate = nil
                delegate?.stream(self, didCloseWith: error)
            }
        }

        @Test func aHandshakeCompletedAfterItsStreamClosedLeavesItClosed() async throws {
            let pki = try TestPKI.shared()
            let loop = try EventLoop(name: "tls-close-during-handshake")
            let sockets = try await makeStreamPair(listeningOn: try SocketAddress(ipAddress: "127.0.0.1", port: 0), loop: loop)
            let (clientContext, serverContext) = try pki.streamContexts()
            let streams = try await loop.submit {
                () throws -> (LoopBound<TLSStream>, LoopBound<TLSStream>, LoopBound<RecordingDelegate>) in
                let lower = FailingLower(sockets.server.value)
                let server = TLSStream(
                    lower: lower, connection: try SSLConnection(server: serverContext), deadline: .after(.seconds(5)))
                let delegate = RecordingDelegate()
                server.delegate = delegate
                let client = TLSStream(
                    lower: sockets.client.value,
                    connection: try SSLConnection(client: clientContext, host: "localhost", verification: .full),
                    deadline: .after(.seconds(5)))
                return (LoopBound(server, loop: loop), LoopBound(client, loop: loop), LoopBound(delegate, loop: loop))
            }
            let (server, client, serverDelegate) = streams
            try await withTimeout(seconds: 20) {
                await StreamPair.wait(serverDelegate) { $0.closed }
            }
            #expect(try await loop.submit { !server.value.isOpen }, "the stream reopened after its close")
            client.loop.execute { client.value.close(error: nil) }
            try await loop.submit { server.value.close(error: nil) }
            await loop.shutdownGracefully()
        }
    }
}
