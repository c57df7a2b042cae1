import Testing
import Wire
import WireTLS

extension IOSuite {
    /// How `TLSStream` takes its records from any lower stream, however they are split, and what it makes of bytes a
    /// peer should not send: OpenSSL reads the ciphertext straight out of the buffers the lower stream delivers.
    @Suite struct TLSStreamRecordTests {
        /// A lower stream over a socket stream that delivers what arrives in pieces of `pieceSize` bytes, each in a
        /// buffer of its own, and that can hold back what is written until `shutdownWrite` and add raw bytes
        /// (`trailer`) after it: the test's hand on what the TLS stream above reads.
        final class SplittingLower: ByteStream, ByteStreamDelegate {
            let socket: SocketStream
            var delegate: (any ByteStreamDelegate)?
            var pieceSize: Int
            /// While set, writes wait in `heldWrites` and go out together at `shutdownWrite`, then `trailer`.
            var holdsWrites = false
            var trailer: [UInt8] = []
            private var heldWrites: [ByteBuffer] = []
            private var unread = ByteBuffer()
            private var readingEnabled = true
            private(set) var piecesDelivered = 0

            init(_ socket: SocketStream, pieceSize: Int) {
                self.socket = socket
                self.pieceSize = pieceSize
                socket.delegate = self
            }

            var eventLoop: EventLoop { socket.eventLoop }
            var pendingWriteBytes: Int { socket.pendingWriteBytes }
            var drainedWriteBytes: UInt64 { socket.drainedWriteBytes }
            var isOpen: Bool { socket.isOpen }
            var closeError: (any Error)? { socket.closeError }
            var localAddress: SocketAddress? { socket.localAddress }
            var remoteAddress: SocketAddress? { socket.remoteAddress }

            func write(_ buffers: [ByteBuffer]) {
                if holdsWrites { heldWrites += buffers } else { socket.write(buffers) }
            }

            /// Sends raw bytes now, past the TLS stream above.
            func inject(_ bytes: [UInt8]) { socket.write([ByteBuffer(bytes: bytes)]) }

            func setReadingEnabled(_ enabled: Bool) {
                readingEnabled = enabled
                socket.setReadingEnabled(enabled)
                if enabled && unread.readableBytes > 0 {
                    eventLoop.executeSoon { [weak self] in self?.deliverUnread() }
                }
            }

            func shutdownWrite() {
                if holdsWrites {
                    // Everything in one write, so it reaches the peer in one read.
                    var all = ByteBuffer()
                    for buffer in heldWrites { all.writeBuffer(buffer) }
                    all.writeBytes(trailer)
                    heldWrites = []
                    socket.write([all])
                }
                socket.shutdownWrite()
            }

            func close(error: (any Error)?) { socket.close(error: error) }

            func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer) {
                unread.writeBuffer(buffer)
                buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
                deliverUnread()
            }

            private func deliverUnread() {
                while unread.readableBytes > 0 && readingEnabled, let delegate {
                    var piece = ByteBuffer(bytes: unread.readBytes(pieceSize))
                    piecesDelivered += 1
                    delegate.stream(self, didRead: &piece)
                    if piece.readableBytes > 0 {
                        // Left for the next bytes, in front of what is still unread.
                        piece.writeBuffer(unread)
                        unread = piece
                        return
                    }
                }
            }

