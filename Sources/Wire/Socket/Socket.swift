import Glibc

/// A non-blocking socket: the owner of one descriptor, with typed calls and no raw pointers.
///
/// A socket belongs to whoever created or accepted it; it is closed exactly once, by `close()`
/// or when it is released.
package final class Socket {
    // Not Sendable: one owner at a time, and no access to the descriptor is held across a call out, so it skips the
    // dynamic exclusivity checks (two per accept and two per close).
    @exclusivity(unchecked) private var descriptor: FileDescriptor
    init(taking descriptor: consuming FileDescriptor) {
        self.descriptor = descriptor
    }

    /// A new, unconnected stream socket for `family`.
    package static func makeStream(family: SocketAddress.Family) throws(IOError) -> Socket {
        let domain: CInt
        switch family {
        case .ipv4: domain = AF_INET
        case .ipv6: domain = AF_INET6
        case .unix: domain = AF_UNIX
        }
        let socket = Socket(taking: try Posix.socket(domain: domain, type: CInt(SOCK_STREAM.rawValue)))
        if family != .unix { try socket.setOption(.noDelay(true)) }
        return socket
    }

    /// The raw descriptor, for registration with the loop. -1 once closed.
    package var rawDescriptor: CInt { descriptor.rawValue }

    /// Whether the socket is still open.
    var isOpen: Bool { descriptor.isOpen }

    /// Sets an option. The corresponding C function is `setsockopt(2)`.
    package func setOption(_ option: SocketOption) throws(IOError) {
        try option.apply(to: descriptor.rawValue)
    }

    /// The integer value of an option (`TCP_NODELAY`, `SO_KEEPALIVE`, ...), as the kernel reports it. The
    /// corresponding C function is `getsockopt(2)`.
    package func integerOption(level: CInt, name: CInt) throws(IOError) -> CInt {
        try Posix.getOption(descriptor.rawValue, level: level, name: name)
    }

    /// How many bytes must be queued before the socket reads as ready (`SO_RCVLOWAT`, at least 1). The corresponding
    /// C function is `setsockopt(2)`.
    func setReceiveLowWatermark(_ bytes: Int) throws(IOError) {
        try Posix.setOption(descriptor.rawValue, level: SOL_SOCKET, name: SO_RCVLOWAT, value: CInt(clamping: max(1, bytes)))
    }

    /// The kernel's receive buffer size (`SO_RCVBUF`: what autotuning has grown it to, or what was set). The
    /// corresponding C function is `getsockopt(2)`.
    func receiveBufferSize() throws(IOError) -> Int {
        Int(try Posix.getOption(descriptor.rawValue, level: SOL_SOCKET, name: SO_RCVBUF))
    }

    /// The bytes the kernel holds for reading (`FIONREAD`), which a peer that hung up can no longer add to.
    package func readableByteCount() throws(IOError) -> Int {
        try Posix.readableByteCount(descriptor.rawValue)
    }

    /// The bytes the kernel holds in the send queue (`SIOCOUTQ`): unsent, or sent and not yet acknowledged; 0 once
    /// the peer's kernel has acknowledged every byte written.
    package func sendQueueByteCount() throws(IOError) -> Int {
        try Posix.sendQueueByteCount(descriptor.rawValue)
    }

    /// Binds to a local address. The corresponding C function is `bind(2)`.
    package func bind(to address: SocketAddress) throws(IOError) {
        try Posix.bind(descriptor.rawValue, to: address)
    }

    /// Ties the socket to the network interface `name` (`SO_BINDTODEVICE`). The corresponding C function is
    /// `setsockopt(2)`.
    func bind(toDevice name: String) throws(IOError) {
        try Posix.bindToDevice(descriptor.rawValue, name: name)
    }

    /// Starts listening. The corresponding C function is `listen(2)`.
    package func listen(backlog: Int) throws(IOError) {
        try Posix.listen(descriptor.rawValue, backlog: CInt(clamping: backlog))
    }

    /// Accepts one waiting connection, non-blocking, or nil. The C function is `accept4(2)`, which also gives the
    /// peer's address; `localAddress` is the connection's own when the caller knows it (a listener bound to one
    /// address). The addresses go with the socket, not in it: a `SocketStream` keeps its own copy, and held in the
    /// socket too they would cost every open connection about 50 bytes.
    func accept(localAddress: SocketAddress? = nil) throws(IOError) -> AcceptedConnection? {
        var peer: SocketAddress?
        guard let accepted = try Posix.accept(descriptor.rawValue, peer: &peer) else { return nil }
        let socket = Socket(taking: accepted)
        // Not every accepted socket is TCP (Unix listeners): ignore ENOTSUP/EOPNOTSUPP there.
        try? socket.setOption(.noDelay(true))
        return AcceptedConnection(socket: socket, localAddress: localAddress, remoteAddress: peer)
    }

    /// Starts connecting. `.processed` means connected at once (Unix sockets, often loopback);
    /// `.wouldBlock` means in progress: wait for writability, then call `finishConnect()`.
    package func connect(to address: SocketAddress) throws(IOError) -> IOResult<Void> {
        try Posix.connect(descriptor.rawValue, to: address)
    }

    /// Completes a non-blocking connect, throwing the error it ended with.
    func finishConnect() throws(IOError) {
        if let error = try Posix.pendingError(descriptor.rawValue) {
            throw IOError(syscall: "connect", errno: error)
        }
    }

    /// Reads into `buffer`'s writable space; `.processed(0)` is end of stream.
    func read(into buffer: inout ByteBuffer, maxBytes: Int) throws(IOError) -> IOResult<Int> {
        try Posix.read(descriptor.rawValue, into: &buffer, maxBytes: maxBytes)
    }

    /// Writes what the kernel takes of `buffers` in one gathering call.
    func write(gathering buffers: ArraySlice<ByteBuffer>) throws(IOError) -> IOResult<Int> {
        try Posix.send(descriptor.rawValue, gathering: buffers)
    }

    /// Writes what the kernel takes of one buffer.
    package func write(_ buffer: ByteBuffer) throws(IOError) -> IOResult<Int> {
        try Posix.send(descriptor.rawValue, buffer)
    }

    /// Writes what the kernel takes of `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) throws(IOError) -> IOResult<Int> {
        try Posix.send(descriptor.rawValue, bytes: bytes)
    }

    /// Shuts down one or both directions. The corresponding C function is `shutdown(2)`.
    func shutdown(_ direction: ShutdownDirection) throws(IOError) {
        try Posix.shutdown(descriptor.rawValue, how: direction.rawValue)
    }

    /// The local address, from `getsockname(2)`.
    package func localAddress() throws(IOError) -> SocketAddress {
        try Posix.localAddress(descriptor.rawValue)
    }

    /// The peer's address, from `getpeername(2)`.
    package func remoteAddress() throws(IOError) -> SocketAddress {
        try Posix.remoteAddress(descriptor.rawValue)
    }

    /// Closes the descriptor. The owner must deregister it from its loop first.
    package func close() throws(IOError) {
        guard descriptor.isOpen else { return }
        try descriptor.close()
    }
}

/// A connection a listener accepted, with the addresses the accept learnt (nil for one it did not: then the stream
/// asks the kernel).
package struct AcceptedConnection {
    package let socket: Socket
    package let localAddress: SocketAddress?
    package let remoteAddress: SocketAddress?
}
