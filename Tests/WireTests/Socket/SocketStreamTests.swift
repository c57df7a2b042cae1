import Glibc
import Testing
import Wire
import WireTestSupport

extension IOSuite {
    @Suite(.exclusiveIO) struct SocketStreamTests {
        static let addresses: [SocketAddress] = [
            try! SocketAddress(ipAddress: "127.0.0.1", port: 0),
            try! SocketAddress(ipAddress: "::1", port: 0),
        ]

        @Test(arguments: addresses)
        func connectAcceptAndExchangeOverIP(address: SocketAddress) async throws {
            try await exchange(listeningOn: address)
        }

        @Test func connectAcceptAndExchangeOverUnixSocket() async throws {
            let path = "/tmp/wire-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
            try await exchange(listeningOn: try SocketAddress(unixPath: path))
            #expect(access(path, F_OK) != 0, "the listener removes its socket file on close")
        }

        private func exchange(listeningOn address: SocketAddress) async throws {
            let before = openDescriptors()
            try await withLoop { loop in
                try await withTimeout {
                    let pair = try await makeStreamPair(listeningOn: address, loop: loop)
                    // Each end's addresses are the other's, whole: the server learns its peer's from accept4(2) and its
                    // own from the listener's bound address, the client its peer's from connect(2).
                    let (bound, client, server) = try await loop.submit {
                        (
                            pair.listener.value.localAddress,
                            (pair.client.value.localAddress, pair.client.value.remoteAddress),
                            (pair.server.value.localAddress, pair.server.value.remoteAddress)
                        )
                    }
                    #expect(server.0 == bound)
                    #expect(client.1 == bound)
                    #expect(server.1 == client.0)
                    #expect(server.1 != nil)
                    try await loop.submit {
                        pair.client.value.write([ByteBuffer(string: "ping")])
                        pair.server.value.write([ByteBuffer(string: "pong!")])
                    }
                    await StreamPair.wait(pair.serverDelegate) { $0.receivedCount == 4 }
                    await StreamPair.wait(pair.clientDelegate) { $0.receivedCount == 5 }
                    let (serverGot, clientGot) = try await loop.submit {
                        (pair.serverDelegate.value.received, pair.clientDelegate.value.received)
                    }
                    #expect(serverGot == Array("ping".utf8))
                    #expect(clientGot == Array("pong!".utf8))
                    // Orderly shutdown: the server sees end of stream after the client's FIN.
                    try await loop.submit { pair.client.value.shutdownWrite() }
                    await StreamPair.wait(pair.serverDelegate) { $0.reachedEnd }
                    try await pair.close()
                }
            }
            #expect(before.newlyOpened() == [])
        }

        @Test func aHalfClosedPeerDoesNotKeepTheLoopBusy() async throws {
            // Regression: EPOLLRDHUP registered without EPOLLIN is level-triggered and stays
            // raised after the peer's FIN, so a stream done reading was reported on every wait.
            try await withLoop { loop in
                try await withTimeout {
                    let pair = try await makeStreamPair(
                        listeningOn: try SocketAddress(ipAddress: "127.0.0.1", port: 0), loop: loop)
                    try await loop.submit { pair.client.value.shutdownWrite() }
                    await StreamPair.wait(pair.serverDelegate) { $0.reachedEnd }
                    // The window opens once the loop has run everything before it (a sanitizer slows that work).
                    try await loop.submit {}
                    let before = try threadCPUTicks(loop.threadID)
                    try await Task.sleep(for: .milliseconds(500))  // a measurement window
                    let after = try threadCPUTicks(loop.threadID)
                    #expect(after - before <= 1, "the loop used \(after - before) ticks in 0.5 s with a half-closed stream open")
                    try await pair.close()
                }
            }
        }

