import Testing
import Wire

extension IOSuite {
    /// A stream whose reading is paused (its consumer is behind) when the peer hangs up completely: the bytes the
    /// kernel still holds are delivered once reading resumes, then the end of stream (or the reset), and while the
    /// consumer stalls the loop is not woken for the hang-up.
    @Suite struct SocketStreamHangUpTests {
        /// Less than the receiving kernel's first window, so all of it is there at the hang-up without a read.
        static let payload: [UInt8] = (0..<(40 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }

        enum HangUp { case finBothWays, reset }

        @Test(arguments: [HangUp.finBothWays, .reset])
        func pausedStreamKeepsEveryByteAfterAFullHangUp(_ hangUp: HangUp) async throws {
            try await withLoop { loop in
                try await withTimeout {
                    let pair = try await makeStreamPair(
                        listeningOn: try SocketAddress(ipAddress: "127.0.0.1", port: 0), loop: loop)
                    let payload = Self.payload
                    try await loop.submit {
                        pair.client.value.setReadingEnabled(false)
                        // With the client's own side shut, the peer's FIN makes the hang-up full (EPOLLHUP).
                        if hangUp == .finBothWays { pair.client.value.shutdownWrite() }
                        pair.server.value.write([ByteBuffer(bytes: payload)])
                    }
                    // Every byte in the client's kernel before the peer goes: a reset drops what it has not sent.
                    try await Self.waitUntil(loop) {
                        try pair.client.value.socketForTesting.readableByteCount() == payload.count
                    }
                    try await loop.submit {
                        if hangUp == .reset { try pair.server.value.socketForTesting.setOption(.linger(seconds: 0)) }
                        pair.server.value.close(error: nil)
                    }
                    // The hang-up reaches the paused client: it parks instead of closing.
                    try await Self.waitUntil(loop) { pair.client.value.isParked || !pair.client.value.isOpen }
                    let (parked, delivered) = try await loop.submit {
                        (pair.client.value.isParked, pair.clientDelegate.value.receivedCount)
                    }
                    #expect(parked)
                    #expect(delivered == 0)

                    // A stalled consumer costs nothing: no readiness event for the parked stream, however long
                    // the loop runs (level-triggered epoll would report the hang-up on every wait).
                    let before = try await loop.submit { pair.client.value.readinessEventCount }
                    for _ in 0..<50 {
                        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                            loop.schedule(in: .milliseconds(1)) { done.resume() }
                        }
                    }
                    let after = try await loop.submit { pair.client.value.readinessEventCount }
                    #expect(after == before)

                    try await loop.submit { pair.client.value.setReadingEnabled(true) }
                    await StreamPair.wait(pair.clientDelegate) { $0.reachedEnd || $0.closed }
                    let (received, reachedEnd, closeError) = try await loop.submit {
                        (
                            pair.clientDelegate.value.received, pair.clientDelegate.value.reachedEnd,
                            pair.clientDelegate.value.closeError
                        )
                    }
                    let whole = received == payload
                    #expect(received.count == payload.count)
                    #expect(whole, "the bytes differ from those sent")
                    switch hangUp {
                    case .finBothWays:
                        #expect(reachedEnd)
                    case .reset:
                        // The bytes, then the reset that came after them.
                        #expect((closeError as? IOError)?.errno == .connectionReset)
                    }
                    try await pair.close()
                }
            }
        }

        @Test func aFullHangUpWithNothingUnreadClosesAtOnce() async throws {
            try await withLoop { loop in
                try await withTimeout {
                    let pair = try await makeStreamPair(
                        listeningOn: try SocketAddress(ipAddress: "127.0.0.1", port: 0), loop: loop)
                    try await loop.submit {
                        pair.client.value.setReadingEnabled(false)
                        pair.client.value.shutdownWrite()
                        pair.server.value.close(error: nil)
                    }
                    await StreamPair.wait(pair.clientDelegate) { $0.closed }
                    #expect(try await loop.submit { !pair.client.value.isParked })
                    try await pair.close()
                }
            }
        }

        /// Runs `condition` on the loop, one loop iteration after another, until it holds.
        static func waitUntil(_ loop: EventLoop, _ condition: @escaping @Sendable () throws -> Bool) async throws {
            while try await !loop.submit(condition) { await Task.yield() }
        }
    }
}
