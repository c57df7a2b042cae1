import Wire

/// Plays one side of a recorded connection on a live stream (`ReplayScript`): each write once the peer has come as
/// far as in the recording and the recorded pause has passed, each as one write (the recorded segmenting), the next
/// only once the last has left; reads everything the peer sends.
///
/// It ends when the peer ends its side (FIN) or resets, when nothing happens for `idleTimeout` while it waits for the
/// peer, or, with `endsWhenAnswered` (a replayed client), once every write is out and the peer sent all it did in the
/// recording. Loop-confined: made, driven and finished on the stream's loop; `completion` is called there once.
final class ReplayPlayer: ByteStreamDelegate {
    /// What a replay saw.
    struct Outcome: Sendable {
        var received: [UInt8] = []
        var reads = 0
        var sent = 0
        var writes = 0
        var end = RawConnectionEnd.fin
    }

    private let stream: any ByteStream
    private let script: ReplayScript
    private let idleTimeout: Duration
    private let endsWhenAnswered: Bool
    private var completion: ((Outcome) -> Void)?
    private var outcome = Outcome()
    private var peer: LiveProgress
    private var next = 0
    private var waitingForDrain = false
    private var writesDone = false
    private var peerEnded = false
    private var pauseTimer: TimerQueue<() -> Void>.ID?
    private var idleTimer: TimerQueue<() -> Void>.ID?

    init(
        stream: any ByteStream, script: ReplayScript, idleTimeout: Duration, endsWhenAnswered: Bool,
        completion: @escaping (Outcome) -> Void
    ) {
        self.stream = stream
        self.script = script
        self.idleTimeout = idleTimeout
        self.endsWhenAnswered = endsWhenAnswered
        self.completion = completion
        peer = LiveProgress(script.progress, methods: script.methods)
    }

    /// Takes the stream's events and starts playing.
    func start() {
        stream.eventLoop.preconditionInEventLoop()
        stream.delegate = self
        guard stream.isOpen else {
            finish(stream.closeError.map { RawExchange.classify($0) } ?? .fin)
            return
        }
        advance()
    }

    /// Ends the replay now (the tool is stopping).
    func stop() {
        finish(.failed("stopped"))
    }

    private var peerAnswered: Bool { peerEnded || peer.count >= script.peerTotal }

    /// Writes what may go out now, or waits (for the peer, a pause, or a drain).
    private func advance() {
        guard completion != nil, pauseTimer == nil, !waitingForDrain else { return }
        guard next < script.writes.count else {
            sendingFinished()
            return
        }
        let write = script.writes[next]
        guard peer.count >= write.needs else {
            // A peer that ended its side will not get this far: the rest is not played.
            if peerEnded { finish(.fin) } else { armIdleTimer() }
            return
        }
        disarmIdleTimer()
        if write.delay > .zero {
            pauseTimer = stream.eventLoop.scheduleOnLoop(at: .after(write.delay)) { [self] in
                pauseTimer = nil
                writeNext()
            }
        } else {
            writeNext()
        }
    }

    private func writeNext() {
        guard completion != nil, stream.isOpen else { return }
        let write = script.writes[next]
        next += 1
        stream.write([ByteBuffer(bytes: write.bytes)])
        outcome.writes += 1
        outcome.sent += write.bytes.count
        if stream.pendingWriteBytes > 0 {
            // The peer is not reading: the next write waits until this one has left, as it did in the recording.
            waitingForDrain = true
            armIdleTimer()
        } else {
            advance()
        }
    }

    private func sendingFinished() {
        if !writesDone {
            writesDone = true
            if script.endsAfterWrites { stream.shutdownWrite() }
        }
        if peerEnded || (endsWhenAnswered && peerAnswered) {
            finish(.fin)
        } else {
            armIdleTimer()
        }
    }

    private func armIdleTimer() {
        disarmIdleTimer()
        idleTimer = stream.eventLoop.scheduleOnLoop(at: .after(idleTimeout)) { [self] in
            idleTimer = nil
            finish(.timeout)
        }
    }

    private func disarmIdleTimer() {
        if let idleTimer { stream.eventLoop.cancelOnLoop(idleTimer) }
        idleTimer = nil
    }

    private func finish(_ end: RawConnectionEnd) {
        guard let completion else { return }
        self.completion = nil
        disarmIdleTimer()
        if let pauseTimer { stream.eventLoop.cancelOnLoop(pauseTimer) }
        pauseTimer = nil
        outcome.end = end
        stream.close(error: nil)
        completion(outcome)
    }

    // MARK: ByteStreamDelegate

    func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer) {
        let bytes = buffer.readableBytesArray
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        outcome.reads += 1
        outcome.received += bytes
        peer.feed(bytes)
        if idleTimer != nil { armIdleTimer() }
        advance()
    }

    func streamDidReachEnd(_ stream: any ByteStream) {
        peerEnded = true
        peer.finish()
        if writesDone {
            finish(.fin)
        } else {
            advance()
        }
    }

    func streamDidDrainWrites(_ stream: any ByteStream) {
        guard waitingForDrain else { return }
        waitingForDrain = false
        disarmIdleTimer()
        advance()
    }

    func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?) {
        finish(error.map { RawExchange.classify($0) } ?? .fin)
    }
}
