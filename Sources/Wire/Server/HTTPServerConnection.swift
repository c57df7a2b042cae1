/// One accepted connection of an `HTTPServer`: the shell that performs what its `StateMachine` decides.
///
/// It parses straight from the stream's read buffer, so a request costs no copy of its bytes; only bytes of a
/// pipelined request that arrive while a response is under way are copied aside (`waiting`) until their turn.
/// Lives on one loop; everything here runs on that loop's thread.
package final class HTTPServerConnection: ByteStreamDelegate, DeadlineHeapMember {
    let stream: any ByteStream
    /// The loop's share of the server. Held strongly (an unowned reference costs a check per use on the request
    /// path); the cycle through the context's connection table is broken when the connection closes.
    let context: ServerLoopContext
    // The request path's state opts out of dynamic exclusivity checks, which callgrind showed costing about a
    // tenth of the server's instructions per request: the optimizer cannot prove that calls into the stream, the
    // parser and the handler never reach back here. No access to these is held across such a call (the parse
    // loop works on a local buffer, and `perform` runs after the state machine's mutation returns), and the
    // connection is confined to its loop.
    @exclusivity(unchecked) var machine = StateMachine()
    /// The parser and the exchange, borrowed from the loop while a request is under way (nil while idle: an idle
    /// connection holds neither).
    ///
    /// The exchange under way is the slot's (`parserSlot?.exchange`): the slot is held from a request's first byte
    /// until the connection idles again, after the exchange has ended, so with no slot there is no exchange. It is
    /// reached through the slot in place (a computed property forwarding to it copied the exchange, or allocated a
    /// coroutine frame, on every access: about 1,900 instructions per request under callgrind).
    @exclusivity(unchecked) private(set) var parserSlot: ParserSlot?
    /// Bytes read while parsing is stopped (a pipelined request waiting for the current response).
    @exclusivity(unchecked) private var waiting = ByteBuffer()
    /// Writers waiting for the socket to drain (write back-pressure).
    @exclusivity(unchecked) private var drainWaiters: [CheckedContinuation<Void, any Error>] = []
    /// The error that closed the connection, if any, for writers that come later (boxed: a pointer while open). Nil
    /// after a clean close, which those writers hear as `closedCleanly`.
    @exclusivity(unchecked) private var closeError: (any Error)?
    // The small fields last, together: a class's stored properties are laid out in the order declared, and an idle
    // connection's memory is mostly this object and its stream.
    @exclusivity(unchecked) private var timer = ConnectionTimer()
    /// Its place among the loop's connection deadlines (`ServerLoopContext.wake(_:at:)`); -1 when it has none.
    @exclusivity(unchecked) package var deadlineHeapIndex: Int32 = -1
    /// Its place in its loop's table of open connections (`ServerLoopContext`); -1 when not in it.
    @exclusivity(unchecked) var tableIndex: Int32 = -1
    /// Guards against parsing re-entrantly: an exchange that ends inside the parse loop lets the loop go on.
    @exclusivity(unchecked) private var isProcessing = false
    /// The stream sends file regions itself (`FileRegionStream`, a plain socket); TLS's writers read files instead.
    let sendsFiles: Bool
    /// The stream has closed: no handler starts any more.
    private var isClosed = false

    /// Writers pause once this many bytes wait for the socket.
    static let writeHighWatermark = 256 * 1024
    /// What a writer waiting for the socket hears after the connection closed without an error.
    static let closedCleanly = HTTPServerError(.connectionClosed, detail: "the connection closed")

    /// What one exchange holds on the shell's side.
    struct ExchangeContext {
        let id: UInt64
        let isHeadRequest: Bool
        let requestVersion: HTTPVersion
        /// The body's hand-over point, or nil once the body is done, abandoned or discarded.
        var body: BodyChannel?
        /// How the response's body is delimited, and how far it is.
        var framing = ResponseFraming.notStarted
        /// The handler's task, cancelled if the connection aborts.
        var task: Task<Void, Never>?
        /// What `HTTPServerConfiguration.observer` made for this exchange; taken (set to nil) when it is told the end.
        var observer: (any HTTPServerExchangeObserver)?
    }

    /// How a response body is delimited on the wire.
    enum ResponseFraming: Equatable {
        /// No head yet.
        case notStarted
        /// No body may follow (HEAD, 204, 304); body writes are dropped.
        case bodyless
        /// `Content-Length`, with this many bytes still due.
        case length(remaining: Int)
        /// Chunked (RFC 9112 §7.1).
        case chunked
        /// Ends when the connection closes (an HTTP/1.0 client and no length).
        case untilClose
        /// The response is complete.
        case ended
    }

    init(stream: any ByteStream, context: ServerLoopContext) {
        self.stream = stream
        self.sendsFiles = stream.fileRegions != nil
        self.context = context
        stream.delegate = self
        perform(machine.connectionOpened())
    }

    var eventLoop: EventLoop { stream.eventLoop }

    // MARK: Reading

    package func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer) {
        switch machine.state {
        case .closing, .closed:
            // Lingering: read and drop until the peer closes.
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            return
        case .awaitingFirstRequest, .idle, .readingHead, .active:
            break
        }
        // The rest of a large request body may gather in the kernel before the next wake-up; not while bytes wait
        // here unparsed (they are part of what the parser still counts as due).
        defer { stream.expectAtLeast(waiting.isEmpty ? parserSlot?.parser.bodyBytesStillDue ?? 0 : 0) }
        if !waiting.isEmpty || !machine.isParsing || isProcessing {
            waiting.writeBuffer(buffer)
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            processWaiting()
            return
        }
        process(&buffer)
        if buffer.readableBytes > 0 && !machine.isParsing && machine.isOpen {
            waiting.writeBuffer(buffer)
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        }
        // Answered and nothing more read: the connection idles, and its parser goes back to the loop.
        if buffer.readableBytes == 0 { returnParserIfIdle() }
    }

    /// Gives the parser slot back to the loop when the connection idles with nothing unparsed: an idle connection
    /// holds no parser and no exchange. Not while the parse loop runs, which holds the slot in a local.
    private func returnParserIfIdle() {
        guard !isProcessing, machine.state == .idle, waiting.isEmpty, let slot = parserSlot else { return }
        parserSlot = nil
        context.returnParser(slot)
    }

    private func processWaiting() {
        guard !isProcessing, !waiting.isEmpty, machine.isParsing else { return }
        // Parsed from a local: handling a request can close the stream, whose close path clears `waiting`, and
        // that must not overlap an access held across the parse loop.
        var pending = ByteBuffer()
        swap(&pending, &waiting)
        process(&pending)
        if pending.readableBytes > 0 && machine.isOpen {
            // Bytes read meanwhile went to `waiting` only if parsing stopped; they come after these.
            pending.writeBuffer(waiting)
            waiting = pending
        } else {
            waiting.releaseStorage()
        }
    }

    /// Parses and handles events until the bytes run out or parsing must stop.
    private func process(_ buffer: inout ByteBuffer) {
        isProcessing = true
        defer { isProcessing = false }
        let slot: ParserSlot
        if let existing = parserSlot {
            slot = existing
        } else {
            slot = context.borrowParser()
            parserSlot = slot
        }
        while machine.isParsing {
            let step: HTTP1LeanStep
            do {
                // The lean step leaves the head in the parser, so no event holding it is copied on the way out.
                step = try buffer.withUnsafeReadableBytes { (bytes) throws(HTTP1ParseError) -> HTTP1LeanStep in
                    try slot.parser.parseLean(bytes.assumingMemoryBound(to: UInt8.self))
                }
            } catch {
                buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
                parseFailed(error)
                return
            }
            switch step.kind {
            case .needMore:
                buffer.moveReaderIndex(forwardBy: step.consumed)
                if buffer.readableBytes > 0 { perform(machine.partialHeadReceived()) }
                // Mid-body (even mid chunk-size line, bytes left unconsumed), the wait for the rest is bounded.
                perform(machine.bodyBytesAwaited())
                return
            case .head:
                buffer.moveReaderIndex(forwardBy: step.consumed)
                requestHeadReceived(
                    slot.parser.takeRequestHead(), keepAlive: slot.parser.lastRequestKeepsAlive,
                    expectsContinueField: slot.parser.lastRequestExpectsContinue)
            case .body(let range):
                let chunk = buffer.slice(at: range.lowerBound, length: range.count)
                buffer.moveReaderIndex(forwardBy: step.consumed)
                bodyReceived(chunk)
            case .end:
                buffer.moveReaderIndex(forwardBy: step.consumed)
                // Trailers are not passed on: a handler has no use for them once the body is read.
                _ = slot.parser.takeTrailers()
                // The server does not switch protocols: an Upgrade or CONNECT request is answered like any other
                // and the connection stays HTTP/1.1 (RFC 9110 §7.8 lets a server ignore Upgrade).
                if slot.parser.isAwaitingUpgradeDecision { slot.parser.declineUpgrade() }
                parserSlot?.exchange?.body?.finish()
                parserSlot?.exchange?.body = nil
                perform(machine.requestEndReceived())
            case .upgraded:
                // The parser declines every upgrade above, so this cannot follow from any input; if it ever did,
                // the bytes after it are not HTTP this server can frame: drop the connection, not the process.
                buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
                perform(machine.streamClosed())
                return
            }
        }
    }

    /// - Parameters:
    ///   - head: The request head.
    ///   - keepAlive: Whether the request lets the connection stay open (`head.isKeepAlive`, from the parse).
    ///   - expectsContinueField: Whether an `Expect` field holds `100-continue`.
    private func requestHeadReceived(_ head: HTTPRequestHead, keepAlive: Bool, expectsContinueField: Bool) {
        let expectsContinue = head.version >= .http1_1 && expectsContinueField
        let action = machine.requestHeadReceived(keepAlive: keepAlive, expectsContinue: expectsContinue)
        guard action == .startHandler else {
            perform(action)
            return
        }
        timer.disarm()
        // A pipelined request behind a response still going out: its bytes stay bounded by send progress, even
        // while this request's handler writes nothing (a long poll).
        if stream.pendingWriteBytes > 0 { perform(machine.writerBlocked(drainedWriteBytes: stream.drainedWriteBytes)) }
        let id = context.nextExchangeID()
        parserSlot?.exchange = ExchangeContext(id: id, isHeadRequest: head.method == .head, requestVersion: head.version)
        if let observer = context.configuration.observer {
            parserSlot?.exchange?.observer = observer.exchangeStarted(
                HTTPServerExchangeStart(
                    head: head, remoteAddress: stream.remoteAddress, localAddress: stream.localAddress,
                    isSecure: stream.securityInfo != nil))
        }
        if let response = context.immediateResponse(to: head) {
            do {
                try writeImmediateResponse(response, exchangeID: id)
            } catch {
                respondWithInternalError(exchangeID: id)
            }
            return
        }
        startHandler(head, exchangeID: id, expectsContinue: expectsContinue)
    }

    private func startHandler(_ head: HTTPRequestHead, exchangeID id: UInt64, expectsContinue: Bool) {
        guard !isClosed else { return }
        // This connection as a token for the writer and the body's hooks (made here rather than kept: a connection
        // holding a reference to itself would need the cycle broken on close, and it is a word more while idle).
        let bound = LoopBound(self, loop: eventLoop)
        let channel = BodyChannel()
        parserSlot?.exchange?.body = channel
        let loop = eventLoop
        channel.setProducerHooks(
            onDemand: { loop.execute { bound.value.bodyDemanded(exchangeID: id) } },
            onCancel: { loop.execute { bound.value.bodyAbandoned(exchangeID: id) } })
        if expectsContinue {
            channel.setFirstReadHook { loop.execute { bound.value.bodyReadStarted(exchangeID: id) } }
        }
        let request = HTTPServerRequest(
            head: head, body: HTTPBody(channel: channel),
            remoteAddress: stream.remoteAddress, localAddress: stream.localAddress, transportSecurity: stream.securityInfo,
            exchangeObserver: parserSlot?.exchange?.observer)
        let writer = HTTPResponseWriter(connection: bound, exchangeID: id, sendsFiles: sendsFiles)
        let handler = context.handler
        context.handlerStarted()
        parserSlot?.exchange?.task = Task(executorPreference: loop) {
            var failure: (any Error)?
            do {
                try await handler.handle(request, response: writer)
            } catch {
                failure = error
            }
            writer.handlerFinished(error: failure)
        }
    }

    private func bodyReceived(_ chunk: ByteBuffer) {
        guard let channel = parserSlot?.exchange?.body else { return }  // discarding
        if !channel.yield(chunk) { perform(machine.bodyConsumerFellBehind()) }
    }

    private func parseFailed(_ error: HTTP1ParseError) {
        let action = machine.parseErrorOccurred(status: Self.status(for: error))
        if case .failBodyAndWriteErrorResponseAndClose = action { parserSlot?.exchange?.body?.fail(error) }
        perform(action)
    }

    /// The status that answers a parse fault.
    package static func status(for error: HTTP1ParseError) -> HTTPStatus {
        switch error.kind {
        case .requestLineTooLong: return .uriTooLong
        case .headerSectionTooLarge, .tooManyHeaders: return .requestHeaderFieldsTooLarge
        case .bodyTooLarge: return .contentTooLarge
        case .unsupportedTransferCoding: return .notImplemented
        case .unsupportedVersion: return .httpVersionNotSupported
        default: return .badRequest
        }
    }

    package func streamDidReachEnd(_ stream: any ByteStream) {
        let action = machine.readEOF(pendingWriteBytes: stream.pendingWriteBytes)
        if action == .failRequestBody {
            let error: any Error
            do {
                _ = try parserSlot?.parser.finish()
                error = HTTPServerError(.connectionClosed, detail: "the client closed during the request body")
            } catch let parseError {
                error = parseError
            }
            parserSlot?.exchange?.body?.fail(error)
            parserSlot?.exchange?.body = nil
        }
        perform(action)
    }

    // MARK: Body hooks (from the handler's side, hopped onto the loop)

    private func bodyDemanded(exchangeID id: UInt64) {
        guard parserSlot?.exchange?.id == id else { return }
        perform(machine.bodyConsumerCaughtUp())
    }

    private func bodyAbandoned(exchangeID id: UInt64) {
        guard parserSlot?.exchange?.id == id, parserSlot?.exchange?.body != nil else { return }
        // The handler stopped reading: drop the rest of the body as it comes, keep the connection.
        parserSlot?.exchange?.body = nil
        perform(machine.bodyConsumerCaughtUp())
    }

    private func bodyReadStarted(exchangeID id: UInt64) {
        guard parserSlot?.exchange?.id == id else { return }
        perform(machine.bodyReadStarted())
    }

    // MARK: Actions

    func perform(_ action: StateMachine.Action) {
        switch action {
        case .none, .startHandler:
            break
        case .scheduleHeaderTimer:
            armTimer(.header, afterNanoseconds: context.configuration.headerReadTimeout.nanoseconds)
        case .armBodyReadTimer:
            armTimer(.bodyRead, afterNanoseconds: context.bodyReadTimeoutNanoseconds)
        case .armSendTimer:
            armTimer(.send, afterNanoseconds: context.sendTimeoutNanoseconds)
        case .armIdleTimer:
            armTimer(.idle, afterNanoseconds: context.idleTimeoutNanoseconds)
        case .resumeAfterDrain:
            armTimer(.idle, afterNanoseconds: context.idleTimeoutNanoseconds)
            stream.setReadingEnabled(true)
            processWaiting()
        case .armLingerTimer:
            armTimer(.linger, afterNanoseconds: context.configuration.lingerTimeout.nanoseconds)
        case .finishWritesAndClose:
            closeLingering()
        case .sendContinue:
            stream.write([Self.continueResponse])
            // The client sends its body now.
            perform(machine.bodyBytesAwaited())
        case .pauseReading:
            stream.setReadingEnabled(false)
        case .resumeReading:
            stream.setReadingEnabled(true)
            perform(machine.bodyBytesAwaited())
        case .discardRequestBody:
            parserSlot?.exchange?.body?.fail(HTTPServerError(.responseAlreadyEnded, detail: "the response ended before the body"))
            parserSlot?.exchange?.body = nil
            stream.setReadingEnabled(machine.isReadingEnabled)
            // Reading may have been paused for the consumer, whose stall no longer counts: the peer's does.
            perform(machine.bodyBytesAwaited())
        case .prepareForNextRequest:
            parserSlot?.exchange = nil
            perform(machine.enteredIdle(pendingWriteBytes: stream.pendingWriteBytes, drainedWriteBytes: stream.drainedWriteBytes))
            // Paused while the response still goes out (`resumeAfterDrain` reads again).
            stream.setReadingEnabled(machine.isReadingEnabled)
            processWaiting()
            // A response that ended outside the parse loop (a handler's, not an immediate one): nothing more to parse,
            // so the parser and its exchange slot go back to the loop now rather than at the next read.
            returnParserIfIdle()
        case .writeErrorResponseAndClose(let status), .failBodyAndWriteErrorResponseAndClose(let status):
            endExchange(error: HTTPServerError(.connectionClosed, detail: "request refused with \(status)"))
            writeErrorResponse(status)
            closeLingering()
        case .closeConnection:
            endExchange(error: HTTPServerError(.connectionClosed, detail: "the connection closed after a response"))
            closeLingering()
        case .abortConnection:
            stream.close(error: nil)
        case .failRequestBody:
            parserSlot?.exchange?.body?.fail(HTTPServerError(.connectionClosed, detail: "the client closed during the body"))
            parserSlot?.exchange?.body = nil
        case .bodyReadTimedOut(let status):
            endExchange(
                error: HTTPServerError(
                    .bodyReadTimeout, detail: "no request body bytes for \(context.configuration.bodyReadTimeout)"))
            if let status { writeErrorResponse(status) }
            closeLingering()
        case .sendTimedOut:
            let error = HTTPServerError(
                .sendTimeout,
                detail: "\(stream.pendingWriteBytes) response bytes unread for \(context.configuration.sendTimeout)")
            // Kept for writers that come after the close, which would otherwise hear only that it closed.
            closeError = error
            parserSlot?.exchange?.body?.fail(error)
            parserSlot?.exchange?.body = nil
            failDrainWaiters(error)
            stream.close(error: nil)
        }
    }

    private static let continueResponse = ByteBuffer(string: "HTTP/1.1 100 Continue\r\n\r\n")

    private func writeErrorResponse(_ status: HTTPStatus) {
        context.scratch.clear()
        context.scratch.writeString("HTTP/1.1 \(status.code) \(status.defaultReasonPhrase)\r\n")
        context.scratch.writeLiteral("Content-Length: 0\r\nConnection: close\r\n")
        appendServerFields(to: &context.scratch, head: nil)
        context.scratch.writeLiteral("\r\n")
        writeScratch()
    }

    /// Appends `Date` and `Server` when configured and not already in `head`.
    func appendServerFields(to buffer: inout ByteBuffer, head: HTTPResponseHead?) {
        if context.configuration.addsDateHeader && head?.headers.contains(literalName: "date") != true {
            context.dateCache.appendLine(to: &buffer)
        }
        if var serverName = context.configuration.serverName, head?.headers.contains(literalName: "server") != true {
            buffer.writeLiteral("Server: ")
            serverName.withUTF8 { buffer.writeBytes(UnsafeRawBufferPointer($0)) }
            buffer.writeLiteral("\r\n")
        }
    }

    /// Sends end of stream after what is queued and reads until the peer's: bounded by the send timer while
    /// queued bytes still go out, then by the linger timer.
    private func closeLingering() {
        guard stream.isOpen else { return }
        // What lingering reads is dropped: none of it is due, so none is waited for.
        stream.expectAtLeast(0)
        stream.shutdownWrite()
        // Decided before reading resumes, so that an end of stream read next finds the queued bytes accounted for.
        perform(machine.enteredClosing(pendingWriteBytes: stream.pendingWriteBytes, drainedWriteBytes: stream.drainedWriteBytes))
        if stream.isOpen { stream.setReadingEnabled(true) }
    }

    /// Fails what the exchange holds: its body reader and its writers.
    private func endExchange(error: HTTPServerError) {
        if let observer = parserSlot?.exchange?.observer {
            parserSlot?.exchange?.observer = nil
            observer.exchangeEnded(.failed(error))
        }
        parserSlot?.exchange?.body?.fail(error)
        parserSlot?.exchange?.body = nil
        if case .notStarted = parserSlot?.exchange?.framing { parserSlot?.exchange?.framing = .ended }
        parserSlot?.exchange = nil
        failDrainWaiters(error)
    }

    private func armTimer(_ kind: ConnectionTimer.Kind, afterNanoseconds delay: Int64) {
        let deadline = ConnectionTimer.deadline(afterNanoseconds: delay, from: Posix.monotonicNanoseconds())
        if let wake = timer.arm(kind, at: deadline) { context.wake(self, at: wake) }
    }

    /// The loop's wake-up for this connection came (`ServerLoopContext`), at `now`.
    func woke(at now: Deadline) {
        switch timer.woke(at: now) {
        case .nothing: return
        case .later(let deadline): context.wake(self, at: deadline)
        case .expired(.idle): perform(machine.idleTimeoutFired())
        case .expired(.header): perform(machine.headerTimeoutFired())
        case .expired(.bodyRead): perform(machine.bodyReadTimeoutFired())
        case .expired(.send): perform(machine.sendTimeoutFired(drainedWriteBytes: stream.drainedWriteBytes))
        case .expired(.linger): perform(machine.lingerTimeoutFired())
        }
    }

    // MARK: Writing back-pressure

    package func streamDidDrainWrites(_ stream: any ByteStream) {
        // Writers first: their bytes are out, whatever the machine decides next (a closing connection whose peer
        // already ended closes now, and that must not fail writes that were delivered).
        if !drainWaiters.isEmpty {
            let waiters = drainWaiters
            drainWaiters.removeAll()
            for waiter in waiters { waiter.resume() }
        }
        perform(machine.writesDrained())
    }

    /// Resumes `continuation` once the queued bytes are written, or fails it if the exchange is gone.
    func waitForDrain(exchangeID id: UInt64, _ continuation: CheckedContinuation<Void, any Error>) {
        // A writer whose exchange has ended (its whole response queued, a pipelined request already started) still
        // waits for its bytes while the connection is open.
        guard parserSlot?.exchange?.id == id || stream.isOpen else {
            continuation.resume(throwing: closeError ?? Self.closedCleanly)
            return
        }
        if stream.pendingWriteBytes == 0 || !stream.isOpen {
            continuation.resume()
        } else {
            drainWaiters.append(continuation)
            // Bounded by the send timer while its exchange runs; after the response ended, by the send timer of
            // the idle or closing connection, or of the pipelined exchange that started behind it.
            if parserSlot?.exchange?.id == id { perform(machine.writerBlocked(drainedWriteBytes: stream.drainedWriteBytes)) }
        }
    }

    private func failDrainWaiters(_ error: HTTPServerError) {
        guard !drainWaiters.isEmpty else { return }
        let waiters = drainWaiters
        drainWaiters.removeAll()
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    // MARK: Lifecycle

    /// The server is shutting down.
    func shutdownRequested() {
        perform(machine.shutdownRequested(pendingWriteBytes: stream.pendingWriteBytes))
    }

    /// Closes at once (the shutdown deadline passed).
    func abort() {
        stream.close(error: nil)
    }

    package func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?) {
        _ = machine.streamClosed()
        let reason =
            error.map { HTTPServerError(.connectionClosed, detail: "the connection closed", underlying: $0) }
            ?? Self.closedCleanly
        // Kept only when it says more than `closedCleanly`: boxing it as `any Error` is an allocation per connection.
        if closeError == nil, error != nil { closeError = reason }
        parserSlot?.exchange?.task?.cancel()
        endExchange(error: reason)
        // The parser goes back to the loop for the next connection (a connection that closes after one request never
        // idles to give it back), unless the parse loop holds it in a local right now.
        if !isProcessing, let slot = parserSlot {
            parserSlot = nil
            context.returnParser(slot)
        }
        timer.cancel()
        context.cancelWake(self)
        waiting.releaseStorage()
        isClosed = true
        context.connectionClosed(self)
    }
}

extension HTTPServerConnection.StateMachine {
    /// Whether the connection is neither closing nor closed.
    var isOpen: Bool {
        switch state {
        case .awaitingFirstRequest, .idle, .readingHead, .active: return true
        case .closing, .closed: return false
        }
    }
}
