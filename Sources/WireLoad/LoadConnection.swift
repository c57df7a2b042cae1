import Wire

/// One connection of a load run: sends the plan's request (or a pipelined batch of it), parses the
/// answers in place, and reports each to its worker. Loop-confined, like its stream.
///
/// The request path allocates nothing: the bytes sent are a slice of the worker's one batch
/// buffer, the read buffer is kept for the connection's life, and the parser hands out heads
/// without copying their fields. A Swift task never appears: everything runs in the stream's
/// callbacks and the loop's timers.
final class LoadConnection<Recorder: LatencyRecorder>: ByteStreamDelegate {
    private enum State {
        /// Not connected and not trying (before the run, or done).
        case idle
        /// A connection race is running.
        case connecting
        /// Connected.
        case open
        /// Waiting for the retry timer after a failed connect.
        case retryWait
        /// Connecting failed too often in a row (request-count runs only): out of the run.
        case gaveUp
        /// The run ended.
        case stopped
    }

    // Strong: an unowned reference costs an atomic check per use on the request path. The worker
    // breaks the cycle by dropping its connections when the run ends.
    private let worker: LoadWorker<Recorder>
    /// The connection's number among its segment's (across all loops), which places it in the
    /// constant-rate schedule.
    let index: Int
    // The request path's state opts out of dynamic exclusivity checks: callgrind showed about 19
    // checks per request (some 1,100 instructions, a tenth of the engine's cost) because the
    // optimizer cannot prove that calls into the stream and parser never reach back here. They
    // never do: the connection is confined to its loop and no member is accessed while another
    // access to it is open (the parser returns before its events are handled).
    @exclusivity(unchecked) private var state = State.idle
    @exclusivity(unchecked) private var stream: (any ByteStream)?
    /// `stream` when it is a plain socket (a direct connection, or a tunnel through a plain proxy): written with its
    /// one-buffer write, which allocates nothing; any other stream (TLS) takes an array of one buffer.
    @exclusivity(unchecked) private var socketStream: SocketStream?
    @exclusivity(unchecked) private var parser = LoadConnection.makeParser()
    /// Requests written and not yet answered.
    @exclusivity(unchecked) private(set) var inFlight = 0
    /// Where latency is measured from: when the batch was written (closed loop) or when the
    /// request should have been sent (constant rate, correcting coordinated omission).
    @exclusivity(unchecked) private var latencyOrigin: UInt64 = 0
    /// When the requests in flight were written, for timeouts.
    @exclusivity(unchecked) private(set) var writtenAt: UInt64 = 0
    /// The status of the response being read.
    @exclusivity(unchecked) private var statusCode = 0
    /// Bytes left unparsed at the end of the previous read (a partial head), so only new bytes count.
    @exclusivity(unchecked) private var carried = 0
    private var consecutiveConnectFailures = 0
    /// Responses completed on the current stream: a stream that answered before is a kept-alive one, and its close
    /// with no byte of the next answer is a stale connection, not a failed request.
    @exclusivity(unchecked) private var answered = 0
    /// The next slot of the run's schedule this connection sends, and when it is due (constant
    /// rate only); nil until the run starts.
    @exclusivity(unchecked) private var nextSlot: Int?
    @exclusivity(unchecked) private var nextDue: UInt64 = 0
    private var timer: TimerQueue<() -> Void>.ID?
    /// The one closure the connection's timers run, made once rather than per timer.
    private lazy var timerAction: () -> Void = { [unowned self] in timerFired() }

    init(worker: LoadWorker<Recorder>, index: Int) {
        self.worker = worker
        self.index = index
    }

    private static func makeParser() -> HTTP1Parser {
        var parser = HTTP1Parser(kind: .response)
        parser.copiesResponseFields = false
        return parser
    }

    var isOpen: Bool { state == .open }
    var hasGivenUp: Bool { state == .gaveUp }

    // MARK: Connecting

