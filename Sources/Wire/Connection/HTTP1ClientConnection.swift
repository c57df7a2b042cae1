/// One HTTP/1.1 client connection on its event loop: writes requests, parses responses, and
/// tells its owner (the pool) when it is free again or gone. It speaks to `any ByteStream`, so it runs the
/// same over TCP, a Unix socket, or TLS.
///
/// The decisions are `HTTP1ClientConnectionStateMachine`'s; this class performs them. Everything
/// here runs on `loop`; tasks reach it through `LoopBound` and the async helpers at the bottom.
final class HTTP1ClientConnection: ByteStreamDelegate, DeferredLoopWork {
    /// The response head with its body stream, as handed to the waiting request.
    struct ResponseStart: Sendable {
        var head: HTTPResponseHead
        var body: HTTPBody
        /// The connection, handed over after a 2xx answer to CONNECT.
        var tunnel: HTTPTunnel? = nil
    }

    /// Identifies a request on its connection, for the calls a task makes after `start`.
    typealias ExchangeID = Int

    /// What a task waiting on a continuation gets: the response head (or the failure before it), and whether the
    /// request was started at all (false when its loop had closed).
    struct ResponseOutcome: Sendable {
        var result: Result<ResponseStart, HTTPClientError>
        var started: Bool
    }

    /// Where a response head goes: a closure, or straight to the continuation of the task that waits for it (no
    /// closure to allocate per request), `offLoop` when that task runs on another executor than the loop. Called once.
    enum Responder {
        case closure((Result<ResponseStart, HTTPClientError>) -> Void)
        case waiter(UnsafeContinuation<ResponseOutcome, Never>, offLoop: Bool)

        func callAsFunction(_ result: Result<ResponseStart, HTTPClientError>) {
            switch self {
            case .closure(let respond): respond(result)
            case .waiter(let continuation, _): continuation.resume(returning: ResponseOutcome(result: result, started: true))
            }
        }

        /// Hands a parsed head over at the end of `loop`'s iteration: a task off the loop through the loop's batch of
        /// hand-overs (`EventLoop.handOver`), anything else at once.
        func deliver(_ start: ResponseStart, from loop: EventLoop) {
            guard case .waiter(let continuation, offLoop: true) = self else { return self(.success(start)) }
            loop.handOver { continuation.resume(returning: ResponseOutcome(result: .success(start), started: true)) }
        }
    }

    /// A request in flight.
    private final class Exchange {
        let id: ExchangeID
        let method: HTTPMethod
        /// Where the response head goes, until it is delivered: then dropped, because what it
        /// captures holds the body, and the connection must not keep a body its reader let go of
        /// (dropping it unread is how a reader abandons a response).
        var respond: Responder?
        /// Whether the response head was delivered (or the request failed before it).
        var responseSettled = false
        var body: BodyChannel?
        var metrics: HTTPClientMetrics
        var continueWaiter: CheckedContinuation<Bool, Never>?
        /// `100 Continue` arrived, possibly before anyone waited for it.
        var receivedContinue = false
        var drainWaiter: CheckedContinuation<Result<Void, HTTPClientError>, Never>?
        /// The request's last byte was handed to the stream.
        var requestSent = false
        var readTimeout: Duration
        var sawFirstByte = false
        var bodyBytes = 0
        var wroteAnyByte = false
        /// The request was abandoned while requests ahead of it were still answered: its
        /// response is read and dropped, so the connection and the requests around it survive.
        var discarded = false
        /// A 2xx head answering CONNECT, held until the parser confirms the switch (`.upgraded`)
        /// so the head and the tunnel are handed over together.
        var tunnelHead: HTTPResponseHead?

        init(id: ExchangeID, method: HTTPMethod, metrics: HTTPClientMetrics, readTimeout: Duration) {
            self.id = id
            self.method = method
            self.metrics = metrics
            self.readTimeout = readTimeout
        }

        /// Hands the response head (or the failure before it) over, once.
        func settle(_ result: Result<ResponseStart, HTTPClientError>) {
            responseSettled = true
            let respond = respond
            self.respond = nil
            respond?(result)
        }
    }

