import Testing
import WireTestSupport
import Wire

extension IOSuite {
    /// A stream whose peer sends and closes before anyone listens keeps what it read for the delegate that attaches.
    @Suite struct SocketStreamLateDelegateTests {
        @Test func bytesAndEndOfStreamBeforeTheDelegateAttachesAreDeliveredOnAttach() async throws {
            try await withLoop { loop in
                try await withTimeout {
                    let accepted = AsyncStreamBox<LoopBound<SocketStream>>()
                    let listener = try await loop.submit { () throws -> LoopBound<SocketListener> in
                        let listener = try SocketListener(
                            bindingTo: try SocketAddress(ipAddress: "127.0.0.1", port: 0), on: loop,
                            onAccept: { connection in
                                // No delegate yet: whatever arrives must wait for one.
                                if let stream = try? SocketStream(accepted: connection, on: loop) {
                                    accepted.yield(LoopBound(stream, loop: loop))
                                }
                            })
                        return LoopBound(listener, loop: loop)
                    }
                    let port = try await loop.submit { listener.value.localAddress.port! }
                    let peer = try await Connector.connect(host: "127.0.0.1", port: port, on: loop, timeout: .seconds(5))
                    try await loop.submit {
                        _ = try peer.value.write(ByteBuffer(string: "early bytes"))
                        try peer.value.close()
                    }
                    let stream = try await accepted.next()
                    let endSeen = try await eventually { try await loop.submit { stream.value.heldEndOfStream } }
                    #expect(endSeen, "the stream read the peer's end of stream with no delegate attached")

                    let delegate = try await loop.submit { () -> LoopBound<RecordingDelegate> in
                        let delegate = RecordingDelegate()
                        stream.value.delegate = delegate
                        return LoopBound(delegate, loop: loop)
                    }
                    await StreamPair.wait(delegate) { $0.reachedEnd }
                    let (received, open) = try await loop.submit { (delegate.value.received, stream.value.isOpen) }
                    #expect(received == Array("early bytes".utf8), "the bytes come before the end of stream")
                    #expect(open, "end of stream is the peer's half-close, not a close")
                    try await loop.submit {
                        stream.value.close(error: nil)
                        listener.value.close()
                    }
                }
            }
        }
    }
}
