/// Watches every byte of one connection of an `HTTPServer`, in plaintext (above TLS), with its read and write
/// boundaries: what a recorder of exchanges needs (`wire serve --record`).
///
/// Made by `HTTPServerObserver.connectionOpened(_:)` when the server accepts a connection. Every call comes on the
/// connection's event loop thread, in order, and must return quickly. A connection with an observer sends files
/// through memory (the bytes must pass through to be seen) instead of with `sendfile(2)`.
public protocol HTTPServerConnectionObserver: AnyObject, Sendable {
    /// Bytes read from the client: one call per read, each byte told once, in order.
    func bytesRead(_ bytes: ByteBuffer)
    /// Bytes handed to the connection for writing: one call per write (a head and a small body coalesced by the
    /// server are one write), in order. Told before the stream takes them.
    func bytesWritten(_ bytes: ByteBuffer)
    /// The client sent end of stream (a FIN, or TLS's close_notify).
    func readEnded()
    /// The server sent end of stream after its queued bytes (a lingering close begins).
    func writeEnded()
    /// The connection closed, with the error that closed it, or nil for an orderly close. Told once, last.
    func connectionClosed(error: (any Error)?)
}

/// What an `HTTPServerObserver` learns of a connection when the server accepts it.
public struct HTTPServerConnectionStart: Sendable {
    /// The client's address.
    public var remoteAddress: SocketAddress?
    /// The address the connection was accepted on.
    public var localAddress: SocketAddress?
    /// Whether the connection is TLS.
    public var isSecure: Bool

    /// Creates the start of a connection (for tests of observers).
    /// - Parameters:
    ///   - remoteAddress: The client's address.
    ///   - localAddress: The server's address.
    ///   - isSecure: Whether the connection is TLS.
    public init(remoteAddress: SocketAddress?, localAddress: SocketAddress?, isSecure: Bool) {
        self.remoteAddress = remoteAddress
        self.localAddress = localAddress
        self.isSecure = isSecure
    }
}

/// A stream that tells an `HTTPServerConnectionObserver` of every byte passing through it, and otherwise forwards
/// everything to the stream it wraps (the socket, or TLS over it). It is no `FileRegionStream`, so a file body goes
/// through memory and is seen.
///
/// Loop-confined, as the stream it wraps.
final class ObservedByteStream: ByteStream, ByteStreamDelegate {
    private let inner: any ByteStream
    private let observer: any HTTPServerConnectionObserver
    var delegate: (any ByteStreamDelegate)?
    /// Bytes the delegate left unconsumed at the last read: the stream offers them again in front of the next ones,
    /// and they were told already.
    private var unconsumed = 0

    init(wrapping inner: any ByteStream, observer: any HTTPServerConnectionObserver) {
        self.inner = inner
        self.observer = observer
        inner.delegate = self
    }

    var eventLoop: EventLoop { inner.eventLoop }
    var pendingWriteBytes: Int { inner.pendingWriteBytes }
    var drainedWriteBytes: UInt64 { inner.drainedWriteBytes }
    var isOpen: Bool { inner.isOpen }
    var closeError: (any Error)? { inner.closeError }
    var localAddress: SocketAddress? { inner.localAddress }
    var remoteAddress: SocketAddress? { inner.remoteAddress }
    var securityInfo: TransportSecurityInfo? { inner.securityInfo }
    func tcpInfo() -> TCPInfo? { inner.tcpInfo() }
    func expectAtLeast(_ count: Int) { inner.expectAtLeast(count) }

    func write(_ buffers: [ByteBuffer]) {
        if buffers.count == 1 {
            if buffers[0].readableBytes > 0 { observer.bytesWritten(buffers[0]) }
        } else {
            var joined = ByteBuffer(capacity: buffers.reduce(0) { $0 + $1.readableBytes })
            for buffer in buffers { joined.writeBuffer(buffer) }
            if joined.readableBytes > 0 { observer.bytesWritten(joined) }
        }
        inner.write(buffers)
    }

    func write(copying bytes: UnsafeRawBufferPointer) {
        if !bytes.isEmpty { observer.bytesWritten(ByteBuffer(bytes: bytes)) }
        inner.write(copying: bytes)
    }

    func setReadingEnabled(_ enabled: Bool) { inner.setReadingEnabled(enabled) }

    func shutdownWrite() {
        if inner.isOpen { observer.writeEnded() }
        inner.shutdownWrite()
    }

    func close(error: (any Error)?) { inner.close(error: error) }

    // MARK: ByteStreamDelegate

    func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer) {
        let told = min(unconsumed, buffer.readableBytes)
        if buffer.readableBytes > told { observer.bytesRead(buffer.slice(at: told, length: buffer.readableBytes - told)) }
        delegate?.stream(self, didRead: &buffer)
        unconsumed = buffer.readableBytes
    }

    func streamDidReachEnd(_ stream: any ByteStream) {
        observer.readEnded()
        delegate?.streamDidReachEnd(self)
    }

    func streamDidDrainWrites(_ stream: any ByteStream) {
        delegate?.streamDidDrainWrites(self)
    }

    func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?) {
        observer.connectionClosed(error: error)
        let delegate = self.delegate
        self.delegate = nil
        delegate?.stream(self, didCloseWith: error)
    }
}