    /// Opens the connection: a race over the plan's addresses, on this loop, with no task; or the plan's
    /// `openStream` (a proxy, TLS) in a task, whose stream comes back to this loop.
    func connect() {
        precondition(stream == nil)
        state = .connecting
        let plan = worker.plan
        if let openStream = plan.openStream {
            let loop = worker.loop
            let connection = LoopBound(self, loop: loop)
            Task {
                let result: Result<LoopBound<any ByteStream>, any Error>
                do { result = .success(try await openStream(loop)) } catch { result = .failure(error) }
                // A loop that closed meanwhile ended the run; its shutdown closes what it still holds.
                loop.execute({ connection.value.streamOpened(result) }, ifClosed: {})
            }
            return
        }
        let race = ConnectionRace(
            addresses: plan.addresses, host: plan.host, port: plan.port, loop: worker.loop,
            deadline: .after(plan.connectTimeout), timeout: plan.connectTimeout, attemptDelay: .milliseconds(250)
        ) { [self] result in connectFinished(result) }
        race.start()
    }

    private func connectFinished(_ result: Result<Socket, ConnectError>) {
        guard state == .connecting else {
            if case .success(let socket) = result { try? socket.close() }
            return
        }
        switch result {
        case .success(let socket):
            let stream: SocketStream
            do {
                stream = try SocketStream(socket: socket, on: worker.loop)
            } catch {
                try? socket.close()
                connectFailed(reason: "\(error)")
                return
            }
            opened(stream)
        case .failure(let error):
            connectFailed(reason: error.description)
        }
    }

    /// The plan's `openStream` finished (on this loop).
    private func streamOpened(_ result: Result<LoopBound<any ByteStream>, any Error>) {
        switch result {
        case .success(let bound):
            // A stream on another loop cannot be read here; and after the run, or a stop, nobody wants it.
            guard bound.loop === worker.loop else {
                bound.loop.execute { bound.value.close(error: nil) }
                connectFailed(reason: "the connection opened on another event loop")
                return
            }
            guard state == .connecting else {
                bound.value.close(error: nil)
                return
            }
            guard bound.value.isOpen else {
                connectFailed(reason: bound.value.closeError.map { "\($0)" } ?? "the connection closed as it opened")
                return
            }
            opened(bound.value)
        case .failure(let error):
            guard state == .connecting else { return }
            connectFailed(reason: "\(error)", error: error)
        }
    }

    /// Takes `stream` as the connection and starts sending when the run has begun.
    private func opened(_ stream: any ByteStream) {
        let socket = stream as? SocketStream
        if let socket {
            socket.keepsReadBuffer = true
            socket.readChunkSize = worker.plan.readChunkSize
        }
        stream.delegate = self
        self.stream = stream
        socketStream = socket
        state = .open
        consecutiveConnectFailures = 0
        answered = 0
        parser = Self.makeParser()
        carried = 0
        worker.connectionSettled(opened: true)
        if worker.isRunning { sendNext() }
    }

    private func connectFailed(reason: String, error: (any Error)? = nil) {
        if let error { worker.noteConnectError(error) }
        worker.noteError(.connect, reason)
        consecutiveConnectFailures += 1
        if worker.givesUpAfterConnectFailures && consecutiveConnectFailures >= 5 {
            state = .gaveUp
            if worker.nanosecondsPerSlot != nil { worker.abandonSlots(from: nextSlot ?? worker.firstSlot(ofConnection: index)) }
            worker.connectionSettled(opened: false)
            worker.connectionGaveUp()
            return
        }
        state = .retryWait
        worker.connectionSettled(opened: false)
        // Before the run starts, the retry waits for `start()`; during it, back off 10 ms, 20 ms... up to 1 s.
        if worker.isRunning { scheduleRetry() }
    }

    private func scheduleRetry() {
        let delay = min(10_000_000 << min(consecutiveConnectFailures - 1, 7), 1_000_000_000)
        arm(at: Posix.monotonicNanoseconds() + UInt64(delay))
    }

    // MARK: Sending

    /// The run started: send, or reconnect if the first attempt failed.
    func start() {
        switch state {
        case .open: sendNext()
        // Idle: the server closed it while the run waited to start (a start time far off).
        case .retryWait, .idle: connect()
        case .connecting, .gaveUp, .stopped: break
        }
    }

