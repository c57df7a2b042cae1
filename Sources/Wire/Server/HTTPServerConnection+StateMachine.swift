extension HTTPServerConnection {
    /// The decisions of one server connection, as a value: events in, actions out, no I/O and no clock.
    ///
    /// One request is handled at a time. Bytes of pipelined requests that arrive meanwhile wait, unparsed, until the
    /// current response has ended, so responses go out in request order (RFC 9112 §9.3.2) without queuing handlers.
    package struct StateMachine {
        /// Where the connection stands. Transitions are noted per case.
        package enum State: Equatable {
            /// Accepted, nothing of the first request received yet: the header timer runs from the accept, so a
            /// connection that never speaks is held no longer than a slow head (nginx's `client_header_timeout`).
            /// → readingHead, active, closing, closed.
            case awaitingFirstRequest
            /// Between requests, nothing of the next head received; the idle timer runs.
            /// → readingHead, active, closing, closed.
            case idle
            /// Part of a head arrived; the header timer runs, and the whole head must come before it fires.
            /// → active, closing, closed.
            case readingHead
            /// A request is being handled. → idle (keep-alive), closing, closed.
            case active(Exchange)
            /// The last response is being flushed; we wait for the peer's end of stream, bounded by the linger timer,
            /// so a reset cannot destroy a response the peer has not read yet. → closed.
            case closing
            /// Terminal.
            case closed
        }

        /// One request/response exchange.
        package struct Exchange: Equatable {
            /// The request's end (and trailers) has been parsed.
            var requestComplete = false
            /// How far the response is.
            var response = ResponsePhase.pending
            /// Whether the connection may carry another request after this one.
            var keepAlive: Bool
            /// The client sent `Expect: 100-continue` and waits for the go-ahead before sending the body.
            var expectsContinue: Bool
            /// `100 Continue` was sent.
            var continueSent = false
            /// The response ended before the request body: the rest of the body is read and dropped.
            var discardingBody = false
            /// The body's consumer has more unread bytes than it wants: reading is paused.
            var bodyConsumerBehind = false
            /// The peer ended its side before the request's end: no more body bytes can come.
            var readClosed = false
            /// While a writer waits for queued response bytes to drain: the stream's drained-byte count (it only
            /// grows) at the last check, so that more bytes queued meanwhile cannot hide a peer that reads nothing.
            var sendStall: UInt64?

            /// Whether the server waits on the peer for body bytes: the request is not complete, the socket is
            /// read (not paused for the body's consumer, a stall that is the handler's), and the client is not
            /// held back by an `Expect: 100-continue` the server has not answered.
            var awaitsBodyBytes: Bool {
                !requestComplete && !readClosed && !bodyConsumerBehind && (!expectsContinue || continueSent)
            }
        }

        /// How far a response is.
        enum ResponsePhase: Equatable {
            /// Nothing written yet.
            case pending
            /// The head is written; the body is being written.
            case headSent
            /// The response is complete.
            case ended
        }

        /// What the shell must do.
        package enum Action: Equatable {
            /// Nothing.
            case none
            /// Arm the header timer: the head under way (or, on a new connection, the first head) must be complete
            /// before it fires.
            case scheduleHeaderTimer
            /// Start the request's handler (the head was just parsed); cancels the header or idle timer.
            case startHandler
            /// Arm the body-read timer, or move its deadline: the peer owes body bytes the server is reading.
            case armBodyReadTimer
            /// Arm the send timer: a writer waits for queued bytes, and the next check for progress is due then.
            case armSendTimer
            /// Arm the idle timer: the last response has gone out and the connection waits for the next request.
            case armIdleTimer
            /// The last response has gone out: arm the idle timer, read again and parse the requests that waited.
            case resumeAfterDrain
            /// Arm the linger timer: the connection is closing, everything queued has gone out, and it waits
            /// briefly for the peer's end of stream.
            case armLingerTimer
            /// Close after what is queued: end of stream once the writes drain (the send timer bounds them), then
            /// the lingering close. No writer is failed: their bytes still go out.
            case finishWritesAndClose
            /// Send `100 Continue` (RFC 9110 §10.1.1): the handler started reading a body the client holds back.
            case sendContinue
            /// Stop reading from the socket (back-pressure, or pipelined bytes waiting for the current response).
            case pauseReading
            /// Read from the socket again; the body is due again, so ask `bodyBytesAwaited()` what bounds the wait.
            case resumeReading
            /// Read and drop the rest of the request body; tell the body's reader, if any, that it is gone.
            case discardRequestBody
            /// The exchange is over and the connection stays: ask `enteredIdle(pendingWriteBytes:)` which timer runs (the
            /// send timer while the response still goes out, then the idle timer), resume reading, parse what waits.
            case prepareForNextRequest
            /// Answer with this status and `Connection: close`, then close (lingering).
            case writeErrorResponseAndClose(HTTPStatus)
            /// Fail the request body's reader with the parse error at hand, and answer with this status and
            /// `Connection: close` (the response had not started).
            case failBodyAndWriteErrorResponseAndClose(HTTPStatus)
            /// Flush what is queued, send end of stream, wait briefly for the peer's, then close.
            case closeConnection
            /// Close at once; fail the request body's reader and pending writes.
            case abortConnection
            /// The peer ended its side during the request body: fail the body's reader with the parser's error.
            case failRequestBody
            /// The peer sent no body bytes within the body-read timeout: fail the body's reader and any waiting
            /// writer with `.bodyReadTimeout`, answer with this status and `Connection: close` if there is one
            /// (no response head was sent), then close (lingering).
            case bodyReadTimedOut(HTTPStatus?)
            /// The peer read none of the queued response within the send timeout: fail the waiting writer and the
            /// body's reader with `.sendTimeout`, and close at once (the peer reads nothing a lingering close
            /// would flush).
            case sendTimedOut
        }

        package private(set) var state = State.awaitingFirstRequest
        /// Between requests or while closing, response bytes still queued at the last send check: the peer is still
        /// reading a response whose exchange ended, which the send timer bounds (by progress) before the idle or
        /// linger timer starts. nil otherwise.
        private(set) var trailingSendStall: UInt64?
        /// The peer's end of stream arrived while the connection was closing with writes still queued: once they
        /// drain, nothing is left to linger for.
        private(set) var peerEnded = false
        /// Set once shutdown starts: no exchange may keep the connection afterwards.
        private(set) var isShuttingDown = false

        package init() {}

        /// Whether the socket should be read now, given every reason to pause.
        package var isReadingEnabled: Bool {
            switch state {
            // A response still going out holds the next request back: a peer that does not read gets no new
            // exchange (and no fresh timer) until it does.
            case .idle: return trailingSendStall == nil
            case .awaitingFirstRequest, .readingHead, .closing: return true
            case .active(let exchange):
                if exchange.bodyConsumerBehind { return false }
                // Once the request is complete, what arrives belongs to the next request: it waits.
                return !exchange.requestComplete
            case .closed: return false
            }
        }

        /// Whether the shell should feed bytes to the parser now.
        package var isParsing: Bool {
            switch state {
            case .idle: return trailingSendStall == nil
            case .awaitingFirstRequest, .readingHead: return true
            case .active(let exchange): return !exchange.requestComplete
            case .closing, .closed: return false
            }
        }

        // MARK: Reading

        /// The connection was accepted: the first request's head is due within the header timeout from now, whether
        /// or not any byte of it comes.
        package func connectionOpened() -> Action {
            guard case .awaitingFirstRequest = state else { return .none }
            return .scheduleHeaderTimer
        }

        /// Bytes of a head arrived and no complete head was found yet.
        package mutating func partialHeadReceived() -> Action {
            switch state {
            case .awaitingFirstRequest:
                // The header timer has run since the accept: a first byte does not buy the head more time.
                state = .readingHead
                return .none
            case .idle:
                trailingSendStall = nil
                state = .readingHead
                return .scheduleHeaderTimer
            case .readingHead, .active, .closing, .closed:
                return .none
            }
        }

        /// A complete request head was parsed.
        /// - Parameters:
        ///   - keepAlive: Whether the request allows another one after it (RFC 9112 §9.3).
        ///   - expectsContinue: Whether it carries `Expect: 100-continue` (HTTP/1.1 only).
        package mutating func requestHeadReceived(keepAlive: Bool, expectsContinue: Bool) -> Action {
            switch state {
            case .awaitingFirstRequest, .idle, .readingHead:
                trailingSendStall = nil
                state = .active(Exchange(keepAlive: keepAlive && !isShuttingDown, expectsContinue: expectsContinue))
                return .startHandler
            case .closing, .closed:
                // Parsing stops when the connection closes; a head that still arrives is dropped with it.
                return .none
            case .active:
                // A second head while an exchange is under way means the shell parsed past the request's end:
                // the framing is lost, so only this connection goes.
                state = .closed
                return .abortConnection
            }
        }

        /// The parser ran out of bytes. During a request body the peer owes more: one read after another, this
        /// moves the body-read deadline (a clock read, no timer-heap work).
        ///
        /// One timer serves the connection, and a writer's stall takes it first: a handler echoing its body may
        /// wait both for body bytes and for its writes to drain, and while it waits on a drain it reads nothing, so
        /// the send timer is the one that can expire usefully. The body-read timer is armed again once the writes
        /// drain (`writesDrained()`).
        package func bodyBytesAwaited() -> Action {
            guard case .active(let exchange) = state, exchange.awaitsBodyBytes, exchange.sendStall == nil else {
                return .none
            }
            return .armBodyReadTimer
        }

        /// The body's reader fell behind by more than it buffers.
        package mutating func bodyConsumerFellBehind() -> Action {
            guard case .active(var exchange) = state, !exchange.bodyConsumerBehind else { return .none }
            let wasReading = isReadingEnabled
            exchange.bodyConsumerBehind = true
            state = .active(exchange)
            return wasReading ? .pauseReading : .none
        }

        /// The body's reader caught up.
        package mutating func bodyConsumerCaughtUp() -> Action {
            guard case .active(var exchange) = state, exchange.bodyConsumerBehind else { return .none }
            exchange.bodyConsumerBehind = false
            state = .active(exchange)
            return isReadingEnabled ? .resumeReading : .none
        }

        /// The request's body (and trailers) ended.
        package mutating func requestEndReceived() -> Action {
            guard case .active(var exchange) = state, !exchange.requestComplete else {
                // No exchange to end: the connection closed under the parse, or the framing is lost.
                return abortUnlessClosed()
            }
            exchange.requestComplete = true
            exchange.bodyConsumerBehind = false
            state = .active(exchange)
            if exchange.response == .ended { return finishExchange(exchange) }
            return .pauseReading
        }

        /// The peer sent end of stream.
        /// - Parameter pendingWriteBytes: Response bytes still queued: a peer that half-closed still reads them
        ///   (RFC 9112 §9.6), so they go out before the connection closes.
        package mutating func readEOF(pendingWriteBytes: Int = 0) -> Action {
            switch state {
            case .idle where pendingWriteBytes > 0:
                trailingSendStall = nil
                peerEnded = true
                state = .closing
                return .finishWritesAndClose
            case .closing where trailingSendStall != nil:
                peerEnded = true
                return .none
            case .readingHead where pendingWriteBytes > 0:
                peerEnded = true
                state = .closing
                return .finishWritesAndClose
            case .awaitingFirstRequest, .idle, .readingHead, .closing:
                state = .closed
                return .abortConnection
            case .active(var exchange):
                exchange.keepAlive = false
                if exchange.requestComplete {
                    // The peer may half-close after its request and still read the response (RFC 9112 §9.6).
                    state = .active(exchange)
                    return .none
                }
                if exchange.response == .ended {
                    peerEnded = true
                    state = pendingWriteBytes > 0 ? .closing : .closed
                    return pendingWriteBytes > 0 ? .finishWritesAndClose : .abortConnection
                }
                exchange.readClosed = true
                state = .active(exchange)
                return .failRequestBody
            case .closed:
                return .none
            }
        }

        /// The parser refused the input; `status` is the answer the fault calls for.
        package mutating func parseErrorOccurred(status: HTTPStatus) -> Action {
            switch state {
            case .awaitingFirstRequest, .idle, .readingHead:
                state = .closing
                return .writeErrorResponseAndClose(status)
            case .active(let exchange):
                if exchange.response == .pending {
                    state = .closing
                    return .failBodyAndWriteErrorResponseAndClose(status)
                }
                // Part of a response is out: no error response can follow it on this connection.
                state = .closed
                return .abortConnection
            case .closing, .closed:
                return .none
            }
        }

        // MARK: Timers

        /// The idle timer fired.
        package mutating func idleTimeoutFired() -> Action {
            guard case .idle = state else { return .none }
            state = .closed
            return .abortConnection
        }

        /// The header timer fired: the client took too long to send its head (slowloris), or sent nothing at all
        /// since the accept.
        package mutating func headerTimeoutFired() -> Action {
            switch state {
            case .awaitingFirstRequest:
                // No request, so nothing to answer: the connection closes as an idle one does.
                state = .closed
                return .abortConnection
            case .readingHead:
                state = .closing
                // RFC 9110 §15.5.9: 408 tells the client the server closes instead of waiting.
                return .writeErrorResponseAndClose(HTTPStatus(code: 408))
            case .idle, .active, .closing, .closed:
                return .none
            }
        }

        /// The body-read timer fired: the peer sent no body bytes for the whole timeout while the server read.
        package mutating func bodyReadTimeoutFired() -> Action {
            guard case .active(let exchange) = state, exchange.awaitsBodyBytes, exchange.sendStall == nil else {
                return .none
            }
            state = .closing
            // RFC 9110 §15.5.9: 408 while the client still can be told; after a response head only closing can.
            return .bodyReadTimedOut(exchange.response == .pending ? HTTPStatus(code: 408) : nil)
        }

        /// The send timer fired while queued bytes wait to go out.
        /// - Parameter drainedWriteBytes: The stream's drained-byte count now. More than at the last check means the
        ///   peer reads, however slowly, and the wait goes on for another timeout; the same means it read nothing.
        package mutating func sendTimeoutFired(drainedWriteBytes: UInt64) -> Action {
            if state == .idle || state == .closing, let previous = trailingSendStall {
                // A response whose exchange ended is still going out: progress keeps the connection, a stall ends it.
                guard drainedWriteBytes > previous else {
                    trailingSendStall = nil
                    state = .closed
                    return .sendTimedOut
                }
                trailingSendStall = drainedWriteBytes
                return .armSendTimer
            }
            guard case .active(var exchange) = state, let previous = exchange.sendStall else { return .none }
            guard drainedWriteBytes > previous else {
                state = .closed
                return .sendTimedOut
            }
            exchange.sendStall = drainedWriteBytes
            state = .active(exchange)
            return .armSendTimer
        }

        /// The linger timer fired while closing: stop waiting for the peer's end of stream.
        package mutating func lingerTimeoutFired() -> Action {
            guard case .closing = state else { return .none }
            state = .closed
            return .abortConnection
        }

        // MARK: Responding

        /// The handler started reading the request body.
        package mutating func bodyReadStarted() -> Action {
            guard case .active(var exchange) = state, exchange.expectsContinue, !exchange.continueSent,
                exchange.response == .pending, !exchange.requestComplete
            else { return .none }
            exchange.continueSent = true
            state = .active(exchange)
            return .sendContinue
        }

        /// The response head is about to be written.
        /// - Parameter allowsKeepAlive: False when the response itself rules out another request: it ends with the
        ///   connection (no length, not chunked), or its head asks for `Connection: close`.
        /// - Returns: Whether the connection stays open after this response; when false, the head must say
        ///   `Connection: close`.
        ///   It is also false when there is no response to start (the connection closed meanwhile): the shell's
        ///   writes are then dropped by the closed stream.
        package mutating func responseHeadSent(allowsKeepAlive: Bool) -> Bool {
            guard case .active(var exchange) = state, exchange.response == .pending else { return false }
            exchange.response = .headSent
            if !allowsKeepAlive || isShuttingDown { exchange.keepAlive = false }
            if exchange.expectsContinue && !exchange.continueSent && !exchange.requestComplete {
                // A final response before 100: the client may or may not send the body now (RFC 9110 §10.1.1),
                // so the connection's framing is unknowable after this response.
                exchange.keepAlive = false
            }
            state = .active(exchange)
            return exchange.keepAlive
        }

        /// The response's last byte was queued.
        ///
        /// Queuing can fail and close the stream underneath (a reset arriving as the response is written), so the
        /// connection may be closed by the time a response ends: the response is then dropped quietly.
        package mutating func responseEnded() -> Action {
            guard case .active(var exchange) = state, exchange.response == .headSent else {
                switch state {
                case .closing, .closed: return .none
                case .awaitingFirstRequest, .idle, .readingHead, .active: return abortUnlessClosed()
                }
            }
            exchange.response = .ended
            if exchange.requestComplete { return finishExchange(exchange) }
            if !exchange.keepAlive {
                state = .closing
                return .closeConnection
            }
            // Read and drop the rest rather than close: the client may still be sending it, and a close with
            // unread bytes resets the connection, which can destroy the response before the client reads it.
            exchange.discardingBody = true
            exchange.bodyConsumerBehind = false
            state = .active(exchange)
            return .discardRequestBody
        }

        /// A writer of the exchange started waiting for queued bytes to drain; `drainedWriteBytes` is the stream's
        /// drained-byte count now, the baseline of the progress check.
        package mutating func writerBlocked(drainedWriteBytes: UInt64) -> Action {
            // A second writer waiting on the same stall keeps the check already under way.
            guard case .active(var exchange) = state, exchange.sendStall == nil else { return .none }
            exchange.sendStall = drainedWriteBytes
            state = .active(exchange)
            return .armSendTimer
        }

        /// The exchange ended and the connection stays, with `pendingWriteBytes` of the response still queued: the
        /// send timer bounds the peer's reading of it (by progress, as during the exchange), and the idle timer
        /// starts once it is all out, so a slow but steady reader of a large response is not cut off as idle.
        /// Reading stays paused meanwhile (`isReadingEnabled`), so a peer that does not read cannot start exchanges
        /// that would re-arm the timer.
        package mutating func enteredIdle(pendingWriteBytes: Int, drainedWriteBytes: UInt64) -> Action {
            guard case .idle = state else { return .none }
            guard pendingWriteBytes > 0 else {
                trailingSendStall = nil
                return .armIdleTimer
            }
            trailingSendStall = drainedWriteBytes
            return .armSendTimer
        }

        /// The connection started closing (end of stream queued after the response) with `pendingWriteBytes` still
        /// to go out: the send timer bounds them by progress, and the linger timer starts once they are out, so a
        /// slow but steady reader of a `Connection: close` response gets all of it.
        package mutating func enteredClosing(pendingWriteBytes: Int, drainedWriteBytes: UInt64) -> Action {
            guard case .closing = state else { return .none }
            guard pendingWriteBytes > 0 else {
                trailingSendStall = nil
                guard !peerEnded else {
                    state = .closed
                    return .abortConnection
                }
                return .armLingerTimer
            }
            trailingSendStall = drainedWriteBytes
            return .armSendTimer
        }

        /// Every queued byte went out: writers resume, and the body-read timer takes the slot back if it applies.
        package mutating func writesDrained() -> Action {
            if case .idle = state, trailingSendStall != nil {
                trailingSendStall = nil
                return .resumeAfterDrain
            }
            if case .closing = state, trailingSendStall != nil {
                trailingSendStall = nil
                guard !peerEnded else {
                    state = .closed
                    return .abortConnection
                }
                return .armLingerTimer
            }
            guard case .active(var exchange) = state, exchange.sendStall != nil else { return .none }
            exchange.sendStall = nil
            state = .active(exchange)
            return bodyBytesAwaited()
        }

        /// The handler failed after part of its response was written: the framing is broken.
        package mutating func responseAborted() -> Action {
            guard state != .closed else { return .none }
            state = .closed
            return .abortConnection
        }

        // MARK: Lifecycle

        /// The server is shutting down: idle connections close now, busy ones after their current response.
        /// - Parameter pendingWriteBytes: Response bytes still queued: an idle connection finishes sending them
        ///   (bounded by the send timer) before it closes.
        package mutating func shutdownRequested(pendingWriteBytes: Int = 0) -> Action {
            isShuttingDown = true
            switch state {
            case .idle where pendingWriteBytes > 0:
                trailingSendStall = nil
                state = .closing
                return .finishWritesAndClose
            case .awaitingFirstRequest, .idle:
                state = .closed
                return .abortConnection
            case .active(var exchange):
                exchange.keepAlive = false
                state = .active(exchange)
                return .none
            case .readingHead, .closing, .closed:
                // A head under way is answered, with `Connection: close`; the header timer bounds it.
                return .none
            }
        }

        /// The stream closed underneath (reset, write error, loop shutdown).
        package mutating func streamClosed() -> Action {
            guard state != .closed else { return .none }
            state = .closed
            return .abortConnection
        }

        /// An event that fits no state the peer could have led to: the connection cannot be trusted to be framed
        /// right any more, so it closes, alone.
        private mutating func abortUnlessClosed() -> Action {
            guard state != .closed else { return .none }
            state = .closed
            return .abortConnection
        }

        private mutating func finishExchange(_ exchange: Exchange) -> Action {
            if exchange.keepAlive && !isShuttingDown {
                state = .idle
                return .prepareForNextRequest
            }
            state = .closing
            return .closeConnection
        }
    }
}