        /// Both write entry points: the gathering one, and the single-buffer one that skips the
        /// queue while it is empty. The payload goes in two halves, so the second must queue
        /// behind what the kernel refused of the first.
        @Test(arguments: [false, true])
        func writeLargerThanSocketBufferCompletesUnderBackPressure(singleBuffer: Bool) async throws {
            let before = openDescriptors()
            try await withLoop { loop in
                try await withTimeout(seconds: 30) {
                    let pair = try await makeStreamPair(
                        listeningOn: try SocketAddress(ipAddress: "127.0.0.1", port: 0), loop: loop)
                    let size = 32 * 1024 * 1024
                    // 512 blocks of 64 KiB of xorshift bytes, each stamped with its number: a lost, repeated or moved
                    // block shows, and only one block is made byte by byte (a sanitizer slows this code, not memcpy).
                    var block = [UInt8](repeating: 0, count: 64 * 1024)
                    var state: UInt32 = 2_463_534_242
                    for index in block.indices {
                        state ^= state << 13; state ^= state >> 17; state ^= state << 5
                        block[index] = UInt8(truncatingIfNeeded: state)
                    }
                    var payload = ByteBuffer(capacity: size)
                    for number in 0..<(size / block.count) {
                        withUnsafeBytes(of: UInt32(number).littleEndian) { block.replaceSubrange(0..<4, with: $0) }
                        payload.writeBytes(block)
                    }
                    let expected = payload.readableBytesArray
                    let finalPayload = payload
                    // The receiver starts paused: the writer must queue and wait for writability.
                    let queuedAfterWrite = try await loop.submit { () -> Int in
                        pair.server.value.setReadingEnabled(false)
                        let half = finalPayload.readableBytes / 2
                        let halves = [
                            finalPayload.slice(at: 0, length: half),
                            finalPayload.slice(at: half, length: finalPayload.readableBytes - half),
                        ]
                        for part in halves {
                            if singleBuffer { pair.client.value.write(part) } else { pair.client.value.write([part]) }
                        }
                        return pair.client.value.pendingWriteBytes
                    }
                    #expect(queuedAfterWrite > 0, "32 MiB cannot fit in the socket buffers of a paused peer")
                    #expect(queuedAfterWrite < size, "some bytes were written at once")
                    try await loop.submit { pair.server.value.setReadingEnabled(true) }
                    await StreamPair.wait(pair.serverDelegate) { $0.receivedCount == size }
                    await StreamPair.wait(pair.clientDelegate) { $0.drained > 0 }
                    let received = try await loop.submit { pair.serverDelegate.value.received }
                    #expect(received == expected)
                    #expect(try await loop.submit { pair.client.value.pendingWriteBytes } == 0)
                    try await pair.close()
                }
            }
            #expect(before.newlyOpened() == [])
        }

        /// A bulk transfer read by a delegate that holds on to what it was handed (a body consumer behind the
        /// socket): reads grow past the first size, each read takes a buffer from the loop instead of copying on
        /// write into a new one, and the loop's few buffers serve the whole transfer.
        @Test func bulkReadsGrowAndReuseTheLoopsBuffersWhileChunksAreHeld() async throws {
            let before = openDescriptors()
            try await withLoop { loop in
                try await withTimeout(seconds: 30) {
                    let pair = try await makeStreamPair(
                        listeningOn: try SocketAddress(ipAddress: "127.0.0.1", port: 0), loop: loop)
                    let size = 32 * 1024 * 1024
                    let startCounts = try await loop.submit { () -> (Int, Int) in
                        pair.serverDelegate.value.keepsBytes = false
                        pair.serverDelegate.value.slicesHeld = 2
                        let pool = loop.readBufferPoolForTesting
                        return (pool.taken, pool.created)
                    }
                    var payload = ByteBuffer(capacity: size)
                    payload.writeBytes([UInt8](repeating: 0x5A, count: size))
                    let finalPayload = payload
                    try await loop.submit { pair.client.value.write(finalPayload) }
                    await StreamPair.wait(pair.serverDelegate) { $0.receivedCount == size }
                    let (reads, largest, taken, created) = try await loop.submit { () -> (Int, Int, Int, Int) in
                        let delegate = pair.serverDelegate.value
                        let pool = loop.readBufferPoolForTesting
                        return (delegate.reads, delegate.largestRead, pool.taken - startCounts.0, pool.created - startCounts.1)
                    }
                    #expect(largest > SocketStream.readSize, "reads that fill what they ask for ask for more")
                    #expect(largest <= SocketStream.maximumReadSize)
                    #expect(taken >= reads, "every read after one whose bytes are still held takes a free buffer from the loop")
                    #expect(created <= 12, "\(created) buffers allocated for \(reads) reads: the loop's buffers are reused")
                    try await loop.submit { pair.serverDelegate.value.slicesHeld = 0 }
                    try await pair.close()
                }
            }
            #expect(before.newlyOpened() == [])
        }

        @Test func peerResetGivesConnectionResetAndLeaksNothing() async throws {
            let before = openDescriptors()
            try await withLoop { loop in
                try await withTimeout {
                    let pair = try await makeStreamPair(
                        listeningOn: try SocketAddress(ipAddress: "127.0.0.1", port: 0), loop: loop)
                    // SO_LINGER 0 makes close(2) send RST instead of FIN.
                    try await loop.submit {
                        try pair.server.value.socketForTesting.setOption(.linger(seconds: 0))
                        pair.server.value.close(error: nil)
                    }
                    await StreamPair.wait(pair.clientDelegate) { $0.closed || $0.reachedEnd }
                    // Writing to a reset connection surfaces the reset (EPIPE/ECONNRESET), never SIGPIPE.
                    try await loop.submit { pair.client.value.write([ByteBuffer(string: "after reset")]) }
                    await StreamPair.wait(pair.clientDelegate) { $0.closed }
                    let error = try await loop.submit { pair.clientDelegate.value.closeError.map { "\($0)" } }
                    let ioError = try await loop.submit { pair.clientDelegate.value.closeError as? IOError }
                    #expect(ioError != nil, "closed with \(error ?? "no error")")
                    #expect([Errno.connectionReset, .brokenPipe].contains(ioError?.errno), "got \(error ?? "nil")")
                    #expect(ioError.map { ["recv", "read", "send", "sendmsg"].contains($0.syscall) } == true)
                    try await pair.close()
                }
            }
            #expect(before.newlyOpened() == [])
        }
    }
}
