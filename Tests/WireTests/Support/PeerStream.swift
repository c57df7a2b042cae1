import Wire

/// A byte stream without a socket, whose peer is the test: what the connection writes is kept,
/// and `receive` hands it bytes as a read would. A test can thus place a read exactly between
/// two jobs of the loop. Whether reading is enabled is recorded, not enforced. Loop-confined.
final class PeerStream: ByteStream {
    let eventLoop: EventLoop
    weak var delegate: (any ByteStreamDelegate)?
    /// Every byte written to the peer.
    private(set) var written: [UInt8] = []
    /// The last back-pressure switch the connection set.
    private(set) var readingEnabled = true
    private(set) var isOpen = true
    private(set) var closeError: (any Error)?
    /// What the delegate left unconsumed of earlier reads, offered again with the next ones.
    private var unread = ByteBuffer()

    var pendingWriteBytes: Int { 0 }
    var drainedWriteBytes: UInt64 { 0 }
    var localAddress: SocketAddress? { nil }
    var remoteAddress: SocketAddress? { nil }

    init(on loop: EventLoop) {
        eventLoop = loop
    }

    /// Bytes from the peer, delivered at once as one read.
    func receive(_ text: String) {
        eventLoop.preconditionInEventLoop()
        guard isOpen else { return }
        unread.writeString(text)
        delegate?.stream(self, didRead: &unread)
        unread.discardReadBytes()
    }

    func write(_ buffers: [ByteBuffer]) {
        for buffer in buffers { written += buffer.readableBytesArray }
    }

    func setReadingEnabled(_ enabled: Bool) {
        readingEnabled = enabled
    }

    func shutdownWrite() {}

    func close(error: (any Error)?) {
        guard isOpen else { return }
        isOpen = false
        closeError = error
        delegate?.stream(self, didCloseWith: error)
    }
}