    let loop: EventLoop
    private let stream: any ByteStream
    private var parser: HTTP1Parser
    private var machine = HTTP1ClientConnectionStateMachine()
    /// Requests in flight, oldest first: the first owns the response being parsed. More than one
    /// only when pipelining.
    private var exchanges: [Exchange] = []
    private var nextExchangeID = 0
    /// Requests completed on this connection; a request on a connection with one or more is "reused".
    private(set) var completedRequests = 0
    /// The error that closed the connection while no request was under way, for the next request
    /// to report: a TLS 1.3 server refuses a client certificate only after the handshake, and a
    /// peer may reset a connection just made, before the first request.
    private var idleCloseError: HTTPClientError?
    /// Set by the owner (the pool, which knows it by an ID of its own): called once per started request when it is done with the connection,
    /// with whether the connection may be reused.
    var onRelease: ((HTTP1ClientConnection, _ reusable: Bool) -> Void)?
    /// Set by the owner: called when a connection with no request in flight closes on its own.
    var onIdleClose: ((HTTP1ClientConnection) -> Void)?
    private var bodyPausedReading = false
    /// When the peer last sent bytes (or the oldest request became the one awaiting them).
    private var lastActivity = Deadline.now()
    private var readTimer: TimerQueue<() -> Void>.ID?
    /// When `readTimer` fires; meaningful while it is set.
    private var readTimerDeadline = Deadline.now()
    /// The stream became a CONNECT tunnel and belongs to it now: this connection no longer closes it.
    private var handedOver = false
    /// Response heads parsed during the read being handled, handed over at the end of the loop iteration: a small
    /// response's body and end usually arrive in the same read, and its task then finds the body
    /// complete instead of waking once for the head and again for each part of the body.
    private var deliveries: [(respond: Responder, start: ResponseStart)] = []
    /// The ones being handed over (swapped with `deliveries`, so neither array is reallocated per round).
    private var delivering: [(respond: Responder, start: ResponseStart)] = []
    private var handOverScheduled = false
    private var isHandlingRead = false

    /// The request whose response is being read.
    private var oldest: Exchange? { exchanges.first }

    /// High-water mark of queued request bytes before a streaming upload waits for the socket.
    static let writeHighWatermark = 256 * 1024

    /// How many bytes of a response body are copied out of the read buffer rather than sliced from it.
    static let copiedBodyBytes = 4096

    init(stream: any ByteStream, parserConfiguration: HTTP1ParserConfiguration) {
        self.loop = stream.eventLoop
        self.stream = stream
        self.parser = HTTP1Parser(kind: .response, configuration: parserConfiguration)
        stream.delegate = self
    }

    /// Whether the connection can take a request now (behind others, if they are pipelined).
    var isUsable: Bool { stream.isOpen && machine.acceptsRequest }

    var remoteAddress: SocketAddress? { stream.remoteAddress }
    var localAddress: SocketAddress? { stream.localAddress }
    var securityInfo: TransportSecurityInfo? { stream.securityInfo }

    // MARK: Sending

    /// Starts a request: writes the head (and `inlineBody`, if the whole body is in memory) and
    /// returns the promise of its response head, with the ID the later calls for it take.
    func start(
        head: [UInt8],
        inlineBody: ByteBuffer?,
        method: HTTPMethod,
        keepAlive: Bool,
        requestComplete: Bool,
        readTimeout: Duration,
        metrics: HTTPClientMetrics
    ) -> (Promise<ResponseStart, HTTPClientError>, ExchangeID) {
        let promise = Promise<ResponseStart, HTTPClientError>()
        let id = start(head: head, inlineBody: inlineBody, method: method, keepAlive: keepAlive, requestComplete: requestComplete,
                       readTimeout: readTimeout, metrics: metrics, responder: .closure { promise.complete($0) })
        return (promise, id)
    }

