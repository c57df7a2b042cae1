import Wire

/// TLS over another byte stream (a `SocketStream`), as a `ByteStream`: the HTTP layer above
/// reads and writes plaintext, the stream below carries records.
///
/// The stream is its lower stream's delegate. OpenSSL reads ciphertext straight out of the buffer
/// the lower stream delivered (see `SSLConnection`), which goes back to the lower stream once read;
/// plaintext is decrypted only while reading is enabled, so a paused reader leaves at most one read
/// of ciphertext waiting (that buffer, kept as it is), never an unbounded pile of plaintext. Writes
/// are encrypted at once and handed to the lower stream, whose queue is the only write buffer.
/// Plaintext and records go through buffers borrowed from the loop's pool, so an idle stream holds
/// none. Nothing ever blocks: OpenSSL's "want read" means "wait for the next bytes".
///
/// Loop-confined: every member runs on `eventLoop`.
package final class TLSStream: ByteStream, ByteStreamDelegate {
    private enum State {
        /// The handshake runs; the delegate hears nothing yet. Valid transitions: `.open`, `.closed`.
        case handshaking
        /// Application data flows. Valid transition: `.closed`.
        case open
        /// Closed; `didClose` was delivered.
        case closed
    }

    package let eventLoop: EventLoop
    /// Held strongly until the stream closes, as `SocketStream` holds its delegate (no side table on a hot object).
    package var delegate: (any ByteStreamDelegate)? {
        didSet {
            // Plaintext may have been decrypted before anyone listened (the client attaches its
            // HTTP connection one hop after the handshake).
            if delegate != nil && state == .open { scheduleReading() }
        }
    }
    private let lower: any ByteStream
    private let connection: SSLConnection
    private var state = State.handshaking
    // The two buffers of the read path opt out of dynamic exclusivity checks (several per record): each is borrowed
    // only for one OpenSSL call, whose callbacks never reach this stream, and moved out before the delegate runs.
    /// Decrypted bytes not yet delivered, in a buffer borrowed from the loop while it has any.
    @exclusivity(unchecked) private var plaintext = ByteBuffer()
    /// Ciphertext the lower stream delivered that OpenSSL has not read yet: its read buffer itself, taken as it is.
    /// Empty between events unless decryption stopped before the end of a read (a paused reader, a full delivery).
    @exclusivity(unchecked) private var ciphertext = ByteBuffer()
    private var readingEnabled = true
    private var readScheduled = false
    private var receivedCloseNotify = false
    private var lowerReachedEnd = false
    private var writeShutdownRequested = false
    private var writesBeforeHandshake: [ByteBuffer] = []
    private var handshakeTimer: TimerQueue<() -> Void>.ID?
    private var handshakeCompletion: ((Result<Void, TLSError>) -> Void)?
    /// Runs after a successful handshake, before the stream reports itself ready; an error refuses the peer.
    private let evaluateTrust: ((SSLConnection) -> TLSError?)?
    package private(set) var securityInfo: TransportSecurityInfo?
    package private(set) var closeError: (any Error)?

    /// Plaintext delivered per read event at most, as a socket read would be.
    static let deliverySize = 64 * 1024

    /// Wraps `lower` and starts the handshake; loop thread only.
    /// - Parameters:
    ///   - lower: The connected stream; the TLS stream becomes its delegate and owns it.
    ///   - connection: The OpenSSL state, client or server.
    ///   - deadline: When the handshake must be done; the stream closes with `.handshakeTimeout` then.
    ///   - evaluateTrust: Checks run after the handshake (pinning, the trust hook).
    ///   - completion: Called once with the handshake's outcome.
    package init(
        lower: any ByteStream, connection: SSLConnection, deadline: Deadline,
        evaluateTrust: ((SSLConnection) -> TLSError?)? = nil,
        completion: ((Result<Void, TLSError>) -> Void)? = nil
    ) {
        lower.eventLoop.preconditionInEventLoop()
        self.eventLoop = lower.eventLoop
        self.lower = lower
        self.connection = connection
        self.evaluateTrust = evaluateTrust
        self.handshakeCompletion = completion
        lower.delegate = self
        let timeout = deadline - .now()
        handshakeTimer = eventLoop.scheduleOnLoop(at: deadline) { [weak self] in
            self?.handshakeTimer = nil
            self?.fail(TLSError(.handshakeTimeout, "the TLS handshake did not complete within \(timeout)", host: connection.host))
        }
        advanceHandshake()
    }

    package var pendingWriteBytes: Int { lower.pendingWriteBytes + writesBeforeHandshake.reduce(0) { $0 + $1.readableBytes } }
    /// Progress in ciphertext: what the socket below has drained.
    package var drainedWriteBytes: UInt64 { lower.drainedWriteBytes }
    package var isOpen: Bool { state != .closed }
    package var localAddress: SocketAddress? { lower.localAddress }
    package var remoteAddress: SocketAddress? { lower.remoteAddress }
    package func tcpInfo() -> TCPInfo? { lower.tcpInfo() }

    // MARK: Handshake

    private func advanceHandshake() {
        guard state == .handshaking else { return }
        let step = connection.handshake(input: &ciphertext)
        flushCiphertext()
        // Writing the flight can fail and close this stream re-entrantly (a peer that resets right after its
        // Finished): the close has been delivered, and a completed handshake must not reopen the stream.
        guard state == .handshaking else { return }
        switch step {
        case .needsInput:
            if lowerReachedEnd {
                fail(TLSError(.handshakeFailed, "the peer closed the connection during the handshake", host: connection.host))
            }
        case .failed(let error):
            fail(connection.host.map { error.adding(host: $0) } ?? error)
        case .complete:
            if let evaluateTrust, let refusal = evaluateTrust(connection) {
                fail(refusal)
                return
            }
            if let handshakeTimer { eventLoop.cancelOnLoop(handshakeTimer) }
            handshakeTimer = nil
            securityInfo = connection.securityInfo(peer: connection.peerChain(), verified: connection.verifiedChain())
            state = .open
            let queued = writesBeforeHandshake
            writesBeforeHandshake.removeAll()
            if !queued.isEmpty { write(queued) }
            if writeShutdownRequested {
                writeShutdownRequested = false
                shutdownWrite()
            }
            if !readingEnabled && !lowerReachedEnd { lower.setReadingEnabled(false) }
            let completion = handshakeCompletion
            handshakeCompletion = nil
            completion?(.success(()))
            // Application data may have come with the handshake's last flight.
            if state == .open { readPlaintext() }
        }
    }

    /// Ends a handshake that cannot succeed: the completion hears the error, the delegate
    /// sees the stream close with it.
    private func fail(_ error: TLSError) {
        guard state != .closed else { return }
        close(error: error)
    }

    // MARK: Reading

    /// Decrypts and delivers while the reader wants bytes, one delivery (up to 64 KiB) at a time,
    /// so a reader that pauses stops the decryption too.
    private func readPlaintext() {
        var starved = false
        while state == .open && readingEnabled && !receivedCloseNotify && delegate != nil {
            var failure: TLSError?
            starved = false
            preparePlaintextBuffer()
            decrypting: while plaintext.readableBytes < Self.deliverySize {
                let room = Self.deliverySize - plaintext.readableBytes
                switch connection.read(into: &plaintext, maxBytes: room, input: &ciphertext) {
                case .bytes:
                    continue
                case .needsInput:
                    starved = true
                case .closeNotify:
                    receivedCloseNotify = true
                case .failed(let error):
                    failure = error
                }
                break decrypting
            }
            // Reading may have produced records to send (the answer to a TLS 1.3 key update).
            flushCiphertext()
            if let failure {
                close(error: failure)
                return
            }
            let before = plaintext.readableBytes
            if before > 0 { deliver() }
            if receivedCloseNotify {
                // Whatever came after close_notify is no data: dropped with the buffers.
                ciphertext.moveReaderIndex(forwardBy: ciphertext.readableBytes)
                releasePlaintextBufferIfEmpty()
                if state == .open { delegate?.streamDidReachEnd(self) }
                return
            }
            // Nothing more to decrypt, or a reader that took nothing: wait for the next event.
            if starved || plaintext.readableBytes == before { break }
        }
        releasePlaintextBufferIfEmpty()
        if starved, state == .open, lowerReachedEnd, readingEnabled {
            // End of stream without close_notify: the data may have been cut short by anyone on the path.
            close(
                error: TLSError(
                    .truncatedStream, "the peer closed the connection without sending close_notify",
                    host: connection.host))
        }
    }

    private func deliver() {
        guard plaintext.readableBytes > 0, let delegate else { return }
        // Moved out of `self` while the delegate holds it: it may close the stream (see SocketStream).
        var delivered = ByteBuffer()
        swap(&delivered, &plaintext)
        delegate.stream(self, didRead: &delivered)
        // The buffer comes back with what the reader left (the next decryption appends after it); once closed,
        // it is dropped with the rest.
        if state == .open { swap(&delivered, &plaintext) }
    }

    /// Makes `plaintext` ready to take up to a delivery's worth: a buffer borrowed from the loop when it has none,
    /// or a fresh one (the unread bytes moved into it) when the reader still holds slices of the current one, which
    /// goes back to the loop to be reused once they are dropped (see `ReadBufferPool`).
    private func preparePlaintextBuffer() {
        let unread = plaintext.readableBytes
        guard unread < Self.deliverySize else { return }
        if plaintext.capacity == 0 {
            plaintext = eventLoop.borrowReadBuffer(minimumCapacity: Self.deliverySize)
        } else if !plaintext.hasUniqueStorage() {
            var fresh = eventLoop.borrowReadBuffer(minimumCapacity: Self.deliverySize)
            fresh.writeBuffer(plaintext)
            plaintext.moveReaderIndex(forwardBy: unread)
            eventLoop.returnReadBuffer(&plaintext)
            plaintext = fresh
        }
    }

    /// Gives the plaintext buffer back to the loop once everything in it was delivered.
    private func releasePlaintextBufferIfEmpty() {
        if plaintext.isEmpty && plaintext.capacity > 0 { eventLoop.returnReadBuffer(&plaintext) }
    }

    package func setReadingEnabled(_ enabled: Bool) {
        eventLoop.preconditionInEventLoop()
        guard state != .closed, readingEnabled != enabled else { return }
        readingEnabled = enabled
        // The handshake reads whatever the layer above wants; the switch applies once it is done.
        guard state == .open else { return }
        if !lowerReachedEnd { lower.setReadingEnabled(enabled) }
        if enabled { scheduleReading() }
    }

    /// Decrypts what is already buffered after the current event: no socket readiness will
    /// announce bytes that are already in OpenSSL's hands.
    private func scheduleReading() {
        guard !readScheduled else { return }
        readScheduled = true
        eventLoop.executeSoon { [weak self] in
            guard let self else { return }
            self.readScheduled = false
            self.readPlaintext()
            self.releaseCiphertextIfEmpty()
        }
    }

    /// Gives the kept ciphertext's buffer back to the loop once OpenSSL has read all of it, outside a delivery from
    /// the lower stream (during one, the buffer goes back to the lower stream instead).
    private func releaseCiphertextIfEmpty() {
        if ciphertext.isEmpty && ciphertext.capacity > 0 { eventLoop.returnReadBuffer(&ciphertext) }
    }

    // MARK: Writing

    package func write(_ buffers: [ByteBuffer]) {
        eventLoop.preconditionInEventLoop()
        switch state {
        case .closed:
            return
        case .handshaking:
            writesBeforeHandshake.append(contentsOf: buffers.filter { $0.readableBytes > 0 })
            return
        case .open:
            break
        }
        for buffer in buffers where buffer.readableBytes > 0 {
            prepareCiphertextBuffer(forPlaintext: buffer.readableBytes)
            if let error = connection.write(buffer) {
                close(error: error)
                return
            }
        }
        flushCiphertext()
    }

    /// Encrypts straight from the caller's bytes: nothing is copied before OpenSSL reads them (except before the
    /// handshake is done, when they wait their turn).
    package func write(copying bytes: UnsafeRawBufferPointer) {
        eventLoop.preconditionInEventLoop()
        guard !bytes.isEmpty else { return }
        switch state {
        case .closed:
            return
        case .handshaking:
            writesBeforeHandshake.append(ByteBuffer(bytes: bytes))
            return
        case .open:
            break
        }
        prepareCiphertextBuffer(forPlaintext: bytes.count)
        if let error = connection.write(bytes) {
            close(error: error)
            return
        }
        flushCiphertext()
    }

    /// Lends the connection a buffer from the loop that holds all the records for `count` bytes of plaintext, unless
    /// it holds records already (which the next records follow).
    private func prepareCiphertextBuffer(forPlaintext count: Int) {
        guard !connection.hasCiphertext else { return }
        var buffer = eventLoop.borrowReadBuffer(minimumCapacity: SSLConnection.ciphertextCapacity(forPlaintext: count))
        connection.offerCiphertextBuffer(&buffer)
        if buffer.capacity > 0 { eventLoop.returnReadBuffer(&buffer) }
    }

    /// Hands the records OpenSSL wrote to the lower stream, and their buffer back to the loop, which reuses it once
    /// the lower stream has written them.
    private func flushCiphertext() {
        guard var records = connection.takeCiphertext() else { return }
        if lower.isOpen { lower.write([records]) }
        records.moveReaderIndex(forwardBy: records.readableBytes)
        eventLoop.returnReadBuffer(&records)
    }

    package func shutdownWrite() {
        eventLoop.preconditionInEventLoop()
        switch state {
        case .closed:
            return
        case .handshaking:
            writeShutdownRequested = true
        case .open:
            connection.shutdown()
            flushCiphertext()
            lower.shutdownWrite()
        }
    }

    // MARK: Closing

    package func close(error: (any Error)?) {
        eventLoop.preconditionInEventLoop()
        guard state != .closed else { return }
        if error == nil && state == .open {
            // An orderly close says so (close_notify), so the peer can tell it from truncation.
            connection.shutdown()
            flushCiphertext()
        }
        let wasHandshaking = state == .handshaking
        state = .closed
        closeError = error
        if let handshakeTimer { eventLoop.cancelOnLoop(handshakeTimer) }
        handshakeTimer = nil
        lower.delegate = nil
        lower.close(error: nil)
        plaintext.releaseStorage()
        ciphertext.releaseStorage()
        writesBeforeHandshake.removeAll()
        let completion = handshakeCompletion
        handshakeCompletion = nil
        if wasHandshaking {
            let tlsError =
                (error as? TLSError)
                ?? TLSError(
                    .handshakeFailed, "the connection closed during the handshake\(error.map { ": \($0)" } ?? "")",
                    host: connection.host)
            completion?(.failure(tlsError))
        }
        let delegate = self.delegate
        self.delegate = nil
        delegate?.stream(self, didCloseWith: error)
    }

    // MARK: The lower stream's events

    package func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer) {
        guard state != .closed, !receivedCloseNotify else {
            // Nothing after close_notify is data: dropped rather than kept.
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            return
        }
        if ciphertext.readableBytes == 0 {
            // The lower stream's buffer itself is what OpenSSL reads from: no copy.
            swap(&ciphertext, &buffer)
        } else {
            // Behind ciphertext still kept from an earlier read (only a paused reader leaves some): appended.
            ciphertext.writeBuffer(buffer)
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        }
        switch state {
        case .handshaking:
            advanceHandshake()
        case .open:
            readPlaintext()
            // Paused: keep what arrived (at most this one read) and stop the socket.
            if !readingEnabled && !lowerReachedEnd && lower.isOpen { lower.setReadingEnabled(false) }
        case .closed:
            break
        }
        if ciphertext.readableBytes == 0 {
            // All read (OpenSSL holds a partial record itself): the buffer goes back to the lower stream, which
            // reads into it again.
            swap(&ciphertext, &buffer)
            ciphertext.releaseStorage()
        }
    }

    package func streamDidReachEnd(_ stream: any ByteStream) {
        lowerReachedEnd = true
        switch state {
        case .handshaking: advanceHandshake()
        case .open: readPlaintext()
        case .closed: break
        }
        releaseCiphertextIfEmpty()
    }

    package func streamDidDrainWrites(_ stream: any ByteStream) {
        guard state == .open, writesBeforeHandshake.isEmpty else { return }
        delegate?.streamDidDrainWrites(self)
    }

    package func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?) {
        guard state != .closed else { return }
        // The socket failed (reset, loop shutdown): pass its error up, so a reset is still a reset.
        let wasHandshaking = state == .handshaking
        state = .closed
        closeError = error
        if let handshakeTimer { eventLoop.cancelOnLoop(handshakeTimer) }
        handshakeTimer = nil
        plaintext.releaseStorage()
        ciphertext.releaseStorage()
        let completion = handshakeCompletion
        handshakeCompletion = nil
        if wasHandshaking {
            completion?(
                .failure(
                    TLSError(
                        .handshakeFailed,
                        "the connection failed during the handshake: \(error.map { "\($0)" } ?? "closed")",
                        host: connection.host)))
        }
        let delegate = self.delegate
        self.delegate = nil
        delegate?.stream(self, didCloseWith: error)
    }
}
