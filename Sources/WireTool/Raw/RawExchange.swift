import Wire

/// How a raw exchange's connection ended, as `wire request --raw` reports it.
enum RawConnectionEnd: Equatable, Sendable {
    /// The peer sent end of stream (a FIN; over TLS, close_notify or the socket's end).
    case fin
    /// The peer reset the connection (ECONNRESET).
    case reset
    /// Nothing arrived for `--read-timeout` (after the last write, or while a write waited for the peer to read).
    case timeout
    /// `--reset`: this side reset the connection after its last write.
    case resetSent
    /// Another failure: the error's text.
    case failed(String)

    /// The word in the JSON line.
    var name: String {
        switch self {
        case .fin: "fin"
        case .reset: "rst"
        case .timeout: "timeout"
        case .resetSent: "reset-sent"
        case .failed: "error"
        }
    }
}

/// What one raw exchange saw.
struct RawOutcome: Sendable {
    /// Every received byte, in order.
    var received: [UInt8] = []
    /// How many bytes each read delivered, in order.
    var readSizes: [Int] = []
    /// How many payload bytes were handed to the connection.
    var sentBytes = 0
    /// How many writes were made.
    var writes = 0
    /// Whether the peer's end of stream came before the last write.
    var peerEndedEarly = false
    /// How the connection ended.
    var end = RawConnectionEnd.fin
    /// With `--record`: every write and read (`out` true for a write) and each side's end of stream, timed from the
    /// exchange's start.
    var events: [(t: Duration, out: Bool, bytes: [UInt8]?)] = []
}

/// The writes and reads of one raw exchange on one loop: each segment after its delay, the chosen ending, and every
/// byte read until the peer ends, resets, or goes quiet for the read timeout.
///
/// Loop-confined: made, driven and finished on `stream`'s loop; `completion` is called there once.
final class RawExchange: ByteStreamDelegate {
    private let stream: any ByteStream
    /// The socket under `stream` (the same object for plain TCP), for `--reset`.
    private let socket: SocketStream
    private let payload: [UInt8]
    private let writes: [RawSegmentPlan.Write]
    private let ending: RawRequestOptions.Ending
    private let readTimeout: Duration
    private var completion: ((RawOutcome) -> Void)?
    private var outcome = RawOutcome()
    private var nextWrite = 0
    private var waitingForDrain = false
    private var sendingDone = false
    private var peerEnded = false
    private var delayTimer: TimerQueue<() -> Void>.ID?
    private var idleTimer: TimerQueue<() -> Void>.ID?
    /// Whether the outcome lists every write and read (`--record`).
    var recordsEvents = false
    private let began = ContinuousClock.now

    init(
        stream: any ByteStream, socket: SocketStream, payload: [UInt8], writes: [RawSegmentPlan.Write],
        ending: RawRequestOptions.Ending, readTimeout: Duration, completion: @escaping (RawOutcome) -> Void
    ) {
        self.stream = stream
        self.socket = socket
        self.payload = payload
        self.writes = writes
        self.ending = ending
        self.readTimeout = readTimeout
        self.completion = completion
    }

    /// Takes the stream's events and starts writing.
    func start() {
        stream.eventLoop.preconditionInEventLoop()
        stream.delegate = self
        guard stream.isOpen else {
            finish(stream.closeError.map { Self.classify($0) } ?? .fin)
            return
        }
        scheduleNextWrite()
    }

    private func scheduleNextWrite() {
        guard completion != nil else { return }
        guard nextWrite < writes.count else {
            sendingFinished()
            return
        }
        let delay = writes[nextWrite].delay
        if delay > .zero {
            disarmIdleTimer()
            delayTimer = stream.eventLoop.scheduleOnLoop(at: .after(delay)) { [self] in
                delayTimer = nil
                writeNext()
            }
        } else {
            writeNext()
        }
    }

    private func writeNext() {
        guard completion != nil, stream.isOpen else { return }
        let write = writes[nextWrite]
        nextWrite += 1
        stream.write([ByteBuffer(bytes: payload[write.range])])
        if recordsEvents { outcome.events.append((ContinuousClock.now - began, true, Array(payload[write.range]))) }
        outcome.writes += 1
        outcome.sentBytes += write.range.count
        if stream.pendingWriteBytes == 0 {
            scheduleNextWrite()
        } else {
            // The peer is not reading: the next delay counts from when this write has left.
            waitingForDrain = true
            armIdleTimer()
        }
    }

    private func sendingFinished() {
        guard !sendingDone else { return }
        sendingDone = true
        switch ending {
        case .keepOpen: break
        case .halfClose:
            stream.shutdownWrite()
            if recordsEvents { outcome.events.append((ContinuousClock.now - began, true, nil)) }
        case .reset:
            finish(.resetSent)
            return
        }
        if peerEnded {
            finish(.fin)
            return
        }
        armIdleTimer()
    }

    private func armIdleTimer() {
        disarmIdleTimer()
        idleTimer = stream.eventLoop.scheduleOnLoop(at: .after(readTimeout)) { [self] in
            idleTimer = nil
            finish(.timeout)
        }
    }

    private func disarmIdleTimer() {
        if let idleTimer { stream.eventLoop.cancelOnLoop(idleTimer) }
        idleTimer = nil
    }

    /// Ends the exchange once: timers cancelled, the connection closed (reset for `--reset`), the outcome reported.
    private func finish(_ end: RawConnectionEnd) {
        guard let completion else { return }
        self.completion = nil
        disarmIdleTimer()
        if let delayTimer { stream.eventLoop.cancelOnLoop(delayTimer) }
        delayTimer = nil
        outcome.end = end
        if end == .resetSent {
            socket.reset()
        }
        stream.close(error: nil)
        completion(outcome)
    }

    /// A close error in the report's words: a reset is a reset, whatever layer passed it up.
    static func classify(_ error: any Error) -> RawConnectionEnd {
        if let error = error as? IOError, error.errno == .connectionReset { return .reset }
        let text = "\(error)"
        if text.contains("errno \(Errno.connectionReset.rawValue)") { return .reset }
        return .failed(text)
    }

    // MARK: ByteStreamDelegate

    func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer) {
        outcome.readSizes.append(buffer.readableBytes)
        if recordsEvents { outcome.events.append((ContinuousClock.now - began, false, buffer.readableBytesArray)) }
        outcome.received.append(contentsOf: buffer.readableBytesArray)
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        if sendingDone || waitingForDrain { armIdleTimer() }
    }

    func streamDidReachEnd(_ stream: any ByteStream) {
        peerEnded = true
        if recordsEvents { outcome.events.append((ContinuousClock.now - began, false, nil)) }
        if sendingDone {
            finish(.fin)
        } else {
            outcome.peerEndedEarly = true
        }
    }

    func streamDidDrainWrites(_ stream: any ByteStream) {
        guard waitingForDrain else { return }
        waitingForDrain = false
        disarmIdleTimer()
        scheduleNextWrite()
    }

    func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?) {
        finish(error.map { Self.classify($0) } ?? .fin)
    }
}