    /// Starts a request as `start(head:...)` does, handing its response head (or the failure before it) to
    /// `respond` on the loop, exactly once. A `.waiter` is resumed from the read that parsed the head: at once when
    /// its task runs on this loop, in the loop's batch of hand-overs (`EventLoop.handOver`) when it runs elsewhere.
    func start(
        head: [UInt8],
        inlineBody: ByteBuffer?,
        method: HTTPMethod,
        keepAlive: Bool,
        requestComplete: Bool,
        readTimeout: Duration,
        metrics: HTTPClientMetrics,
        responder respond: Responder
    ) -> ExchangeID {
        loop.preconditionInEventLoop()
        let id = nextExchangeID
        nextExchangeID += 1
        guard isUsable else {
            // The connection closed after the pool leased it (a server's idle close racing the
            // lease): the pool kept its entry for this request, which must give it back, or the
            // pool holds the closed connection forever. Requests still in flight (a pipelined
            // lease behind a response that ends the connection) release it themselves.
            if exchanges.isEmpty { onRelease?(self, false) }
            respond(.failure(idleCloseError
                ?? HTTPClientError(.emptyReply, "the pooled connection was closed by the server", failedBeforeResponse: true)))
            return id
        }
        let exchange = Exchange(id: id, method: method, metrics: metrics, readTimeout: readTimeout)
        exchange.respond = respond
        let reused = completedRequests > 0 || !exchanges.isEmpty
        exchanges.append(exchange)
        machine.requestStarted(keepAlive: keepAlive)
        parser.expectResponse(to: method)
        metrics.update { $0.isReusedConnection = reused }
        if exchanges.count == 1 { becameOldest(exchange) }
        exchange.wroteAnyByte = true
        if let inlineBody {
            stream.write([ByteBuffer(bytes: head), inlineBody])
        } else {
            // Straight from the array: only what the kernel does not take at once is copied.
            head.withUnsafeBytes { stream.write(copying: $0) }
        }
        if requestComplete { requestWritten(exchange) }
        return id
    }

    private func findExchange(_ id: ExchangeID) -> Exchange? {
        exchanges.first { $0.id == id }
    }

    private func write(_ buffers: [ByteBuffer], exchange: Exchange) {
        exchange.wroteAnyByte = true
        stream.write(buffers)
    }

    private func requestWritten(_ exchange: Exchange) {
        exchange.requestSent = true
        _ = machine.requestWritten()
        if stream.pendingWriteBytes == 0 { exchange.metrics.update { $0.timings.requestSent = exchange.metrics.elapsed() } }
    }

    /// Writes part of a streamed body; completes once the socket has room for more.
    func writeBodyPart(_ buffers: [ByteBuffer], isLast: Bool, for id: ExchangeID,
                       continuation: CheckedContinuation<Result<Void, HTTPClientError>, Never>) {
        loop.preconditionInEventLoop()
        guard let exchange = findExchange(id), stream.isOpen, !machine.isClosed else {
            continuation.resume(returning: .failure(HTTPClientError(.writeFailed, "the connection closed while the request body was being sent",
                                                                    mayHaveBeenProcessed: true)))
            return
        }
        write(buffers, exchange: exchange)
        if isLast { requestWritten(exchange) }
        if stream.pendingWriteBytes > Self.writeHighWatermark {
            exchange.drainWaiter = continuation
        } else {
            continuation.resume(returning: .success(()))
        }
    }

    /// Whether the stream can send file regions itself (`sendfile(2)` on a plain socket; not TLS).
    var takesFileRegions: Bool {
        loop.preconditionInEventLoop()
        return stream is any FileRegionStream
    }

    /// Writes a region of a file of a `.segments` body (only when `takesFileRegions`); completes once the socket has
    /// room for more.
    func writeBodyRegion(_ region: FileRegion, isLast: Bool, for id: ExchangeID,
                         continuation: CheckedContinuation<Result<Void, HTTPClientError>, Never>) {
        loop.preconditionInEventLoop()
        guard let exchange = findExchange(id), stream.isOpen, !machine.isClosed, let regions = stream as? any FileRegionStream else {
            continuation.resume(returning: .failure(HTTPClientError(.writeFailed, "the connection closed while the request body was being sent",
                                                                    mayHaveBeenProcessed: true)))
            return
        }
        exchange.wroteAnyByte = true
        regions.write(region)
        if isLast { requestWritten(exchange) }
        if stream.pendingWriteBytes > Self.writeHighWatermark {
            exchange.drainWaiter = continuation
        } else {
            continuation.resume(returning: .success(()))
        }
    }

    /// Waits for `100 Continue` (true), or a final response or the timeout (false: send the
    /// body anyway after a timeout, per RFC 9110 §10.1.1, or skip it if a final response came).
    func awaitContinue(timeout: Duration, for id: ExchangeID, continuation: CheckedContinuation<Bool, Never>) {
        loop.preconditionInEventLoop()
        guard let exchange = findExchange(id), !exchange.responseSettled else {
            continuation.resume(returning: false)
            return
        }
        // The server may have said 100 before this task got here: the loop ran the read first.
        if exchange.receivedContinue {
            continuation.resume(returning: true)
            return
        }
        exchange.continueWaiter = continuation
        _ = loop.scheduleOnLoop(at: .after(timeout)) { [weak exchange] in
            guard let exchange, let waiter = exchange.continueWaiter else { return }
            exchange.continueWaiter = nil
            waiter.resume(returning: true)
        }
    }