            func streamDidReachEnd(_ stream: any ByteStream) { delegate?.streamDidReachEnd(self) }
            func streamDidDrainWrites(_ stream: any ByteStream) { delegate?.streamDidDrainWrites(self) }
            func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?) {
                let delegate = self.delegate
                self.delegate = nil
                delegate?.stream(self, didCloseWith: error)
            }
        }

        /// Both ends of a TLS connection over splitting lowers on one socket pair, each with a recording delegate.
        struct Pair: Sendable {
            let client: LoopBound<TLSStream>
            let server: LoopBound<TLSStream>
            let clientLower: LoopBound<SplittingLower>
            let serverLower: LoopBound<SplittingLower>
            let clientDelegate: LoopBound<RecordingDelegate>
            let serverDelegate: LoopBound<RecordingDelegate>
            let sockets: StreamPair

            func close() async throws {
                try await client.loop.submit {
                    client.value.close(error: nil)
                    server.value.close(error: nil)
                    sockets.listener.value.close()
                }
            }
        }

        static func makePair(loop: EventLoop, pieceSize: Int) async throws -> Pair {
            let pki = try TestPKI.shared()
            let sockets = try await makeStreamPair(listeningOn: try SocketAddress(ipAddress: "127.0.0.1", port: 0), loop: loop)
            let (clientContext, serverContext) = try pki.streamContexts()
            let handshake = AsyncStreamBox<Bool>()
            let pair = try await loop.submit { () throws -> Pair in
                let serverLower = SplittingLower(sockets.server.value, pieceSize: pieceSize)
                let clientLower = SplittingLower(sockets.client.value, pieceSize: pieceSize)
                let server = TLSStream(
                    lower: serverLower, connection: try SSLConnection(server: serverContext), deadline: .after(.seconds(10)))
                let client = TLSStream(
                    lower: clientLower,
                    connection: try SSLConnection(client: clientContext, host: "localhost", verification: .full),
                    deadline: .after(.seconds(10)), completion: { handshake.yield((try? $0.get()) != nil) })
                let clientDelegate = RecordingDelegate()
                let serverDelegate = RecordingDelegate()
                client.delegate = clientDelegate
                server.delegate = serverDelegate
                return Pair(
                    client: LoopBound(client, loop: loop), server: LoopBound(server, loop: loop),
                    clientLower: LoopBound(clientLower, loop: loop), serverLower: LoopBound(serverLower, loop: loop),
                    clientDelegate: LoopBound(clientDelegate, loop: loop), serverDelegate: LoopBound(serverDelegate, loop: loop),
                    sockets: sockets)
            }
            #expect(try await handshake.next())
            return pair
        }

        /// `count` bytes that differ from one offset to the next, so a byte lost, doubled or reordered shows.
        static func pattern(_ count: Int, seed: Int) -> [UInt8] {
            (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 131 &+ seed) % 251) }
        }

        @Test func recordsArrivingOneByteAtATimeAreReadWhole() async throws {
            try await withLoop { loop in
                // The handshake too arrives a byte at a time, both ways.
                let pair = try await Self.makePair(loop: loop, pieceSize: 1)
                // More than two full records each way, and a short one.
                let up = Self.pattern(40_000, seed: 1)
                let down = Self.pattern(40_000, seed: 2)
                try await loop.submit {
                    pair.client.value.write([ByteBuffer(bytes: up)])
                    pair.server.value.write([ByteBuffer(bytes: down)])
                }
                try await withTimeout(seconds: 30) {
                    await StreamPair.wait(pair.serverDelegate) { $0.receivedCount >= up.count }
                    await StreamPair.wait(pair.clientDelegate) { $0.receivedCount >= down.count }
                }
                try await loop.submit {
                    #expect(pair.serverDelegate.value.received == up)
                    #expect(pair.clientDelegate.value.received == down)
                    #expect(pair.serverLower.value.piecesDelivered > up.count)
                    #expect(pair.serverDelegate.value.closeError == nil && pair.clientDelegate.value.closeError == nil)
                }
                try await pair.close()
            }
        }

        @Test func aLargeBodyBothWaysAtOnceWhileTheReaderKeepsSlices() async throws {
            try await withLoop { loop in
                let pair = try await Self.makePair(loop: loop, pieceSize: 1 << 30)
                let up = Self.pattern(6 << 20, seed: 3)
                let down = Self.pattern(6 << 20, seed: 4)
                try await loop.submit {
                    // A consumer that keeps the last reads' bytes as slices, as a body consumer that lags behind.
                    pair.serverDelegate.value.slicesHeld = 3
                    pair.clientDelegate.value.slicesHeld = 3
                    // Several writes of a file writer's size and one large one: records of every size go both ways.
                    for offset in stride(from: 0, to: up.count, by: 64 * 1024) {
                        pair.client.value.write([ByteBuffer(bytes: up[offset..<min(offset + 64 * 1024, up.count)])])
                    }
                    pair.server.value.write([ByteBuffer(bytes: down)])
                }
                try await withTimeout(seconds: 60) {
                    await StreamPair.wait(pair.serverDelegate) { $0.receivedCount >= up.count }
                    await StreamPair.wait(pair.clientDelegate) { $0.receivedCount >= down.count }
                }
                try await loop.submit {
                    #expect(pair.serverDelegate.value.received == up)
                    #expect(pair.clientDelegate.value.received == down)
                    // No delivery is larger than the stream's delivery size.
                    #expect(pair.serverDelegate.value.largestRead <= 64 * 1024)
                }
                try await pair.close()
            }
        }

        @Test func bytesAfterCloseNotifyInTheSameReadAreIgnored() async throws {
            try await withLoop { loop in
                let pair = try await Self.makePair(loop: loop, pieceSize: 1 << 30)
                try await loop.submit {
                    // Data, close_notify and then bytes that are no TLS record at all, in one segment.
                    pair.clientLower.value.holdsWrites = true
                    pair.clientLower.value.trailer = Array("garbage after close_notify".utf8)
                    pair.client.value.write([ByteBuffer(string: "last words")])
                    pair.client.value.shutdownWrite()
                }
                try await withTimeout(seconds: 10) {
                    await StreamPair.wait(pair.serverDelegate) { $0.reachedEnd || $0.closed }
                }
                try await loop.submit {
                    #expect(pair.serverDelegate.value.received == Array("last words".utf8))
                    #expect(pair.serverDelegate.value.reachedEnd)
                    #expect(pair.serverDelegate.value.closeError == nil)
                    #expect(pair.server.value.isOpen)
                }
                try await pair.close()
            }
        }

        @Test func garbageAfterTheHandshakeIsAProtocolError() async throws {
            try await withLoop { loop in
                let pair = try await Self.makePair(loop: loop, pieceSize: 1 << 30)
                try await loop.submit { pair.client.value.write([ByteBuffer(string: "fine")]) }
                try await withTimeout(seconds: 10) {
                    await StreamPair.wait(pair.serverDelegate) { $0.receivedCount == 4 }
                }
                try await loop.submit {
                    // An application-data record header with a body that decrypts to nothing valid.
                    pair.clientLower.value.inject([0x17, 0x03, 0x03, 0x00, 0x20] + Array(repeating: 0x41, count: 32))
                }
                try await withTimeout(seconds: 10) {
                    await StreamPair.wait(pair.serverDelegate) { $0.closed }
                }
                try await loop.submit {
                    #expect(pair.serverDelegate.value.received == Array("fine".utf8))
                    let error = pair.serverDelegate.value.closeError as? TLSError
                    #expect(error?.reason == .protocolError, "\(String(describing: pair.serverDelegate.value.closeError))")
                }
                try await pair.close()
            }
        }

        @Test func aPeerThatStopsMidRecordTruncatesTheStream() async throws {
            try await withLoop { loop in
                let pair = try await Self.makePair(loop: loop, pieceSize: 1 << 30)
                try await loop.submit {
                    pair.client.value.write([ByteBuffer(string: "whole")])
                    // Half a record: a header announcing 100 bytes, 10 of them, then the TCP end (no close_notify).
                    pair.clientLower.value.inject([0x17, 0x03, 0x03, 0x00, 0x64] + Array(repeating: 0x42, count: 10))
                    pair.sockets.client.value.shutdownWrite()
                }
                try await withTimeout(seconds: 10) {
                    await StreamPair.wait(pair.serverDelegate) { $0.closed }
                }
                try await loop.submit {
                    #expect(pair.serverDelegate.value.received == Array("whole".utf8))
                    let error = pair.serverDelegate.value.closeError as? TLSError
                    #expect(error?.reason == .truncatedStream, "\(String(describing: pair.serverDelegate.value.closeError))")
                }
                try await pair.close()
            }
        }

        @Test func aPausedReaderKeepsTheRestOfARead() async throws {
            try await withLoop { loop in
                let pair = try await Self.makePair(loop: loop, pieceSize: 1 << 30)
                let body = Self.pattern(300_000, seed: 5)
                try await loop.submit {
                    // The reader pauses after its first delivery: the rest of that read (many records) stays as
                    // ciphertext until it resumes, and more arrives behind it meanwhile.
                    pair.serverDelegate.value.whenever({ $0.receivedCount > 0 }) { pair.server.value.setReadingEnabled(false) }
                    pair.client.value.write([ByteBuffer(bytes: body)])
                }
                try await withTimeout(seconds: 10) {
                    await StreamPair.wait(pair.serverDelegate) { $0.receivedCount > 0 }
                }
                let pausedCount = try await loop.submit { pair.serverDelegate.value.receivedCount }
                #expect(pausedCount < body.count)
                try await loop.submit { pair.server.value.setReadingEnabled(true) }
                try await withTimeout(seconds: 10) {
                    await StreamPair.wait(pair.serverDelegate) { $0.receivedCount >= body.count }
                }
                try await loop.submit { #expect(pair.serverDelegate.value.received == body) }
                try await pair.close()
            }
        }
    }
}