    /// Sends the next request or batch when nothing is in flight, if the run wants more.
    private func sendNext() {
        guard state == .open, inFlight == 0, worker.isRunning else { return }
        if worker.nanosecondsPerSlot != nil {
            let slot: Int
            if let nextSlot {
                slot = nextSlot
            } else {
                slot = worker.firstSlot(ofConnection: index)
                nextSlot = slot
                nextDue = worker.dueTime(ofSlot: slot)
            }
            guard slot < worker.slotLimit else { return }
            let now = Posix.monotonicNanoseconds()
            guard nextDue <= now else {
                arm(at: nextDue)
                return
            }
            guard worker.claim(1) == 1 else { return }
            let due = nextDue
            nextSlot = slot + worker.slotStride
            nextDue = worker.dueTime(ofSlot: slot + worker.slotStride)
            let length = worker.sequence.length
            send(count: 1, position: length == 1 ? 0 : slot % length, origin: due, now: now)
        } else {
            let count = worker.claim(worker.plan.pipeline)
            guard count > 0 else { return }
            let now = Posix.monotonicNanoseconds()
            send(count: count, position: worker.takePositions(count), origin: now, now: now)
        }
    }

    private func send(count: Int, position: Int, origin: UInt64, now: UInt64) {
        guard let stream else { return }
        if worker.sequence.hasHead {
            for offset in 0..<count {
                parser.expectResponse(to: worker.sequence.isHead(at: position + offset) ? .head : .get)
            }
        }
        inFlight = count
        worker.inFlight += count
        latencyOrigin = origin
        writtenAt = now
        // Writing may fail and close the stream at once; `stream(_:didCloseWith:)` then cleans up.
        if let socketStream {
            socketStream.write(worker.sequence.bytes(at: position, count: count))
        } else {
            stream.write([worker.sequence.bytes(at: position, count: count)])
        }
    }

    // MARK: Timers

    private func arm(at deadline: UInt64) {
        if let timer { worker.loop.cancelOnLoop(timer) }
        timer = worker.loop.scheduleOnLoop(at: Deadline(uptimeNanoseconds: deadline), timerAction)
    }

    private func disarm() {
        if let timer { worker.loop.cancelOnLoop(timer) }
        timer = nil
    }

    private func timerFired() {
        timer = nil
        switch state {
        case .retryWait: if worker.isRunning { connect() }
        case .open: sendNext()
        case .idle, .connecting, .gaveUp, .stopped: break
        }
    }

    /// Fails the requests in flight if they have waited longer than the plan's timeout.
    func checkTimeout(now: UInt64, limit: UInt64) {
        guard state == .open, inFlight > 0, now &- writtenAt > limit else { return }
        worker.noteError(.timeout, "no response within \(worker.plan.timeout)", count: inFlight)
        replace()
    }

    // MARK: Reading