    /// Abandons a request (deadline passed, task cancelled). The oldest request's response is
    /// being read, so abandoning it closes the connection; a request pipelined behind it is
    /// failed at once and its response, when it comes, is read and dropped.
    func abort(_ id: ExchangeID, with error: HTTPClientError) {
        loop.preconditionInEventLoop()
        guard let exchange = findExchange(id) else { return }
        guard exchange === oldest else {
            exchange.discarded = true
            exchange.settle(.failure(error))
            return
        }
        perform(machine.failed(.abandoned), error: error)
    }

    /// Closes the connection (pool eviction or shutdown).
    func close() {
        loop.preconditionInEventLoop()
        guard !handedOver else { return }
        stream.close(error: nil)
    }

    // MARK: Receiving

    func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer) {
        isHandlingRead = true
        defer {
            // The rest of a large body may gather in the kernel before the next wake-up.
            stream.expectAtLeast(parser.bodyBytesStillDue)
            deliverHeads()
        }
        if machine.bytesReceived() == .closeIdle {
            closeIdle()
            return
        }
        let now = Deadline.now()
        lastActivity = now
        // Keep asking until the parser neither consumes nor reports anything: some events (the
        // end of a Content-Length body) come from a call with no new bytes. Each pass serves the
        // oldest request; behind pipelined requests one read may hold several responses.
        while let exchange = oldest, !machine.isClosed {
            if !exchange.sawFirstByte {
                exchange.sawFirstByte = true
                exchange.metrics.update { $0.timings.firstByte = now - exchange.metrics.start }
            }
            let step: HTTP1ParseStep
            do {
                step = try buffer.withReadableSpan { (span) throws(HTTP1ParseError) -> HTTP1ParseStep in try parser.parse(span) }
            } catch {
                perform(machine.failed(.protocolOrIOError),
                        error: HTTPClientError(.malformedResponse, "\(error)", parseError: error, mayHaveBeenProcessed: true))
                return
            }
            var chunk: ByteBuffer?
            if case .body(let range) = step.event {
                // A small body is copied out: a slice would keep the loop's whole read buffer (64 KiB) alive for as
                // long as the caller keeps the response, and with many responses held at once the loop would
                // allocate a fresh read buffer per response. Past the first few KiB a body is sliced (no copy).
                chunk = exchange.bodyBytes + range.count <= Self.copiedBodyBytes
                    ? buffer.copy(at: range.lowerBound, length: range.count)
                    : buffer.slice(at: range.lowerBound, length: range.count)
            }
            buffer.moveReaderIndex(forwardBy: step.consumed)
            guard let event = step.event else {
                if step.consumed == 0 { return }
                continue
            }
            if case .upgraded = event, exchange.tunnelHead != nil {
                // Every byte after the proxy's head belongs to the tunnel.
                let leftover = buffer.slice(at: 0, length: buffer.readableBytes)
                buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
                openTunnel(exchange, leftover: leftover)
                return
            }
            handle(event, chunk: chunk, exchange: exchange, trailingBytes: buffer.readableBytes > 0)
        }
    }

    /// Hands over the response heads parsed during the read just handled.
    private func deliverHeads() {
        isHandlingRead = false
        guard !deliveries.isEmpty else { return }
        // At the end of the loop iteration, with the heads of every other connection read in it (tasks on another
        // executor then go through the loop's batch of hand-overs), by one job for every head read until it runs.
        guard !handOverScheduled else { return }
        handOverScheduled = true
        loop.executeSoon(self)
    }

    /// The loop got to the hand-over `deliverHeads` queued: the heads read since go to their requests.
    func runDeferredWork() {
        handOverHeads()
    }

    private func handOverHeads() {
        handOverScheduled = false
        swap(&deliveries, &delivering)
        for (respond, start) in delivering { respond.deliver(start, from: loop) }
        delivering.removeAll(keepingCapacity: true)
    }

    private func handle(_ event: HTTP1ParserEvent, chunk: ByteBuffer?, exchange: Exchange, trailingBytes: Bool = false) {
        switch event {
        case .requestHead:
            // A response parser never produces one; were it ever to, the bytes are not a response.
            perform(machine.failed(.protocolOrIOError), error: HTTPClientError(.malformedResponse, "a request head in the response stream",
                                                                              mayHaveBeenProcessed: true))
        case .responseHead(let head):
            if head.isInterim {
                if head.status.code == 100 {
                    exchange.receivedContinue = true
                    if let waiter = exchange.continueWaiter {
                        exchange.continueWaiter = nil
                        waiter.resume(returning: true)
                    }
                }
                return
            }
            guard machine.responseHeadReceived(keepAlive: head.isKeepAlive) == .deliverHead else { return }
            if exchange.discarded { return }
            if exchange.method == .connect && head.status.responseClass == .successful {
                exchange.tunnelHead = head
                return
            }
            let channel = BodyChannel()
            channel.setProducer(ResponseBodyProducer(connection: LoopBound(self, loop: loop), exchange: exchange.id))
            exchange.body = channel
            if let waiter = exchange.continueWaiter {
                exchange.continueWaiter = nil
                waiter.resume(returning: false)
            }
            let start = ResponseStart(head: head, body: HTTPBody(channel: channel))
            if isHandlingRead, let respond = exchange.respond {
                exchange.responseSettled = true
                exchange.respond = nil
                deliveries.append((respond, start))
            } else {
                exchange.settle(.success(start))
            }
        case .body:
            guard let chunk, let channel = exchange.body else { return }
            exchange.bodyBytes += chunk.readableBytes
            if !channel.yield(chunk) {
                bodyPausedReading = true
                stream.setReadingEnabled(false)
            }
        case .end:
            perform(machine.responseEnded(trailingBytes: trailingBytes), error: nil)
        case .upgraded:
            perform(machine.failed(.upgraded), error: HTTPClientError(.upgradeNotSupported, "the server switched protocols", mayHaveBeenProcessed: true))
        }
    }

    /// A 2xx answered CONNECT: the stream leaves HTTP and this connection for good. The request
    /// gets the head with the tunnel; the pool is told the connection is not reusable, and its
    /// close does nothing now that the stream has another owner.
    private func openTunnel(_ exchange: Exchange, leftover: ByteBuffer) {
        guard let head = exchange.tunnelHead else { return }
        guard machine.tunnelOpened() else {
            perform(machine.failed(.protocolOrIOError),
                    error: HTTPClientError(.connectionClosed, "the connection closed as the tunnel opened", mayHaveBeenProcessed: true))
            return
        }
        handedOver = true
        stopReadTimer()
        finishOldest(exchange)
        wakeWaiters(of: exchange)
        completedRequests += 1
        let tunnel = HTTPTunnel(stream: stream, leftover: leftover)
        // Out of the pool before the request resumes, as a completed response is.
        onRelease?(self, false)
        failPipelined()
        exchange.settle(.success(ResponseStart(head: head, body: .empty, tunnel: tunnel)))
    }

    func streamDidReachEnd(_ stream: any ByteStream) {
        guard let exchange = oldest else {
            perform(machine.endOfStream(), error: nil)
            return
        }
        do {
            if let event = try parser.finish() {
                handle(event, chunk: nil, exchange: exchange)
            }
        } catch {
            // Mid-message EOF: the state machine decides which error it is.
        }
        if !exchanges.isEmpty || !machine.isClosed { perform(machine.endOfStream(), error: nil) }
    }

    func streamDidDrainWrites(_ stream: any ByteStream) {
        guard let exchange = exchanges.last else { return }
        if machine.isBusy, exchange.metrics.snapshot.timings.requestSent == nil { exchange.metrics.update { $0.timings.requestSent = exchange.metrics.elapsed() } }
        if let waiter = exchange.drainWaiter {
            exchange.drainWaiter = nil
            waiter.resume(returning: .success(()))
        }
    }

    func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?) {
        stopReadTimer()
        let ioError = error as? IOError
        if exchanges.isEmpty, let error, !(error is EventLoopClosedError) {
            idleCloseError = if let ioError {
                HTTPClientError(ioError.errno == .connectionReset || ioError.errno == .brokenPipe ? .connectionReset : .connectionClosed,
                                "\(ioError)", ioError: ioError, failedBeforeResponse: true)
            } else {
                HTTPClientError(.tlsFailed, "\(error)", securityError: error, failedBeforeResponse: true)
            }
        }
        let clientError: HTTPClientError
        let beforeResponse = !(oldest?.sawFirstByte ?? true)
        if let ioError, ioError.errno == .connectionReset || ioError.errno == .brokenPipe {
            clientError = HTTPClientError(.connectionReset, "\(ioError)", ioError: ioError, failedBeforeResponse: beforeResponse)
        } else if let ioError {
            clientError = HTTPClientError(.writeFailed, "\(ioError)", ioError: ioError, failedBeforeResponse: beforeResponse)
        } else {
            // A TLS layer's error (a truncated stream, an alert) keeps its precise reason.
            clientError = HTTPClientError(.connectionClosed, error.map { "\($0)" } ?? "the connection closed", securityError: error,
                                          failedBeforeResponse: beforeResponse)
        }
        perform(machine.failed(.protocolOrIOError), error: clientError)
    }

    // MARK: Back-pressure and abandonment

    fileprivate func resumeReadingForBody(of id: ExchangeID) {
        guard oldest?.id == id else { return }
        liftReadPause()
    }

    private func liftReadPause() {
        guard bodyPausedReading, stream.isOpen else { return }
        bodyPausedReading = false
        stream.setReadingEnabled(true)
    }

    fileprivate func bodyAbandoned(of id: ExchangeID) {
        guard let exchange = oldest, exchange.id == id, exchange.body != nil else { return }
        perform(machine.failed(.abandoned), error: HTTPClientError(.cancelled, "the response body was abandoned"))
    }

    // MARK: Timers

    /// `exchange` is now the one whose response is awaited: its read timeout starts now.
    private func becameOldest(_ exchange: Exchange) {
        lastActivity = .now()
        let due = lastActivity + exchange.readTimeout
        if let timer = readTimer {
            // A timer due no later keeps running: when it fires it finds the activity since and re-arms itself,
            // so a busy connection costs no timer work (and no allocation) per request.
            if readTimerDeadline <= due { return }
            loop.cancelOnLoop(timer)
        }
        armReadTimer(at: due)
    }

    /// One timer per connection for the oldest request, re-armed lazily: reads only stamp `lastActivity` and a
    /// request becoming the oldest only stamps it too, so neither a fast download nor a run of keep-alive requests
    /// costs timer work per read or per request. A timer that fires with no request in flight stops.
    private func armReadTimer(at when: Deadline) {
        readTimerDeadline = when
        // A strong capture (a weak one would give the connection a side table, and every retain and release of it
        // the slow path): the timer is cancelled when the stream closes or is handed over.
        readTimer = loop.scheduleOnLoop(at: when) { self.readTimerFired() }
    }

    private func stopReadTimer() {
        if let readTimer { loop.cancelOnLoop(readTimer) }
        readTimer = nil
    }

    private func readTimerFired() {
        readTimer = nil
        guard let exchange = oldest, !machine.isClosed else { return }
        let idleFor = Deadline.now() - lastActivity
        if idleFor >= exchange.readTimeout && !bodyPausedReading {
            perform(machine.failed(.protocolOrIOError),
                    error: HTTPClientError(.readTimeout, "no data from the server for \(exchange.readTimeout)", mayHaveBeenProcessed: exchange.wroteAnyByte))
        } else {
            if bodyPausedReading { lastActivity = .now() }
            armReadTimer(at: lastActivity + exchange.readTimeout)
        }
    }

    // MARK: Performing actions

    private func perform(_ action: HTTP1ClientConnectionStateMachine.Action, error: HTTPClientError?) {
        switch action {
        case .none, .deliverHead:
            return
        case .completeRequest(let reusable):
            guard let exchange = oldest else { return }
            finishOldest(exchange)
            wakeWaiters(of: exchange)
            completedRequests += 1
            if !reusable {
                stream.close(error: nil)
                failPipelined()
            }
            // A pause this body asked for ends with it (its last bytes can arrive in the read that
            // paused): the bytes that follow are another response's, and this body's consumer may
            // never read again to lift it.
            liftReadPause()
            // Back to the pool before the body ends: ending it wakes the consumer, whose next
            // request must find this connection idle rather than open a new one.
            onRelease?(self, reusable)
            exchange.body?.finish()
        case .failRequestAndClose(let failure, let responseStarted):
            guard let exchange = oldest else { return }
            finishOldest(exchange)
            let failureError = error ?? describe(failure, exchange: exchange)
            let finalError = exchange.wroteAnyByte && !failureError.failedBeforeResponse ? failureError.markingMayHaveBeenProcessed() : failureError
            fail(exchange, with: finalError, responseStarted: responseStarted)
            stream.close(error: nil)
            onRelease?(self, false)
            failPipelined()
        case .closeIdle:
            closeIdle()
        }
    }

    private func fail(_ exchange: Exchange, with error: HTTPClientError, responseStarted: Bool) {
        if responseStarted {
            exchange.body?.fail(error)
        } else {
            exchange.settle(.failure(error))
        }
        exchange.continueWaiter?.resume(returning: false)
        exchange.continueWaiter = nil
        exchange.drainWaiter?.resume(returning: .failure(error))
        exchange.drainWaiter = nil
    }

    /// The request's response is over (or became a tunnel) while its task may still wait on it:
    /// parked by a full socket in the middle of an upload the server answered without reading
    /// (an early 413 or 401), or waiting for `100 Continue`. Nothing else would wake it: the
    /// exchange is gone, so neither a drain nor an abort finds it. An unfinished upload fails,
    /// and the request then returns the response it already has.
    private func wakeWaiters(of exchange: Exchange) {
        exchange.continueWaiter?.resume(returning: false)
        exchange.continueWaiter = nil
        guard let waiter = exchange.drainWaiter else { return }
        exchange.drainWaiter = nil
        if exchange.requestSent {
            waiter.resume(returning: .success(()))
        } else {
            waiter.resume(returning: .failure(HTTPClientError(.writeFailed, "the server answered before the request body was sent",
                                                              mayHaveBeenProcessed: true)))
        }
    }

    /// The connection closed with requests pipelined behind the one it answered last: none of
    /// them saw a response byte, so they fail as never answered (and idempotent ones are retried).
    private func failPipelined() {
        let queued = exchanges
        exchanges.removeAll()
        var error = HTTPClientError(.emptyReply, "the connection closed before the response to this pipelined request",
                                    failedBeforeResponse: true)
        error.queuedBehindClosedResponse = true
        for exchange in queued {
            fail(exchange, with: error, responseStarted: false)
            onRelease?(self, false)
        }
    }

    /// Removes the oldest request and starts the read timeout of the next one, if any.
    private func finishOldest(_ exchange: Exchange) {
        exchanges.removeFirst()
        let bytes = exchange.bodyBytes
        exchange.metrics.update {
            $0.timings.lastByte = exchange.metrics.elapsed()
            $0.bodyBytes = bytes
        }
        if let next = oldest, !machine.isClosed { becameOldest(next) }
    }

    private func describe(_ failure: HTTP1ClientConnectionStateMachine.Failure, exchange: Exchange) -> HTTPClientError {
        switch failure {
        case .closedBeforeResponse:
            return HTTPClientError(.emptyReply, "the server closed the connection without sending a response", failedBeforeResponse: true)
        case .closedInHead:
            return HTTPClientError(.connectionClosed, "the server closed the connection in the middle of the response head")
        case .truncatedBody:
            return HTTPClientError(.bodyTruncated, "the server closed the connection after \(exchange.bodyBytes) body bytes, before the end its framing announced")
        case .protocolOrIOError:
            return HTTPClientError(.connectionClosed, "the connection failed")
        case .upgraded:
            return HTTPClientError(.upgradeNotSupported, "the server switched protocols")
        case .abandoned:
            return HTTPClientError(.cancelled, "the request was abandoned")
        }
    }

    private func closeIdle() {
        stream.close(error: nil)
        onIdleClose?(self)
    }
}

/// What a response body's channel tells its connection, naming the response: a hop the consumer queued may run after
/// the loop has finished this response and begun the next, which is not its to resume or abandon.
private struct ResponseBodyProducer: BodyProducer {
    let connection: LoopBound<HTTP1ClientConnection>
    let exchange: HTTP1ClientConnection.ExchangeID

    func resumeProducing() {
        let (connection, exchange) = (connection, exchange)
        connection.loop.execute { connection.value.resumeReadingForBody(of: exchange) }
    }

    func consumerAbandoned() {
        let (connection, exchange) = (connection, exchange)
        connection.loop.execute { connection.value.bodyAbandoned(of: exchange) }
    }
}
