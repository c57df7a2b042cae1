import Synchronization

/// A connected socket (TCP or Unix) on an event loop, as a `ByteStream`.
///
/// Reads go into one buffer that is released whenever it is empty, so an idle connection holds
/// no read memory. Writes are attempted at once; what the kernel does not take is queued and
/// flushed on writability with gathering writes, and the loop is only asked for write events
/// while bytes are queued. File regions queue in order with the bytes and go out with `sendfile(2)`.
package final class SocketStream: FileRegionStream, Selectable {
    package let eventLoop: EventLoop
    /// Who hears the stream's events. Bytes and an end of stream that arrived while there was none are
    /// delivered to the delegate that attaches next, on the loop, after the job that attached it.
    ///
    /// Held strongly until the stream closes, which lets it go: a weak reference would give the delegate (a
    /// connection, retained and released several times per request) a side table, and every retain and release
    /// of it the slow path.
    @exclusivity(unchecked) package var delegate: (any ByteStreamDelegate)? {
        didSet {
            if oldValue == nil && delegate != nil && (heldEndOfStream || readBuffer.readableBytes > 0) {
                eventLoop.executeSoon { [weak self] in self?.deliverHeldEvents() }
            }
        }
    }
    private let socket: Socket
    // The I/O state opts out of dynamic exclusivity checks (a few per read and write, on every connection's hot
    // path): each access is short and none is held across a call to the delegate (the read buffer is moved out
    // before delivery) or into the loop, and the stream is confined to its loop.
    @exclusivity(unchecked) private var registrationKey: UInt64 = 0
    @exclusivity(unchecked) private var readBuffer = ByteBuffer()
    @exclusivity(unchecked) private var writeQueue: [ByteBuffer] = []
    @exclusivity(unchecked) private var writeQueueHead = 0
    /// File regions waiting their turn, in order; each goes out once the byte queue's head reaches its position.
    @exclusivity(unchecked) private var fileQueue: [QueuedFile] = []
    @exclusivity(unchecked) package private(set) var pendingWriteBytes = 0
    @exclusivity(unchecked) package private(set) var drainedWriteBytes: UInt64 = 0
    /// Readiness events handled over the stream's life: a stalled reader of a parked stream adds none.
    @exclusivity(unchecked) package private(set) var readinessEventCount = 0

    /// The socket's `TCP_INFO`; nil for a Unix socket or once closed.
    package func tcpInfo() -> TCPInfo? {
        remoteAddress?.family == .unix ? nil : socket.tcpInfo()
    }
    /// The bytes written and not yet acknowledged by the peer's kernel: those still queued here and those in the
    /// kernel's send queue. Nil once closed. What `wire serve --faults`' `rst-after-ack` waits to see reach 0.
    package func unacknowledgedByteCount() -> Int? {
        guard state == .open, let queued = try? socket.sendQueueByteCount() else { return nil }
        return pendingWriteBytes + queued
    }
    /// How much one read(2) asks for at first and at least; reads that fill what they asked for double it, up
    /// to `maximumReadSize` (see `ReadSizer`).
    package var readChunkSize: Int {
        get { sizer.minimum }
        set { sizer = ReadSizer(minimum: newValue) }
    }
    @exclusivity(unchecked) private var sizer = ReadSizer(minimum: SocketStream.readSize)
    /// Whether a bulk body's bytes gather in the kernel before a wake-up (`SO_RCVLOWAT`), and the check that
    /// stops it when the peer slows down.
    @exclusivity(unchecked) private var gathering = ReceiveGathering()
    @exclusivity(unchecked) private var gatheringCheckNanoseconds = SocketStream.initialGatheringCheckNanoseconds.load(
        ordering: .relaxed)
    @exclusivity(unchecked) private var gatheringCheck: TimerQueue<() -> Void>.ID?
    // The small fields sit together, last, in the optional timer identifier's padding: a class's stored properties are
    // laid out in the order declared, so a byte-sized one between two words costs a word (an idle server connection's
    // memory is mostly this object and its own).
    @exclusivity(unchecked) private var interest: Interest = .read
    @exclusivity(unchecked) private var readingEnabled = true
    @exclusivity(unchecked) private var writeShutdownRequested = false
    @exclusivity(unchecked) private var state = State.open
    /// The peer's end of stream arrived while no delegate listened: reported when one attaches.
    @exclusivity(unchecked) package private(set) var heldEndOfStream = false
    /// The socket hung up fully while reading was paused with bytes still unread in the kernel: the loop no longer
    /// watches it (a hung-up socket is reported on every wait, whatever the interest), the bytes stay in the
    /// kernel, and they are read, then the end of stream, once reading resumes. Nothing can be written any more.
    @exclusivity(unchecked) package private(set) var isParked = false
    /// Keep the read buffer between reads instead of releasing it whenever empty: one allocation for the
    /// connection's life rather than one per read, for a connection that is never idle for long (a load
    /// generator's). Costs `readChunkSize` bytes per connection while idle.
    @exclusivity(unchecked) package var keepsReadBuffer = false
    // Below what a read and a write touch, as the layout follows the declarations: with a thousand connections in use,
    // the addresses and the close error (read when the connection opens and closes) kept the flags above off the
    // cache lines a request's I/O uses anyway.
    @exclusivity(unchecked) package private(set) var closeError: (any Error)?
    package let localAddress: SocketAddress?
    package let remoteAddress: SocketAddress?

    private enum State { case open, closed }

    /// A file region in the write queue: it follows the buffers before `position` in `writeQueue`.
    private struct QueuedFile {
        let position: Int
        let file: RegularFile
        var offset: Int
        var remaining: Int
    }

    /// At most this many file bytes per writability event, so one large file cannot hold the loop from the other
    /// connections on it while the peer reads fast (the socket stays writable, so the loop comes straight back).
    static let fileBytesPerFlush = 2 << 20

    /// How much one read(2) asks for at first. Large enough for a whole response head plus body chunk;
    /// the buffer only grows to this when the socket actually has that much.
    package static let readSize = 64 * 1024
    /// How much one read(2) asks for at most, once reads keep filling what they asked for (a bulk transfer):
    /// fewer system calls and fewer wake-ups of the consumer per byte.
    package static let maximumReadSize = EventLoop.pooledReadBufferCapacity
    /// What the current read size is (it adapts to how full the reads come back).
    var currentReadSize: Int { sizer.current }
    /// Reads per readiness event before yielding to other connections (fairness).
    static let readsPerWakeup = 4
    /// Bytes per readiness event before yielding: to other connections, and to the consumer of what was read (a
    /// body's consumer on this loop runs only once the reads stop; reading past its buffer's high watermark first
    /// would pause and resume the socket, two `epoll_ctl` calls, on every cycle).
    static let bytesPerWakeup = 256 * 1024

    /// How often a stream letting bytes gather checks that reads still happen: once a peer slows down, what it sent
    /// waits in the kernel at most about twice this long before it is read.
    package var gatheringCheckInterval: Duration {
        get { .nanoseconds(gatheringCheckNanoseconds) }
        set { gatheringCheckNanoseconds = newValue.nanoseconds }
    }
    /// The check interval of streams made from now on: 5 ms. Tests that must see a body's end arrive by the
    /// watermark alone (no check to rescue a watermark above what is due) raise it while they run.
    package static let initialGatheringCheckNanoseconds = Atomic<Int64>(5_000_000)
    /// The receive low watermark the socket has now (1 unless a bulk body's bytes are gathering).
    package var receiveLowWatermark: Int { gathering.watermark }
    /// Whether a check of the gathering is scheduled.
    package var isCheckingGathering: Bool { gatheringCheck != nil }

    /// Takes ownership of a connected socket and registers it with `loop`; loop thread only. Addresses not given are
    /// asked of the kernel (`getsockname(2)`, `getpeername(2)`).
    package init(
        socket: Socket, on loop: EventLoop, localAddress: SocketAddress? = nil, remoteAddress: SocketAddress? = nil
    ) throws(IOError) {
        loop.preconditionInEventLoop()
        self.eventLoop = loop
        self.socket = socket
        self.localAddress = localAddress ?? (try? socket.localAddress())
        self.remoteAddress = remoteAddress ?? (try? socket.remoteAddress())
        registrationKey = try loop.register(socket.rawDescriptor, interest: .read, handler: self)
    }

    /// Takes ownership of an accepted connection, with the addresses its accept learnt; loop thread only.
    package convenience init(accepted: AcceptedConnection, on loop: EventLoop) throws(IOError) {
        try self.init(
            socket: accepted.socket, on: loop, localAddress: accepted.localAddress, remoteAddress: accepted.remoteAddress)
    }

    package var isOpen: Bool { state == .open }

    // MARK: Writing

    package func write(_ buffers: [ByteBuffer]) {
        eventLoop.preconditionInEventLoop()
        guard state == .open else { return }
        for buffer in buffers where buffer.readableBytes > 0 {
            writeQueue.append(buffer)
            pendingWriteBytes += buffer.readableBytes
        }
        // Only try at once when nothing was queued before: otherwise writability is already awaited.
        if interest.contains(.write) == false { flush() }
    }

    /// Writes one buffer: straight to the kernel when nothing is queued, with no array and no
    /// allocation; only what the kernel refuses is queued.
    package func write(_ buffer: ByteBuffer) {
        eventLoop.preconditionInEventLoop()
        guard state == .open, buffer.readableBytes > 0 else { return }
        guard writeQueueHead == writeQueue.count, fileQueue.isEmpty, !interest.contains(.write) else {
            writeQueue.append(buffer)
            pendingWriteBytes += buffer.readableBytes
            return
        }
        let result: IOResult<Int>
        do {
            result = try socket.write(buffer)
        } catch {
            close(error: error)
            return
        }
        var rest = buffer
        if case .processed(let written) = result {
            if written == buffer.readableBytes {
                if writeShutdownRequested { try? socket.shutdown(.write) }
                return
            }
            rest.moveReaderIndex(forwardBy: written)
        }
        writeQueue.append(rest)
        pendingWriteBytes += rest.readableBytes
        updateInterest(wantsWrite: true)
    }

    /// Writes bytes the caller keeps: straight to the kernel when nothing is queued; only the rest is copied.
    package func write(copying bytes: UnsafeRawBufferPointer) {
        eventLoop.preconditionInEventLoop()
        guard state == .open, !bytes.isEmpty else { return }
        var written = 0
        if writeQueueHead == writeQueue.count && fileQueue.isEmpty && !interest.contains(.write) {
            do {
                if case .processed(let count) = try socket.write(bytes) { written = count }
            } catch {
                close(error: error)
                return
            }
            if written == bytes.count {
                if writeShutdownRequested { try? socket.shutdown(.write) }
                return
            }
        }
        let rest = ByteBuffer(bytes: UnsafeRawBufferPointer(rebasing: bytes[written...]))
        writeQueue.append(rest)
        pendingWriteBytes += rest.readableBytes
        updateInterest(wantsWrite: true)
    }

    package func write(_ region: FileRegion) {
        eventLoop.preconditionInEventLoop()
        guard state == .open, region.count > 0 else { return }
        fileQueue.append(
            QueuedFile(
                position: writeQueue.count, file: region.file, offset: region.offset,
                remaining: region.count))
        pendingWriteBytes += region.count
        if interest.contains(.write) == false { flush() }
    }

    /// Writes queued bytes and file regions, in order, until the queue is empty or the kernel pushes back.
    private func flush() {
        var fileBytesLeft = Self.fileBytesPerFlush
        while true {
            let boundary = fileQueue.first?.position ?? writeQueue.count
            if writeQueueHead < boundary {
                guard flushBuffers(upTo: boundary) else { return }
                continue
            }
            guard !fileQueue.isEmpty else { break }
            guard fileBytesLeft > 0 else {
                updateInterest(wantsWrite: true)
                return
            }
            guard let sent = sendFirstFile(atMost: fileBytesLeft) else { return }
            fileBytesLeft -= sent
        }
        writeQueue.removeAll(keepingCapacity: writeQueue.capacity <= 16)
        writeQueueHead = 0
        if writeShutdownRequested {
            try? socket.shutdown(.write)
        }
        updateInterest(wantsWrite: false)
    }

    /// Writes queued buffers before index `boundary` with one gathering write.
    /// - Returns: Whether the caller may go on: false when the kernel pushed back or the stream closed.
    private func flushBuffers(upTo boundary: Int) -> Bool {
        let batch = writeQueue[writeQueueHead..<min(boundary, writeQueueHead + 64)]
        let result: IOResult<Int>
        do {
            result = try socket.write(gathering: batch)
        } catch {
            close(error: error)
            return false
        }
        guard case .processed(var written) = result else {
            updateInterest(wantsWrite: true)
            return false
        }
        pendingWriteBytes -= written
        drainedWriteBytes &+= UInt64(written)
        while written > 0 {
            let front = writeQueue[writeQueueHead].readableBytes
            if written >= front {
                written -= front
                writeQueueHead += 1
            } else {
                writeQueue[writeQueueHead].moveReaderIndex(forwardBy: written)
                written = 0
            }
        }
        return true
    }

    /// Sends the first queued file region with `sendfile(2)`, and drops it (and so its hold on the file) once sent.
    /// - Returns: The bytes sent, or nil when the kernel pushed back or the stream closed.
    private func sendFirstFile(atMost limit: Int) -> Int? {
        let result: IOResult<Int>
        do {
            result = try Posix.sendfile(
                to: socket.rawDescriptor, from: fileQueue[0].file.rawDescriptor,
                offset: &fileQueue[0].offset, count: min(fileQueue[0].remaining, limit))
        } catch {
            close(error: error)
            return nil
        }
        switch result {
        case .wouldBlock:
            updateInterest(wantsWrite: true)
            return nil
        case .processed(0):
            close(error: FileTruncatedError(path: fileQueue[0].file.path, offset: fileQueue[0].offset))
            return nil
        case .processed(let sent):
            pendingWriteBytes -= sent
            drainedWriteBytes &+= UInt64(sent)
            fileQueue[0].remaining -= sent
            if fileQueue[0].remaining == 0 { fileQueue.removeFirst() }
            return sent
        }
    }

    package func shutdownWrite() {
        eventLoop.preconditionInEventLoop()
        guard state == .open, !writeShutdownRequested else { return }
        writeShutdownRequested = true
        if pendingWriteBytes == 0 { try? socket.shutdown(.write) }
    }

    // MARK: Reading

    package func setReadingEnabled(_ enabled: Bool) {
        eventLoop.preconditionInEventLoop()
        guard state == .open, readingEnabled != enabled else { return }
        readingEnabled = enabled
        if !enabled, let watermark = gathering.readingPaused() { setReceiveLowWatermark(watermark, starting: false) }
        guard state == .open else { return }
        if isParked {
            // No readiness will come: the bytes are read from the loop's queue (after the caller's job, which may
            // be a delivery in progress).
            if enabled { scheduleParkedRead() }
            return
        }
        updateInterest(wantsWrite: interest.contains(.write))
    }

    /// Reads a parked stream's bytes, a budget at a time, until its end of stream, its error or a pause.
    private func scheduleParkedRead() {
        eventLoop.executeSoon { [weak self] in
            guard let self, self.isParked, self.readingEnabled, self.state == .open else { return }
            guard self.readAvailable() else {
                // A hung-up socket's read never waits; if one did, no readiness would ever end the wait.
                self.close(error: nil)
                return
            }
            if self.isParked && self.readingEnabled && self.state == .open { self.scheduleParkedRead() }
        }
    }

    /// Reads what the socket holds, within one wake-up's budget, and hands it to the delegate.
    /// - Returns: False when a read found nothing (EAGAIN); true otherwise.
    @discardableResult
    private func readAvailable() -> Bool {
        var budget = Self.bytesPerWakeup
        for _ in 0..<Self.readsPerWakeup where readingEnabled && state == .open && budget > 0 {
            let maxBytes = prepareReadBuffer()
            let result: IOResult<Int>
            do {
                result = try socket.read(into: &readBuffer, maxBytes: maxBytes)
            } catch {
                close(error: error)
                return true
            }
            switch result {
            case .wouldBlock:
                releaseReadBufferIfEmpty()
                return false
            case .processed(0):
                releaseReadBufferIfEmpty()
                // End of stream: stop watching for reads (level-triggered epoll would report it forever).
                readingEnabled = false
                updateInterest(wantsWrite: interest.contains(.write))
                if let delegate { delegate.streamDidReachEnd(self) } else { heldEndOfStream = true }
                if isParked && state == .open && pendingWriteBytes > 0 {
                    // Every byte the peer sent is delivered; what waits to be written never goes.
                    close(error: IOError(syscall: "sendmsg", errno: .brokenPipe))
                }
                return true
            case .processed(let count):
                gathering.didRead(count, asked: maxBytes, largest: Self.maximumReadSize)
                sizer.record(count, maximum: Self.maximumReadSize)
                // The delegate gets the buffer moved out of `self`: it may close the stream (and
                // so touch `readBuffer`) while it holds it, which an inout borrow of the property
                // would turn into an exclusivity violation.
                var delivered = ByteBuffer()
                swap(&delivered, &readBuffer)
                delegate?.stream(self, didRead: &delivered)
                if state == .open { swap(&delivered, &readBuffer) }
                // A short read emptied the socket: wait for readiness rather than spend a read on EAGAIN.
                if count < maxBytes { releaseReadBufferIfEmpty(); return true }
                budget -= count
            }
        }
        releaseReadBufferIfEmpty()
        return true
    }

    /// Makes `readBuffer` ready for the next read and returns how much that read asks for. The delegate usually
    /// keeps what it was handed as slices of the buffer (a body chunk), so its storage is still shared: rather
    /// than let the read copy on write into a new allocation, the buffer goes back to the loop, which reuses it
    /// once those slices are dropped, and a free one is borrowed (any unread bytes move into it).
    private func prepareReadBuffer() -> Int {
        let wanted = sizer.current
        let unread = readBuffer.readableBytes
        // Leftover bytes (a partial head or chunk line) stay in front: the read fills the rest of `wanted`,
        // unless they are already most of it (a large head arriving in pieces), when the buffer grows.
        let maxBytes = unread <= wanted / 2 ? wanted - unread : wanted
        if readBuffer.capacity == 0 {
            readBuffer = eventLoop.borrowReadBuffer(minimumCapacity: wanted)
        } else if !readBuffer.hasUniqueStorage() || readBuffer.capacity < unread + maxBytes {
            var fresh = eventLoop.borrowReadBuffer(minimumCapacity: Swift.max(wanted, unread + maxBytes))
            fresh.writeBuffer(readBuffer)
            readBuffer.moveReaderIndex(forwardBy: unread)
            eventLoop.returnReadBuffer(&readBuffer)
            readBuffer = fresh
        }
        return maxBytes
    }

    /// The delegate is owed at least `count` more bytes: while the peer sends faster than the stream reads, they
    /// gather in the kernel, up to one read's worth, before the loop is woken for them (see `ReceiveGathering`).
    package func expectAtLeast(_ count: Int) {
        let starting = !gathering.isGathering
        // A parked socket gets no more bytes to gather, and is read without readiness events.
        guard state == .open, !isParked, let watermark = gathering.expect(count, largest: Self.maximumReadSize) else { return }
        if starting {
            // Linux grows the receive buffer to hold a new watermark and, when it has to, clamps the advertised window
            // to it until autotuning grows it again: gathering starts only once the buffer holds twice as much.
            guard let buffer = try? socket.receiveBufferSize(), buffer >= 2 * watermark else {
                gathering.declined()
                return
            }
        }
        setReceiveLowWatermark(watermark, starting: starting)
        if gathering.isGathering && gatheringCheck == nil { scheduleGatheringCheck() }
    }

    private func setReceiveLowWatermark(_ watermark: Int, starting: Bool) {
        do {
            try socket.setReceiveLowWatermark(watermark)
        } catch {
            // Gathering is an optimisation: a socket that refuses to start it stays at 1 and delivers as bytes come.
            // One that refuses to lower its watermark would wait for more than may come, so it is closed.
            if starting {
                gathering.becameUnavailable()
            } else {
                close(error: error)
            }
        }
    }

    private func scheduleGatheringCheck() {
        // A strong capture, as the connection's timers: the check is cancelled when the stream closes.
        gatheringCheck = eventLoop.scheduleOnLoop(at: .now() + gatheringCheckInterval) { self.checkGathering() }
    }

    private func checkGathering() {
        gatheringCheck = nil
        guard state == .open else { return }
        if let watermark = gathering.check() { setReceiveLowWatermark(watermark, starting: false) }
        if gathering.isGathering { scheduleGatheringCheck() }
    }

    /// Hands a delegate that has just attached what arrived before it: the unread bytes, then the end of stream.
    private func deliverHeldEvents() {
        guard state == .open, let delegate else { return }
        if readBuffer.readableBytes > 0 {
            var delivered = ByteBuffer()
            swap(&delivered, &readBuffer)
            delegate.stream(self, didRead: &delivered)
            if state == .open { swap(&delivered, &readBuffer) }
            releaseReadBufferIfEmpty()
        }
        guard heldEndOfStream, state == .open, let delegate = self.delegate else { return }
        heldEndOfStream = false
        delegate.streamDidReachEnd(self)
    }

    private func releaseReadBufferIfEmpty() {
        if !keepsReadBuffer && readBuffer.isEmpty && readBuffer.capacity > 0 { eventLoop.returnReadBuffer(&readBuffer) }
    }

    // MARK: Readiness

    package func ready(_ event: ReadinessEvent) {
        readinessEventCount &+= 1
        if (event.isError || event.isFullHangUp) && !readingEnabled && state == .open && park() { return }
        if event.isError && !event.isReadable {
            let error = (try? Posix.pendingError(socket.rawDescriptor)) ?? nil
            close(error: IOError(syscall: "recv", errno: error ?? .connectionReset))
            return
        }
        if event.isWritable && state == .open { flush() }
        if (event.isReadable || event.isHangUp) && readingEnabled && state == .open { readAvailable() }
        if event.isWritable && state == .open && pendingWriteBytes == 0 {
            delegate?.streamDidDrainWrites(self)
        }
        if event.isFullHangUp && !readingEnabled && state == .open {
            // Nothing more can be read or written, and epoll reports EPOLLHUP whatever the
            // interest: close now rather than be woken for it on every iteration.
            close(error: pendingWriteBytes > 0 ? IOError(syscall: "sendmsg", errno: .brokenPipe) : nil)
        }
    }

    /// The socket hung up fully (or was reset) while reading is paused: if the kernel still holds bytes the peer
    /// sent, stops watching the socket and keeps them there for the reader, which a close would drop.
    /// - Returns: Whether the stream parked; false when nothing is left to read (the caller closes as before).
    private func park() -> Bool {
        guard let unread = try? socket.readableByteCount(), unread > 0 else { return false }
        isParked = true
        if let gatheringCheck { eventLoop.cancelOnLoop(gatheringCheck) }
        gatheringCheck = nil
        eventLoop.stopWatching(socket.rawDescriptor)
        return true
    }

    package func eventLoopIsClosing() {
        close(error: EventLoopClosedError(loopName: eventLoop.name))
    }

    private func updateInterest(wantsWrite: Bool) {
        guard state == .open else { return }
        // A parked socket is not watched (its writes fail at once, and its reads are scheduled).
        if isParked { return }
        var wanted: Interest = []
        if readingEnabled { wanted.insert(.read) }
        if wantsWrite { wanted.insert(.write) }
        guard wanted != interest else { return }
        interest = wanted
        do {
            try eventLoop.reregister(socket.rawDescriptor, key: registrationKey, interest: wanted)
        } catch {
            close(error: error)
        }
    }

    // MARK: Closing

    package func close(error: (any Error)?) {
        eventLoop.preconditionInEventLoop()
        guard state == .open else { return }
        state = .closed
        closeError = error
        if let gatheringCheck { eventLoop.cancelOnLoop(gatheringCheck) }
        gatheringCheck = nil
        // The socket is Wire's own and closed just below, which takes it off the epoll set.
        eventLoop.deregister(closing: registrationKey)
        try? socket.close()
        writeQueue.removeAll()
        // The regions' files close here unless a handler still holds them: a reset peer or a shutdown leaks none.
        fileQueue.removeAll()
        pendingWriteBytes = 0
        readBuffer.releaseStorage()
        let delegate = self.delegate
        self.delegate = nil
        delegate?.stream(self, didCloseWith: error)
    }

    /// Ends the connection with a reset (RST) instead of a FIN: `SO_LINGER` with 0 seconds, then `close`, dropping
    /// any queued bytes. For tools that test how peers take an abortive close (`wire request --raw --reset`).
    package func reset() {
        eventLoop.preconditionInEventLoop()
        guard state == .open else { return }
        try? socket.setOption(.linger(seconds: 0))
        close(error: nil)
    }

    deinit {
        // The socket closes itself when released; a stream dropped while registered is a bug.
        assert(state == .closed, "SocketStream released while open: close it first")
    }
}

extension SocketStream {
    /// The underlying socket, for tests that need to set options on it.
    package var socketForTesting: Socket { socket }
}