    func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer) {
        worker.noteBytesRead(buffer.readableBytes - carried)
        // One pass over the bytes inside one accessor: per read, not per parse step, so no
        // step is boxed or copied on its way out of a generic closure.
        let outcome = buffer.withUnsafeReadableBytes { bytes in parseResponses(bytes.assumingMemoryBound(to: UInt8.self)) }
        guard let consumed = outcome else { return }
        buffer.moveReaderIndex(forwardBy: consumed)
        carried = buffer.readableBytes
    }

    /// Parses every complete event in `bytes`; returns how many bytes were consumed, or nil when
    /// the connection was replaced or stopped along the way (its bytes no longer matter).
    private func parseResponses(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let current = stream
        var offset = 0
        while true {
            let step: HTTP1ParseStep
            do {
                step = try parser.parse(UnsafeBufferPointer(rebasing: bytes[offset...]))
            } catch {
                failRequests(.parse, "\(error)", atLeastOne: true)
                return nil
            }
            offset += step.consumed
            guard let event = step.event else { return offset }
            switch event {
            case .responseHead:
                if inFlight == 0 {
                    failRequests(.parse, "a response arrived with no request outstanding", atLeastOne: true)
                    return nil
                }
                // Read from the parser rather than the event: binding the head would copy it.
                statusCode = parser.lastResponseStatus
            case .body:
                break
            case .end:
                responseEnded()
                // The response may have ended the run or the connection.
                guard stream === current, state == .open else { return nil }
                // A parser between messages finds nothing in no bytes: skip the call (and the step
                // it would build and destroy), the common case of one response per read.
                if offset == bytes.count { return offset }
            case .upgraded:
                failRequests(.parse, "the server switched protocols", atLeastOne: true)
                return nil
            case .requestHead:
                preconditionFailure("a response parser produced a request head")
            }
        }
    }

    private func responseEnded() {
        let now = Posix.monotonicNanoseconds()
        inFlight -= 1
        worker.inFlight -= 1
        answered &+= 1
        let keepsAlive = parser.lastResponseKeepsAlive
        let status = statusCode
        statusCode = 0
        worker.responseReceived(status: status, latency: now &- latencyOrigin)
        guard state == .open else { return }
        if !keepsAlive {
            // The server closes after this response (nginx does every keepalive_requests): the
            // requests pipelined behind it were not processed (RFC 9112 §9.6), so they go back
            // to the budget and out again on the next connection; they are not errors.
            worker.requeue(inFlight)
            replace()
            return
        }
        if inFlight == 0 { sendNext() }
    }

    func streamDidReachEnd(_ stream: any ByteStream) {
        // A close-delimited body ends here.
        if case .end? = try? parser.finish(), inFlight > 0 {
            responseEnded()
            guard state == .open, self.stream === stream else { return }
        }
        if resendsAfterStaleClose() { return }
        let reason =
            carried > 0 || statusCode != 0
            ? "the server closed the connection mid-response"
            : "the server closed the connection before responding"
        failRequests(.read, reason, atLeastOne: false)
    }

    /// A kept-alive connection closed (or reset) before any byte of the next answer: the server, or a proxy such as
    /// tinyproxy, which closes after each forwarded response without saying so, did not process the requests in
    /// flight. They go back to the budget and out on a new connection, as after a `Connection: close` (curl and Wire's
    /// client resend on a stale connection too); not errors. Only after an answer on the same stream, so a server
    /// that never answers still fails the run.
    private func resendsAfterStaleClose() -> Bool {
        guard answered > 0, carried == 0, statusCode == 0, inFlight > 0 else { return false }
        worker.requeue(inFlight)
        replace()
        return true
    }

    func streamDidDrainWrites(_ stream: any ByteStream) {}

    func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?) {
        // Only closes the stream decided itself arrive here: ours detach the delegate first.
        guard stream === self.stream else { return }
        if let errno = (error as? IOError)?.errno, errno == .connectionReset || errno == .brokenPipe,
            resendsAfterStaleClose()
        {
            return
        }
        let syscall = (error as? IOError)?.syscall
        let kind: LoadErrorKind = syscall == "sendmsg" || syscall == "send" ? .write : .read
        failRequests(kind, error.map { "\($0)" } ?? "the connection closed", atLeastOne: false)
    }

    // MARK: Ending

    /// Counts the requests in flight as failed (or one error when `atLeastOne` and none was), then
    /// replaces the connection.
    private func failRequests(_ kind: LoadErrorKind, _ reason: String, atLeastOne: Bool) {
        let count = atLeastOne ? max(inFlight, 1) : inFlight
        if count > 0 { worker.noteError(kind, reason, count: count) }
        replace()
    }

    /// Closes the stream and, if the run still needs this connection, opens a new one.
    private func replace() {
        detach()
        state = .idle
        if worker.wantsMoreRequests {
            connect()
        }
        worker.checkFinished()
    }

    /// Closes the stream without hearing about it, and forgets what was in flight.
    private func detach() {
        disarm()
        if let stream {
            stream.delegate = nil
            stream.close(error: nil)
        }
        stream = nil
        socketStream = nil
        worker.inFlight -= inFlight
        inFlight = 0
        carried = 0
        statusCode = 0
    }

    /// The run ended: close quietly; requests still in flight are neither answers nor errors.
    func stop() {
        detach()
        state = .stopped
    }
}
