/// One HTTP/1.1 client connection on its event loop: writes requests, parses responses, and
/// tells its pool when it is free again or gone. It speaks to `any ByteStream`, so it runs the
/// same over TCP, a Unix socket, or TLS.
///
/// The decisions are `HTTP1ClientConnectionStateMachine`'s; this class performs them. Everything
/// here runs on `loop`; tasks reach it through `LoopBound` and the async helpers at the bottom.
final class HTTP1ClientConnection: ByteStreamDelegate {
    typealias ID = ConnectionPoolStateMachine.ConnectionID

    /// The response head with its body stream, as handed to the waiting request.
    struct ResponseStart: Sendable {
        var head: HTTPResponseHead
        var body: HTTPBody
    }

    /// The request in flight.
    private final class Exchange {
        let method: HTTPMethod
        /// The promise of the response head, until it is delivered: then dropped, because the
        /// promise holds the body, and the connection must not keep a body its reader let go of
        /// (dropping it unread is how a reader abandons a response).
        var response: Promise<ResponseStart, HTTPClientError>?
        /// Whether the response head was delivered (or the request failed before it).
        var responseSettled = false
        var body: BodyChannel?
        var metrics: HTTPClientMetrics
        var continueWaiter: CheckedContinuation<Bool, Never>?
        /// `100 Continue` arrived, possibly before anyone waited for it.
        var receivedContinue = false
        var drainWaiter: CheckedContinuation<Result<Void, HTTPClientError>, Never>?
        var readTimeout: Duration
        var readTimer: TimerQueue<() -> Void>.ID?
        var lastActivity = Deadline.now()
        var sawFirstByte = false
        var bodyBytes = 0
        var wroteAnyByte = false

        init(method: HTTPMethod, metrics: HTTPClientMetrics, readTimeout: Duration) {
            self.method = method
            self.metrics = metrics
            self.readTimeout = readTimeout
        }
    }

    let id: ID
    let loop: EventLoop
    private let stream: any ByteStream
    private var parser: HTTP1Parser
    private var machine = HTTP1ClientConnectionStateMachine()
    private var exchange: Exchange?
    /// Requests completed on this connection; a request on a connection with one or more is "reused".
    private(set) var completedRequests = 0
    /// A security layer's error that closed the connection while no request was under way: a
    /// TLS 1.3 server refuses a client certificate only after the handshake, so the refusal can
    /// arrive before the first request and must still be what that request reports.
    private var idleSecurityError: (any Error)?
    /// Set by the pool: called once per lease when the connection is free (`true`) or unusable.
    var onRelease: ((HTTP1ClientConnection, _ reusable: Bool) -> Void)?
    /// Set by the pool: called when an idle connection closes on its own.
    var onIdleClose: ((HTTP1ClientConnection) -> Void)?
    /// Whether the pool has leased the connection to a request.
    var isLeased = false
    private var bodyPausedReading = false

    /// High-water mark of queued request bytes before a streaming upload waits for the socket.
    static let writeHighWatermark = 256 * 1024

    init(id: ID, stream: any ByteStream, parserConfiguration: HTTP1ParserConfiguration) {
        self.id = id
        self.loop = stream.eventLoop
        self.stream = stream
        self.parser = HTTP1Parser(kind: .response, configuration: parserConfiguration)
        stream.delegate = self
    }

    /// Whether the connection can take a request.
    var isUsable: Bool { stream.isOpen && !machine.isClosed && !machine.isBusy }

    var remoteAddress: SocketAddress? { stream.remoteAddress }
    var localAddress: SocketAddress? { stream.localAddress }
    var securityInfo: TransportSecurityInfo? { stream.securityInfo }

    // MARK: Sending

    /// Starts a request: writes the head (and `inlineBody`, if the whole body is in memory) and
    /// returns the promise of its response head.
    func start(
        head: ByteBuffer,
        inlineBody: ByteBuffer?,
        method: HTTPMethod,
        keepAlive: Bool,
        requestComplete: Bool,
        readTimeout: Duration,
        metrics: HTTPClientMetrics
    ) -> Promise<ResponseStart, HTTPClientError> {
        loop.preconditionInEventLoop()
        let exchange = Exchange(method: method, metrics: metrics, readTimeout: readTimeout)
        guard isUsable else {
            let promise = Promise<ResponseStart, HTTPClientError>()
            if let idleSecurityError {
                promise.fail(HTTPClientError(.tlsFailed, "\(idleSecurityError)", securityError: idleSecurityError, failedBeforeResponse: true))
                return promise
            }
            promise.fail(HTTPClientError(.emptyReply, "the pooled connection was closed by the server", failedBeforeResponse: true))
            return promise
        }
        let promise = Promise<ResponseStart, HTTPClientError>()
        exchange.response = promise
        self.exchange = exchange
        machine.requestStarted(keepAlive: keepAlive)
        parser.expectResponse(to: method)
        metrics.update { $0.isReusedConnection = completedRequests > 0 }
        armReadTimer(exchange)
        write(inlineBody.map { [head, $0] } ?? [head], exchange: exchange)
        if requestComplete { requestWritten(exchange) }
        return promise
    }

