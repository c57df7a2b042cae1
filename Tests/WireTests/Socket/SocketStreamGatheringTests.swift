import Glibc
import Testing
import Wire
import WireTestSupport

extension IOSuite {
    /// A stream told how much of a body is still due lets it gather in the kernel (`SO_RCVLOWAT`) while the peer is
    /// ahead, never waits past the body's end, and stops gathering when the peer slows down.
    @Suite(.exclusiveIO) struct SocketStreamGatheringTests {
        /// `size` bytes (their values do not matter: the delegates count them).
        static func payload(_ size: Int) -> ByteBuffer {
            ByteBuffer(bytes: [UInt8](repeating: 0x5A, count: size))
        }

        static func kernelWatermark(_ stream: SocketStream) throws -> CInt {
            try Posix.getOption(stream.socketForTesting.rawDescriptor, level: SOL_SOCKET, name: SO_RCVLOWAT)
        }

        @Test func aBulkBodyGathersAndItsEndIsNotWaitedFor() async throws {
            let before = await descriptorBaseline()
            try await withLoop { loop in
                try await withTimeout(seconds: 30) {
                    let pair = try await makeStreamPair(
                        listeningOn: try SocketAddress(ipAddress: "127.0.0.1", port: 0), loop: loop)
                    // 16 MiB and a tail that is not a multiple of a read, so the last watermark is below a read's worth.
                    let size = 16 * 1024 * 1024 + 12_345
                    let payload = Self.payload(size)
                    try await loop.submit {
                        // No check may stop the gathering here: the body's end must arrive by the watermark alone.
                        pair.client.value.gatheringCheckInterval = .seconds(3600)
                        pair.clientDelegate.value.keepsBytes = false
                        pair.clientDelegate.value.expectedTotal = size
                        pair.server.value.write([payload])
                    }
                    await StreamPair.wait(pair.clientDelegate) { $0.receivedCount == size }
                    let (highest, watermark, kernel) = try await loop.submit {
                        (
                            pair.clientDelegate.value.highestWatermark, pair.client.value.receiveLowWatermark,
                            try Self.kernelWatermark(pair.client.value)
                        )
                    }
                    #expect(
                        highest == SocketStream.maximumReadSize,
                        "the reader gathered a full read's worth while the peer was ahead")
                    #expect(watermark == 1)
                    #expect(kernel == 1, "once the body is read, any byte wakes the reader again")
                    try await pair.close()
                }
            }
            #expect(before.newlyOpened() == [])
        }

        @Test func bytesFromAPeerThatSlowsDownAreReadAfterACheck() async throws {
            try await withLoop { loop in
                try await withTimeout(seconds: 30) {
                    let pair = try await makeStreamPair(
                        listeningOn: try SocketAddress(ipAddress: "127.0.0.1", port: 0), loop: loop)
                    let bulk = 8 * 1024 * 1024
                    try await loop.submit {
                        pair.client.value.gatheringCheckInterval = .milliseconds(50)
                        pair.clientDelegate.value.keepsBytes = false
                        // The peer promises 2000 bytes more than the bulk and sends half of them after it: the stream
                        // waits for bytes that do not come (the last of the bulk, then the half), and only its
                        // checks get what did come read.
                        pair.clientDelegate.value.expectedTotal = bulk + 2000
                        pair.clientDelegate.value.whenever({ $0.receivedCount == bulk }) {
                            pair.server.value.write([ByteBuffer(bytes: repeatElement(UInt8(7), count: 1000))])
                        }
                        pair.server.value.write([Self.payload(bulk)])
                    }
                    await StreamPair.wait(pair.clientDelegate) { $0.receivedCount == bulk + 1000 }
                    let (highest, kernel) = try await loop.submit {
                        (pair.clientDelegate.value.highestWatermark, try Self.kernelWatermark(pair.client.value))
                    }
                    #expect(highest > 1, "the bulk gathered")
                    #expect(kernel == 1, "a check found no read since the one before and stopped gathering")
                    try await pair.close()
                }
            }
        }

        @Test func aClosedStreamCancelsItsCheck() async throws {
            try await withLoop { loop in
                try await withTimeout(seconds: 30) {
                    let pair = try await makeStreamPair(
                        listeningOn: try SocketAddress(ipAddress: "127.0.0.1", port: 0), loop: loop)
                    let size = 16 * 1024 * 1024
                    let timersLeft = AsyncStreamBox<(Bool, Int)>()
                    try await loop.submit {
                        pair.client.value.gatheringCheckInterval = .seconds(3600)
                        pair.clientDelegate.value.keepsBytes = false
                        pair.clientDelegate.value.expectedTotal = size
                        pair.clientDelegate.value.whenever({ $0.highestWatermark > 1 && !$0.closed }) {
                            let checking = pair.client.value.isCheckingGathering
                            let timers = loop.scheduledTimerCount
                            pair.client.value.close(error: nil)
                            timersLeft.yield((checking, timers - loop.scheduledTimerCount))
                        }
                        pair.server.value.write([Self.payload(size)])
                    }
                    let (checking, cancelled) = try await timersLeft.next()
                    #expect(checking, "a gathering stream checks on a timer")
                    #expect(cancelled == 1, "closing the stream cancels its check: no timer outlives it")
                    try await pair.close()
                }
            }
        }
    }
}
