import Testing
import Wire
import WireTLS
import WireTestSupport

/// `TLSStream` on its own, over a connected pair of socket streams: handshake, data both ways,
/// back-pressure, close_notify, and that every OpenSSL object is released afterwards.
extension IOSuite {
    @Suite(.exclusiveIO) struct TLSStreamTests {
        /// A client and a server TLS stream over one socket pair, each with a recording delegate.
        struct TLSPair: Sendable {
            let client: LoopBound<TLSStream>
            let server: LoopBound<TLSStream>
            let clientDelegate: LoopBound<RecordingDelegate>
            let serverDelegate: LoopBound<RecordingDelegate>
            let released: LoopBound<WeakReferences>
        }

        final class WeakReferences {
            weak var clientStream: TLSStream?
            weak var serverStream: TLSStream?
            var allReleased: Bool { clientStream == nil && serverStream == nil }
        }

        static func makePair(loop: EventLoop) async throws -> (TLSPair, StreamPair) {
            let pki = try TestPKI.shared()
            let sockets = try await makeStreamPair(listeningOn: try SocketAddress(ipAddress: "127.0.0.1", port: 0), loop: loop)
            let (clientContext, serverContext) = try pki.streamContexts()
            let handshake = AsyncStreamBox<Bool>()
            let pair = try await loop.submit { () throws -> TLSPair in
                let server = TLSStream(
                    lower: sockets.server.value, connection: try SSLConnection(server: serverContext),
                    deadline: .after(.seconds(5)))
                let client = TLSStream(
                    lower: sockets.client.value,
                    connection: try SSLConnection(client: clientContext, host: "localhost", verification: .full),
                    deadline: .after(.seconds(5)), completion: { handshake.yield((try? $0.get()) != nil) })
                let clientDelegate = RecordingDelegate()
                let serverDelegate = RecordingDelegate()
                client.delegate = clientDelegate
                server.delegate = serverDelegate
                let references = WeakReferences()
                references.clientStream = client
                references.serverStream = server
                return TLSPair(
                    client: LoopBound(client, loop: loop), server: LoopBound(server, loop: loop),
                    clientDelegate: LoopBound(clientDelegate, loop: loop), serverDelegate: LoopBound(serverDelegate, loop: loop),
                    released: LoopBound(references, loop: loop))
            }
            #expect(try await handshake.next())
            return (pair, sockets)
        }

        @Test func dataBothWaysBackPressureAndCloseNotify() async throws {
            let before = await descriptorBaseline()
            try await withLoop { loop in
                let (pair, sockets) = try await Self.makePair(loop: loop)
                let size = 1 << 20
                try await loop.submit {
                    pair.server.value.setReadingEnabled(false)
                    pair.client.value.write([ByteBuffer(bytes: repeatElement(UInt8(7), count: size))])
                }
                // Paused: nothing is delivered, whatever arrives.
                try await loop.submit { pair.client.value.write([ByteBuffer(string: "x")]) }
                await StreamPair.wait(pair.clientDelegate) { _ in true }
                #expect(try await loop.submit { pair.serverDelegate.value.receivedCount } == 0)
                try await loop.submit { pair.server.value.setReadingEnabled(true) }
                await StreamPair.wait(pair.serverDelegate) { $0.receivedCount == size + 1 }
                try await loop.submit { pair.server.value.write([ByteBuffer(string: "pong")]) }
                await StreamPair.wait(pair.clientDelegate) { $0.receivedCount == 4 }
                // An orderly close sends close_notify: the other side sees end of stream, not an error.
                try await loop.submit { pair.client.value.close(error: nil) }
                await StreamPair.wait(pair.serverDelegate) { $0.reachedEnd }
                try await loop.submit {
                    #expect(pair.serverDelegate.value.closeError == nil)
                    pair.server.value.close(error: nil)
                    sockets.listener.value.close()
                }
                #expect(try await loop.submit { pair.released.value.allReleased } == false)
            }
            #expect(before.newlyOpened() == [])
        }

        @Test func streamsAndOpenSSLObjectsAreReleasedAfterClose() async throws {
            try await withLoop { loop in
                let (pair, sockets) = try await Self.makePair(loop: loop)
                let released = pair.released
                try await loop.submit {
                    pair.client.value.close(error: nil)
                    pair.server.value.close(error: nil)
                    sockets.listener.value.close()
                }
                // Only the test's own LoopBound tokens hold the streams now; dropping them frees
                // each stream, its SSLConnection and so its SSL (which frees its BIOs).
                _ = consume pair
                #expect(try await loop.submit { released.value.allReleased })
            }
        }
    }
}
