/// Why a proxy's handshake on a connected stream did not open the tunnel.
package enum ProxyHandshakeFailure: Error, Sendable {
    /// The SOCKS proxy refused, or broke the protocol (the machine's error).
    case socks(SOCKSError)
    /// The stream failed under the handshake, with the error it closed with.
    case streamFailed(any Error)
    /// The proxy, or the far end through it, sent this many bytes of the tunnel before the client's first, where
    /// it must wait (TLS and HTTP speak first).
    case earlyBytes(Int)
    /// The handshake had not ended at the deadline.
    case timedOut
    /// The stream's loop shut down.
    case loopClosed
}

/// The shell around a SOCKS handshake machine (`SOCKS4Handshake`, `SOCKS5Handshake`): writes what the machine says to
/// a connected stream, hands it what the proxy sends, and completes once the proxy reports the tunnel open. The stream
/// then has no delegate and keeps reading, so its next owner (TLS, the HTTP connection) finds any byte that came
/// since; on failure it is closed.
final class SOCKSStreamHandshake: ByteStreamDelegate {
    /// One of the two machines.
    enum Machine: Sendable {
        case v4(SOCKS4Handshake)
        case v5(SOCKS5Handshake)

        mutating func start() -> SOCKSHandshakeAction {
            switch self {
            case .v4(var machine):
                defer { self = .v4(machine) }
                return machine.start()
            case .v5(var machine):
                defer { self = .v5(machine) }
                return machine.start()
            }
        }

        mutating func receive(_ bytes: some Collection<UInt8>) -> SOCKSHandshakeAction {
            switch self {
            case .v4(var machine):
                defer { self = .v4(machine) }
                return machine.receive(bytes)
            case .v5(var machine):
                defer { self = .v5(machine) }
                return machine.receive(bytes)
            }
        }

        mutating func endOfStream() -> SOCKSHandshakeAction {
            switch self {
            case .v4(var machine):
                defer { self = .v4(machine) }
                return machine.endOfStream()
            case .v5(var machine):
                defer { self = .v5(machine) }
                return machine.endOfStream()
            }
        }
    }

    private var machine: Machine
    private let stream: any ByteStream
    private let outcome: Promise<Void, ProxyHandshakeFailure>
    private var timer: TimerQueue<() -> Void>.ID?
    /// Bytes the proxy sent so far, for the offset of a byte it sent too many.
    private var received = 0
    private var finished = false

    private init(machine: Machine, stream: any ByteStream, outcome: Promise<Void, ProxyHandshakeFailure>) {
        self.machine = machine
        self.stream = stream
        self.outcome = outcome
    }

    /// Runs the handshake on `stream` by `deadline`.
    /// - Returns: The same stream, the tunnel to the target, with no delegate.
    /// - Throws: `ProxyHandshakeFailure`; the stream is closed then.
    static func run(_ stream: LoopBound<any ByteStream>, machine: Machine, deadline: Deadline)
        async throws(ProxyHandshakeFailure) -> LoopBound<any ByteStream>
    {
        let outcome = Promise<Void, ProxyHandshakeFailure>()
        stream.loop.execute(
            {
                let shell = SOCKSStreamHandshake(machine: machine, stream: stream.value, outcome: outcome)
                shell.start(deadline: deadline)
            }, ifClosed: { _ = outcome.fail(.loopClosed) })
        try await outcome.get()
        return stream
    }

    private func start(deadline: Deadline) {
        guard stream.isOpen else {
            return finish(.failure(.streamFailed(stream.closeError ?? SOCKSError.closedDuringHandshake(offset: 0))))
        }
        // The stream holds its delegate strongly until it closes, and the timer holds the shell until it fires or
        // is cancelled: no other owner is needed while the handshake runs.
        stream.delegate = self
        timer = stream.eventLoop.scheduleOnLoop(at: deadline) { [self] in
            timer = nil
            finish(.failure(.timedOut))
        }
        perform(machine.start())
    }

    private func perform(_ action: SOCKSHandshakeAction) {
        guard !finished else { return }
        switch action {
        case .send(let bytes):
            stream.write([ByteBuffer(bytes: bytes)])
        case .awaitReply:
            break
        case .established(_, let remainder):
            // HTTP and TLS speak first: a proxy (or target) that sends before them breaks the protocol.
            guard remainder.isEmpty else {
                return finish(.failure(.socks(.malformedReply(.unexpectedBytes, offset: received - remainder.count))))
            }
            finish(.success(()))
        case .failed(let error):
            finish(.failure(.socks(error)))
        }
    }

    private func finish(_ result: Result<Void, ProxyHandshakeFailure>) {
        guard !finished else { return }
        finished = true
        if let timer {
            stream.eventLoop.cancelOnLoop(timer)
            self.timer = nil
        }
        if stream.delegate === self { stream.delegate = nil }
        if case .failure = result, stream.isOpen { stream.close(error: nil) }
        _ = outcome.complete(result)
    }

    func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer) {
        let bytes = buffer.readableBytesArray
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        received += bytes.count
        perform(machine.receive(bytes))
    }

    func streamDidReachEnd(_ stream: any ByteStream) {
        perform(machine.endOfStream())
    }

    func streamDidDrainWrites(_ stream: any ByteStream) {}

    func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?) {
        guard !finished else { return }
        if let error {
            finish(.failure(.streamFailed(error)))
        } else {
            perform(machine.endOfStream())
        }
    }
}