    private func write(_ buffers: [ByteBuffer], exchange: Exchange) {
        exchange.wroteAnyByte = true
        stream.write(buffers)
    }

    private func requestWritten(_ exchange: Exchange) {
        _ = machine.requestWritten()
        if stream.pendingWriteBytes == 0 { exchange.metrics.update { $0.timings.requestSent = exchange.metrics.elapsed() } }
    }

    /// Writes part of a streamed body; completes once the socket has room for more.
    func writeBodyPart(_ buffers: [ByteBuffer], isLast: Bool, continuation: CheckedContinuation<Result<Void, HTTPClientError>, Never>) {
        loop.preconditionInEventLoop()
        guard let exchange, stream.isOpen, !machine.isClosed else {
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

    /// Waits for `100 Continue` (true), or a final response or the timeout (false: send the
    /// body anyway after a timeout, per RFC 9110 §10.1.1, or skip it if a final response came).
    func awaitContinue(timeout: Duration, continuation: CheckedContinuation<Bool, Never>) {
        loop.preconditionInEventLoop()
        guard let exchange, !exchange.responseSettled else {
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

    /// Abandons the request in flight (deadline passed, task cancelled): fails it and closes.
    func abort(with error: HTTPClientError) {
        loop.preconditionInEventLoop()
        guard exchange != nil else { return }
        perform(machine.failed(.abandoned), error: error)
    }

    /// Closes the connection (pool eviction or shutdown).
    func close() {
        loop.preconditionInEventLoop()
        stream.close(error: nil)
    }

    // MARK: Receiving

    func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer) {
        if machine.bytesReceived() == .closeIdle {
            closeIdle()
            return
        }
        guard let exchange else { return }
        exchange.lastActivity = .now()
        if !exchange.sawFirstByte {
            exchange.sawFirstByte = true
            exchange.metrics.update { $0.timings.firstByte = exchange.metrics.elapsed() }
        }
        // Keep asking until the parser neither consumes nor reports anything: some events (the
        // end of a Content-Length body) come from a call with no new bytes.
        while self.exchange === exchange {
            let step: HTTP1ParseStep
            do {
                step = try buffer.withReadableSpan { (span) throws(HTTP1ParseError) -> HTTP1ParseStep in try parser.parse(span) }
            } catch {
                perform(machine.failed(.protocolOrIOError),
                        error: HTTPClientError(.malformedResponse, "\(error)", parseError: error, mayHaveBeenProcessed: true))
                return
            }
            var chunk: ByteBuffer?
            if case .body(let range) = step.event { chunk = buffer.slice(at: range.lowerBound, length: range.count) }
            buffer.moveReaderIndex(forwardBy: step.consumed)
            guard let event = step.event else {
                if step.consumed == 0 { return }
                continue
            }
            handle(event, chunk: chunk, exchange: exchange, trailingBytes: buffer.readableBytes > 0)
        }
    }

    private func handle(_ event: HTTP1ParserEvent, chunk: ByteBuffer?, exchange: Exchange, trailingBytes: Bool = false) {
        switch event {
        case .requestHead:
            preconditionFailure("a response parser produced a request head")
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
            let channel = BodyChannel()
            let bound = LoopBound(self, loop: loop)
            channel.setProducerHooks(
                onDemand: { bound.loop.execute { bound.value.resumeReadingForBody() } },
                onCancel: { bound.loop.execute { bound.value.bodyAbandoned() } }
            )
            exchange.body = channel
            if let waiter = exchange.continueWaiter {
                exchange.continueWaiter = nil
                waiter.resume(returning: false)
            }
            exchange.responseSettled = true
            exchange.response?.succeed(ResponseStart(head: head, body: HTTPBody(channel: channel)))
            exchange.response = nil
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

    func streamDidReachEnd(_ stream: any ByteStream) {
        guard exchange != nil else {
            perform(machine.endOfStream(), error: nil)
            return
        }
        do {
            if let event = try parser.finish(), let exchange {
                handle(event, chunk: nil, exchange: exchange)
            }
        } catch {
            // Mid-message EOF: the state machine decides which error it is.
        }
        if exchange != nil || !machine.isClosed { perform(machine.endOfStream(), error: nil) }
    }

    func streamDidDrainWrites(_ stream: any ByteStream) {
        guard let exchange else { return }
        if machine.isBusy, exchange.metrics.snapshot.timings.requestSent == nil { exchange.metrics.update { $0.timings.requestSent = exchange.metrics.elapsed() } }
        if let waiter = exchange.drainWaiter {
            exchange.drainWaiter = nil
            waiter.resume(returning: .success(()))
        }
    }

    func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?) {
        let ioError = error as? IOError
        if exchange == nil, ioError == nil, let error, !(error is EventLoopClosedError) { idleSecurityError = error }
        let clientError: HTTPClientError
        if let ioError, ioError.errno == .connectionReset || ioError.errno == .brokenPipe {
            clientError = HTTPClientError(.connectionReset, "\(ioError)", ioError: ioError, failedBeforeResponse: !(exchange?.sawFirstByte ?? true))
        } else if let ioError {
            clientError = HTTPClientError(.writeFailed, "\(ioError)", ioError: ioError, failedBeforeResponse: !(exchange?.sawFirstByte ?? true))
        } else {
            // A TLS layer's error (a truncated stream, an alert) keeps its precise reason.
            clientError = HTTPClientError(.connectionClosed, error.map { "\($0)" } ?? "the connection closed", securityError: error,
                                          failedBeforeResponse: !(exchange?.sawFirstByte ?? true))
        }
        perform(machine.failed(.protocolOrIOError), error: clientError)
    }

    // MARK: Back-pressure and abandonment

    private func resumeReadingForBody() {
        guard bodyPausedReading, stream.isOpen else { return }
        bodyPausedReading = false
        stream.setReadingEnabled(true)
    }

    private func bodyAbandoned() {
        guard exchange?.body != nil else { return }
        perform(machine.failed(.abandoned), error: HTTPClientError(.cancelled, "the response body was abandoned"))
    }

    // MARK: Timers

    /// One timer per exchange, re-armed lazily: reads only stamp `lastActivity`, so a fast
    /// download costs no timer work per read.
    private func armReadTimer(_ exchange: Exchange) {
        let when = exchange.lastActivity + exchange.readTimeout
        exchange.readTimer = loop.scheduleOnLoop(at: when) { [weak self, weak exchange] in
            guard let self, let exchange, self.exchange === exchange else { return }
            let idleFor = Deadline.now() - exchange.lastActivity
            if idleFor >= exchange.readTimeout && !self.bodyPausedReading {
                self.perform(self.machine.failed(.protocolOrIOError),
                             error: HTTPClientError(.readTimeout, "no data from the server for \(exchange.readTimeout)", mayHaveBeenProcessed: exchange.wroteAnyByte))
            } else {
                if self.bodyPausedReading { exchange.lastActivity = .now() }
                self.armReadTimer(exchange)
            }
        }
    }

    // MARK: Performing actions

    private func perform(_ action: HTTP1ClientConnectionStateMachine.Action, error: HTTPClientError?) {
        switch action {
        case .none, .deliverHead:
            return
        case .completeRequest(let reusable):
            guard let exchange else { return }
            finishExchange(exchange)
            completedRequests += 1
            if !reusable { stream.close(error: nil) }
            // Back to the pool before the body ends: ending it wakes the consumer, whose next
            // request must find this connection idle rather than open a new one.
            release(reusable: reusable)
            exchange.body?.finish()
        case .failRequestAndClose(let failure, let responseStarted):
            guard let exchange else { return }
            finishExchange(exchange)
            let failureError = error ?? describe(failure, exchange: exchange)
            let finalError = exchange.wroteAnyByte && !failureError.failedBeforeResponse ? failureError.markingMayHaveBeenProcessed() : failureError
            if responseStarted {
                exchange.body?.fail(finalError)
            } else {
                exchange.responseSettled = true
                exchange.response?.fail(finalError)
                exchange.response = nil
            }
            exchange.continueWaiter?.resume(returning: false)
            exchange.continueWaiter = nil
            exchange.drainWaiter?.resume(returning: .failure(finalError))
            exchange.drainWaiter = nil
            stream.close(error: nil)
            release(reusable: false)
        case .closeIdle:
            closeIdle()
        }
    }

    private func finishExchange(_ exchange: Exchange) {
        if let timer = exchange.readTimer { loop.cancelOnLoop(timer) }
        exchange.readTimer = nil
        let bytes = exchange.bodyBytes
        exchange.metrics.update {
            $0.timings.lastByte = exchange.metrics.elapsed()
            $0.bodyBytes = bytes
        }
        self.exchange = nil
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

    private func release(reusable: Bool) {
        guard isLeased else { return }
        isLeased = false
        onRelease?(self, reusable)
    }

    private func closeIdle() {
        stream.close(error: nil)
        if isLeased {
            release(reusable: false)
        } else {
            onIdleClose?(self)
        }
    }
}
