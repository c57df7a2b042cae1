/// A connected, ordered byte stream on one event loop: plain TCP or Unix socket, or TLS over one.
///
/// The HTTP layer speaks only to this protocol, so a TLS stream slots in between the socket
/// and the HTTP connection without the HTTP code knowing. Every member is called on the
/// stream's loop.
package protocol ByteStream: AnyObject {
    /// The loop the stream lives on.
    var eventLoop: EventLoop { get }
    /// Who is told about reads, drained writes and closure. Held strongly until the stream closes: an owner that
    /// holds the stream forms a cycle with it only while it is open.
    var delegate: (any ByteStreamDelegate)? { get set }
    /// Bytes accepted by `write` and not yet taken by the kernel (or the TLS engine).
    var pendingWriteBytes: Int { get }
    /// Queued bytes the kernel has taken so far, over the stream's life: it only grows, so a writer measures the
    /// peer's progress with it even while more is queued (a send timeout's "no progress"). Bytes that went out
    /// at once, never queued, are not counted.
    var drainedWriteBytes: UInt64 { get }
    /// Whether the stream is still open.
    var isOpen: Bool { get }
    /// The error the stream closed with; nil while open and after an orderly close. A stream
    /// that closes while it has no delegate (between a connect's steps) still says why.
    var closeError: (any Error)? { get }
    /// The local and remote addresses, when known.
    var localAddress: SocketAddress? { get }
    /// The peer's address.
    var remoteAddress: SocketAddress? { get }
    /// What a TLS layer negotiated (version, cipher, ALPN, peer chain); nil for plain streams.
    var securityInfo: TransportSecurityInfo? { get }
    /// The kernel's `TCP_INFO` for the TCP connection underneath, read now; nil when there is none (a Unix socket, a
    /// tunnel) or it is closed.
    func tcpInfo() -> TCPInfo?
    /// This stream as one that sends files itself (`FileRegionStream`), or nil. A requirement rather than a cast:
    /// `stream as? any FileRegionStream` looks the conformance up at run time (about 280 instructions per connection).
    var fileRegions: (any FileRegionStream)? { get }

    /// The delegate is owed at least `count` more bytes (the rest of a body of known length; 0 when nothing more
    /// is certain). A stream may let that many, up to one read's worth, gather before it delivers any: fewer
    /// wake-ups in a bulk transfer. A stream never waits for more than this, so a body's end is not delayed.
    func expectAtLeast(_ count: Int)

    /// Queues bytes and writes as much as the kernel takes now; the rest goes out as the
    /// socket drains, in order. Several buffers go out in one gathering write.
    func write(_ buffers: [ByteBuffer])

    /// Writes bytes the caller keeps: as much as the kernel takes goes out now, straight from `bytes`, and only
    /// what it refuses is copied and queued. A response assembled in a shared buffer thus costs no allocation.
    func write(copying bytes: UnsafeRawBufferPointer)
    /// Stops (false) or resumes (true) reading from the socket: the back-pressure switch.
    func setReadingEnabled(_ enabled: Bool)
    /// Sends end of stream after the queued bytes, keeping the read side open.
    func shutdownWrite()
    /// Closes at once, dropping queued bytes; the delegate hears `didClose` once.
    func close(error: (any Error)?)
}

extension ByteStream {
    /// Plain streams negotiate nothing.
    package var securityInfo: TransportSecurityInfo? { nil }

    /// Streams with no TCP socket of their own report none.
    package func tcpInfo() -> TCPInfo? { nil }

    /// Streams that transform their bytes (TLS) or wrap another send no file regions.
    package var fileRegions: (any FileRegionStream)? { nil }

    /// Streams that cannot count what is still due on the wire (TLS: the bytes owed are plaintext) deliver as
    /// bytes come.
    package func expectAtLeast(_ count: Int) {}

    /// Copies the bytes into a buffer and writes that: streams that transform their bytes (TLS) copy them anyway.
    package func write(copying bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        write([ByteBuffer(bytes: bytes)])
    }
}

/// A stream whose socket can take a file's bytes straight from the page cache (`sendfile(2)`): a plain socket.
///
/// A TLS stream is not one (it must encrypt every byte in user space), so a writer checks for this protocol once per
/// connection and, without it, reads the file in pieces and writes the bytes, paced by the stream's drain events.
package protocol FileRegionStream: ByteStream {
    /// Queues `region` behind the bytes and regions queued before it, and sends as much as the kernel takes now; the
    /// rest goes out as the socket drains. Its bytes count in `pendingWriteBytes` until the kernel has them. The stream
    /// keeps the region's file open until it is sent or the stream closes, whichever comes first; a file that ends
    /// before the region does closes the stream with `FileTruncatedError`.
    func write(_ region: FileRegion)
}

extension FileRegionStream {
    /// A stream that sends file regions is one.
    package var fileRegions: (any FileRegionStream)? { self }
}

/// Receives a byte stream's events, on its loop.
package protocol ByteStreamDelegate: AnyObject {
    /// Bytes arrived; consume what you can (move the reader index) and leave the rest,
    /// which is kept and offered again with the next bytes.
    func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer)
    /// The peer sent end of stream (it may still read what we write).
    func streamDidReachEnd(_ stream: any ByteStream)
    /// Every queued byte has been written: a producer that paused may continue.
    func streamDidDrainWrites(_ stream: any ByteStream)
    /// The stream closed, with the error that closed it or nil for an orderly close.
    func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?)
}
