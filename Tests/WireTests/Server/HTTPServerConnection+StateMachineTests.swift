import Testing
import Wire

/// Event → action tables for the server connection's state machine; no sockets, no clock.
struct HTTPServerConnectionStateMachineTests {
    typealias Machine = HTTPServerConnection.StateMachine

    /// A machine with a request under way.
    private func active(keepAlive: Bool = true, expectsContinue: Bool = false) -> Machine {
        var machine = Machine()
        #expect(machine.requestHeadReceived(keepAlive: keepAlive, expectsContinue: expectsContinue) == .startHandler)
        return machine
    }

    /// A kept-alive connection between requests: one exchange done, waiting for the next.
    private func idleMachine() -> Machine {
        var machine = Machine()
        _ = machine.requestHeadReceived(keepAlive: true, expectsContinue: false)
        _ = machine.requestEndReceived()
        _ = machine.responseHeadSent(allowsKeepAlive: true)
        #expect(machine.responseEnded() == .prepareForNextRequest)
        #expect(machine.state == .idle)
        return machine
    }

    @Test func aNewConnectionGetsTheHeaderTimeoutNotTheIdleOne() {
        var machine = Machine()
        #expect(machine.state == .awaitingFirstRequest)
        #expect(machine.isReadingEnabled && machine.isParsing)
        #expect(machine.connectionOpened() == .scheduleHeaderTimer)
        #expect(machine.idleTimeoutFired() == .none)
        // Nothing was asked, so nothing is answered: the connection closes as an idle one does.
        #expect(machine.headerTimeoutFired() == .abortConnection)
        #expect(machine.state == .closed)
    }

    @Test func theFirstHeadIsDueFromTheAcceptNotFromItsFirstByte() {
        var machine = Machine()
        _ = machine.connectionOpened()
        // The timer armed at the accept keeps running: a first byte does not re-arm it.
        #expect(machine.partialHeadReceived() == .none)
        #expect(machine.state == .readingHead)
        #expect(machine.headerTimeoutFired() == .writeErrorResponseAndClose(HTTPStatus(code: 408)))
        // A head that comes in time starts the exchange, and the header timer is stale then.
        var inTime = Machine()
        _ = inTime.connectionOpened()
        #expect(inTime.requestHeadReceived(keepAlive: true, expectsContinue: false) == .startHandler)
        #expect(inTime.headerTimeoutFired() == .none)
    }

    @Test func betweenKeptAliveRequestsTheIdleTimerStays() {
        var machine = idleMachine()
        #expect(machine.connectionOpened() == .none)
        #expect(machine.headerTimeoutFired() == .none)
        #expect(machine.idleTimeoutFired() == .abortConnection)
        var next = idleMachine()
        #expect(next.partialHeadReceived() == .scheduleHeaderTimer)
    }

    @Test func aNewConnectionEndsLikeAnIdleOne() {
        var eof = Machine()
        #expect(eof.readEOF() == .abortConnection)
        var shutdown = Machine()
        #expect(shutdown.shutdownRequested() == .abortConnection)
        var malformed = Machine()
        #expect(malformed.parseErrorOccurred(status: .badRequest) == .writeErrorResponseAndClose(.badRequest))
        var unasked = Machine()
        #expect(unasked.responseEnded() == .abortConnection)
    }

    @Test func keepAliveExchangeReturnsToIdle() {
        var machine = active()
        #expect(machine.requestEndReceived() == .pauseReading)
        #expect(!machine.isReadingEnabled)
        #expect(!machine.isParsing)
        #expect(machine.responseHeadSent(allowsKeepAlive: true) == true)
        #expect(machine.responseEnded() == .prepareForNextRequest)
        #expect(machine.state == .idle)
        #expect(machine.isParsing)
    }

    @Test func responseBeforeRequestEndWaitsForTheEnd() {
        var machine = active()
        #expect(machine.responseHeadSent(allowsKeepAlive: true) == true)
        #expect(machine.responseEnded() == .discardRequestBody)
        #expect(machine.isParsing)
        #expect(machine.requestEndReceived() == .prepareForNextRequest)
    }

    @Test func responseEndingAfterTheStreamClosedIsDroppedQuietly() {
        // A write that fails (the peer reset) closes the stream before the response's end is noted.
        var machine = active()
        #expect(machine.responseHeadSent(allowsKeepAlive: true) == true)
        #expect(machine.streamClosed() == .abortConnection)
        #expect(machine.responseEnded() == .none)
        #expect(machine.state == .closed)
        // A head after the close is no response to start: the head must say close, and nothing changes.
        #expect(machine.responseHeadSent(allowsKeepAlive: true) == false)
        #expect(machine.requestHeadReceived(keepAlive: true, expectsContinue: false) == .none)
        #expect(machine.requestEndReceived() == .none)
        #expect(machine.state == .closed)
    }

    @Test func eventsOutOfOrderCloseOnlyThisConnection() {
        var machine = active()
        #expect(machine.requestHeadReceived(keepAlive: true, expectsContinue: false) == .abortConnection)
        #expect(machine.state == .closed)

        var ended = idleMachine()
        #expect(ended.requestEndReceived() == .abortConnection)
        var idle = idleMachine()
        #expect(idle.responseEnded() == .abortConnection)
        var twice = active()
        #expect(twice.requestEndReceived() == .pauseReading)
        #expect(twice.requestEndReceived() == .abortConnection)
    }

    @Test func connectionCloseRequestClosesAfterResponse() {
        var machine = active(keepAlive: false)
        #expect(machine.requestEndReceived() == .pauseReading)
        #expect(machine.responseHeadSent(allowsKeepAlive: true) == false)
        #expect(machine.responseEnded() == .closeConnection)
        #expect(machine.state == .closing)
    }

    @Test func unframedResponseCannotKeepTheConnection() {
        var machine = active()
        _ = machine.requestEndReceived()
        #expect(machine.responseHeadSent(allowsKeepAlive: false) == false)
        #expect(machine.responseEnded() == .closeConnection)
    }

    @Test func partialHeadArmsTheHeaderTimerOnce() {
        var machine = idleMachine()
        #expect(machine.partialHeadReceived() == .scheduleHeaderTimer)
        #expect(machine.partialHeadReceived() == .none)
        #expect(machine.state == .readingHead)
        #expect(machine.idleTimeoutFired() == .none)
        #expect(machine.headerTimeoutFired() == .writeErrorResponseAndClose(HTTPStatus(code: 408)))
        #expect(machine.state == .closing)
        #expect(machine.lingerTimeoutFired() == .abortConnection)
        #expect(machine.state == .closed)
    }

    @Test func headerTimeoutIsStaleOnceTheHeadArrived() {
        var machine = idleMachine()
        _ = machine.partialHeadReceived()
        #expect(machine.requestHeadReceived(keepAlive: true, expectsContinue: false) == .startHandler)
        #expect(machine.headerTimeoutFired() == .none)
    }

    @Test func idleTimeoutClosesAnIdleConnectionOnly() {
        var idle = idleMachine()
        #expect(idle.idleTimeoutFired() == .abortConnection)
        var busy = active()
        #expect(busy.idleTimeoutFired() == .none)
    }

    @Test(arguments: [
        (HTTP1ParseError.Kind.requestLineTooLong, 414),
        (.headerSectionTooLarge, 431),
        (.tooManyHeaders, 431),
        (.bodyTooLarge, 413),
        (.unsupportedTransferCoding, 501),
        (.unsupportedVersion, 505),
        (.invalidMethod, 400),
        (.bareLF, 400),
        (.transferEncodingWithContentLength, 400),
        (.userinfoInTarget, 400),
        (.obsoleteLineFolding, 400),
    ])
    func parseErrorStatus(kind: HTTP1ParseError.Kind, code: Int) {
        #expect(HTTPServerConnection.status(for: HTTP1ParseError(kind, at: 0)).code == code)
    }

    @Test func parseErrorBeforeResponseAnswersAndCloses() {
        var idle = idleMachine()
        #expect(idle.parseErrorOccurred(status: .badRequest) == .writeErrorResponseAndClose(.badRequest))
        var reading = active()
        #expect(
            reading.parseErrorOccurred(status: .contentTooLarge)
                == .failBodyAndWriteErrorResponseAndClose(.contentTooLarge))
        #expect(reading.state == .closing)
    }

    @Test func parseErrorAfterResponseStartedAborts() {
        var machine = active()
        _ = machine.responseHeadSent(allowsKeepAlive: true)
        #expect(machine.parseErrorOccurred(status: .badRequest) == .abortConnection)
        #expect(machine.state == .closed)
    }

    @Test func continueIsSentOnceWhenTheBodyIsRead() {
        var machine = active(expectsContinue: true)
        #expect(machine.bodyReadStarted() == .sendContinue)
        #expect(machine.bodyReadStarted() == .none)
        var plain = active()
        #expect(plain.bodyReadStarted() == .none)
    }

    @Test func finalResponseBeforeContinueClosesTheConnection() {
        var machine = active(expectsContinue: true)
        #expect(machine.responseHeadSent(allowsKeepAlive: true) == false)
        #expect(machine.bodyReadStarted() == .none)
        #expect(machine.responseEnded() == .closeConnection)
    }

    @Test func backPressurePausesAndResumes() {
        var machine = active()
        #expect(machine.bodyConsumerFellBehind() == .pauseReading)
        #expect(machine.bodyConsumerFellBehind() == .none)
        #expect(!machine.isReadingEnabled)
        #expect(machine.bodyConsumerCaughtUp() == .resumeReading)
        #expect(machine.isReadingEnabled)
    }

    @Test func readEOFDuringBodyFailsItAndClosesAfterTheResponse() {
        var machine = active()
        #expect(machine.readEOF() == .failRequestBody)
        // The body failed and no end will come: the response still goes out, then the connection closes.
        #expect(machine.responseHeadSent(allowsKeepAlive: true) == false)
        #expect(machine.responseEnded() == .closeConnection)
    }

    @Test func readEOFAfterCompleteRequestLetsTheResponseFinish() {
        var machine = active()
        _ = machine.requestEndReceived()
        #expect(machine.readEOF() == .none)
        #expect(machine.responseHeadSent(allowsKeepAlive: true) == false)
        #expect(machine.responseEnded() == .closeConnection)
    }

    @Test func readEOFWhileIdleOrClosingCloses() {
        var idle = idleMachine()
        #expect(idle.readEOF() == .abortConnection)
        var closing = idleMachine()
        _ = closing.parseErrorOccurred(status: .badRequest)
        #expect(closing.readEOF() == .abortConnection)
    }

    @Test func shutdownClosesIdleAndDrainsBusy() {
        var idle = idleMachine()
        #expect(idle.shutdownRequested() == .abortConnection)
        var busy = active()
        #expect(busy.shutdownRequested() == .none)
        _ = busy.requestEndReceived()
        #expect(busy.responseHeadSent(allowsKeepAlive: true) == false)
        #expect(busy.responseEnded() == .closeConnection)
    }

    @Test func requestAfterShutdownIsNotKeptAlive() {
        var machine = idleMachine()
        _ = machine.partialHeadReceived()
        #expect(machine.shutdownRequested() == .none)
        _ = machine.requestHeadReceived(keepAlive: true, expectsContinue: false)
        _ = machine.requestEndReceived()
        #expect(machine.responseHeadSent(allowsKeepAlive: true) == false)
    }

    @Test func abortedResponseCloses() {
        var machine = active()
        _ = machine.responseHeadSent(allowsKeepAlive: true)
        #expect(machine.responseAborted() == .abortConnection)
        #expect(machine.responseAborted() == .none)
        #expect(machine.streamClosed() == .none)
    }

    // MARK: Body-read and send timers

    @Test func bodyReadTimerMovesWithEveryReadWhileTheBodyIsDue() {
        var machine = active()
        #expect(machine.bodyBytesAwaited() == .armBodyReadTimer)
        #expect(machine.bodyBytesAwaited() == .armBodyReadTimer)
        _ = machine.requestEndReceived()
        #expect(machine.bodyBytesAwaited() == .none)
        #expect(machine.bodyReadTimeoutFired() == .none)
        var idle = idleMachine()
        #expect(idle.bodyBytesAwaited() == .none)
        #expect(idle.bodyReadTimeoutFired() == .none)
    }

    @Test func bodyReadTimeoutBeforeTheResponseAnswers408() {
        var machine = active()
        #expect(machine.bodyReadTimeoutFired() == .bodyReadTimedOut(HTTPStatus(code: 408)))
        #expect(machine.state == .closing)
        #expect(machine.bodyReadTimeoutFired() == .none)
    }

    @Test func bodyReadTimeoutAfterTheResponseHeadOnlyCloses() {
        var started = active()
        _ = started.responseHeadSent(allowsKeepAlive: true)
        #expect(started.bodyReadTimeoutFired() == .bodyReadTimedOut(nil))
        #expect(started.state == .closing)
        // The response ended and the rest of the body is read to be dropped: still the peer's stall.
        var discarding = active()
        _ = discarding.responseHeadSent(allowsKeepAlive: true)
        #expect(discarding.responseEnded() == .discardRequestBody)
        #expect(discarding.bodyBytesAwaited() == .armBodyReadTimer)
        #expect(discarding.bodyReadTimeoutFired() == .bodyReadTimedOut(nil))
    }

    @Test func aConsumerBehindStopsTheBodyClockUntilItCatchesUp() {
        var machine = active()
        #expect(machine.bodyConsumerFellBehind() == .pauseReading)
        #expect(machine.bodyBytesAwaited() == .none)
        // A timer armed before the pause is stale: the stall is the handler's.
        #expect(machine.bodyReadTimeoutFired() == .none)
        #expect(machine.state != .closing)
        #expect(machine.bodyConsumerCaughtUp() == .resumeReading)
        #expect(machine.bodyBytesAwaited() == .armBodyReadTimer)
    }

    @Test func noBodyClockBeforeContinueIsSent() {
        var machine = active(expectsContinue: true)
        #expect(machine.bodyBytesAwaited() == .none)
        #expect(machine.bodyReadTimeoutFired() == .none)
        #expect(machine.bodyReadStarted() == .sendContinue)
        #expect(machine.bodyBytesAwaited() == .armBodyReadTimer)
    }

    @Test func noBodyClockAfterThePeerClosed() {
        var machine = active()
        #expect(machine.readEOF() == .failRequestBody)
        #expect(machine.bodyBytesAwaited() == .none)
        #expect(machine.bodyReadTimeoutFired() == .none)
    }

    @Test func sendTimerReArmsOnProgressAndTimesOutWithout() {
        var machine = active()
        _ = machine.requestEndReceived()
        _ = machine.responseHeadSent(allowsKeepAlive: true)
        #expect(machine.writerBlocked(drainedWriteBytes: 0) == .armSendTimer)
        // A second waiter keeps the check under way.
        #expect(machine.writerBlocked(drainedWriteBytes: 100) == .none)
        #expect(machine.sendTimeoutFired(drainedWriteBytes: 400) == .armSendTimer)
        #expect(machine.sendTimeoutFired(drainedWriteBytes: 400) == .sendTimedOut)
        #expect(machine.state == .closed)
        #expect(machine.sendTimeoutFired(drainedWriteBytes: 400) == .none)
    }

    @Test func drainedWritesMakeTheSendTimerStale() {
        var machine = active()
        _ = machine.requestEndReceived()
        _ = machine.responseHeadSent(allowsKeepAlive: true)
        #expect(machine.writerBlocked(drainedWriteBytes: 0) == .armSendTimer)
        #expect(machine.writesDrained() == .none)
        #expect(machine.writesDrained() == .none)
        #expect(machine.sendTimeoutFired(drainedWriteBytes: 1000) == .none)
        // The next stall is measured from its own start.
        #expect(machine.writerBlocked(drainedWriteBytes: 1000) == .armSendTimer)
        #expect(machine.sendTimeoutFired(drainedWriteBytes: 2000) == .armSendTimer)
        var idle = idleMachine()
        #expect(idle.writerBlocked(drainedWriteBytes: 0) == .none)
        #expect(idle.sendTimeoutFired(drainedWriteBytes: 0) == .none)
    }

    @Test func aSendStallHoldsTheSlotAndTheBodyClockReturnsAfterTheDrain() {
        // A handler echoing its body: it writes while body bytes are still due.
        var machine = active()
        _ = machine.responseHeadSent(allowsKeepAlive: true)
        #expect(machine.bodyBytesAwaited() == .armBodyReadTimer)
        #expect(machine.writerBlocked(drainedWriteBytes: 0) == .armSendTimer)
        // Reads while the writer waits leave the send timer in the slot.
        #expect(machine.bodyBytesAwaited() == .none)
        #expect(machine.bodyReadTimeoutFired() == .none)
        #expect(machine.writesDrained() == .armBodyReadTimer)
        #expect(machine.bodyReadTimeoutFired() == .bodyReadTimedOut(nil))
    }

    @Test func theLastResponseStillGoingOutIsBoundedBySendProgressThenIdles() {
        var machine = active()
        _ = machine.requestEndReceived()
        _ = machine.responseHeadSent(allowsKeepAlive: true)
        #expect(machine.responseEnded() == .prepareForNextRequest)
        // All written: the idle timer at once, as before.
        #expect(machine.enteredIdle(pendingWriteBytes: 0, drainedWriteBytes: 0) == .armIdleTimer)
        // Still queued: the send timer, re-armed while the peer reads, the idle timer once it is all out.
        #expect(machine.enteredIdle(pendingWriteBytes: 8000, drainedWriteBytes: 0) == .armSendTimer)
        #expect(machine.sendTimeoutFired(drainedWriteBytes: 3000) == .armSendTimer)
        #expect(machine.writesDrained() == .resumeAfterDrain)
        #expect(machine.sendTimeoutFired(drainedWriteBytes: 8000) == .none)
        #expect(machine.idleTimeoutFired() == .abortConnection)
    }

    @Test func aPeerThatStopsReadingTheLastResponseIsCut() {
        var machine = idleMachine()
        #expect(machine.enteredIdle(pendingWriteBytes: 8000, drainedWriteBytes: 0) == .armSendTimer)
        #expect(machine.sendTimeoutFired(drainedWriteBytes: 0) == .sendTimedOut)
        #expect(machine.state == .closed)
        // A next request starting meanwhile takes the connection out of idle and the stale check with it.
        var next = idleMachine()
        #expect(next.enteredIdle(pendingWriteBytes: 8000, drainedWriteBytes: 0) == .armSendTimer)
        #expect(next.partialHeadReceived() == .scheduleHeaderTimer)
        #expect(next.sendTimeoutFired(drainedWriteBytes: 0) == .none)
        #expect(next.writesDrained() == .none)
    }

    @Test func closingWithQueuedBytesIsBoundedBySendProgressThenLinger() {
        var machine = active()
        _ = machine.requestEndReceived()
        _ = machine.responseHeadSent(allowsKeepAlive: false)
        _ = machine.responseEnded()
        #expect(machine.enteredClosing(pendingWriteBytes: 9000, drainedWriteBytes: 0) == .armSendTimer)
        #expect(machine.sendTimeoutFired(drainedWriteBytes: 5000) == .armSendTimer)
        #expect(machine.writesDrained() == .armLingerTimer)
        #expect(machine.lingerTimeoutFired() == .abortConnection)

        var stalled = active()
        _ = stalled.requestEndReceived()
        _ = stalled.responseHeadSent(allowsKeepAlive: false)
        _ = stalled.responseEnded()
        #expect(stalled.enteredClosing(pendingWriteBytes: 9000, drainedWriteBytes: 0) == .armSendTimer)
        #expect(stalled.sendTimeoutFired(drainedWriteBytes: 0) == .sendTimedOut)
        #expect(stalled.state == .closed)
    }

    @Test func aHalfCloseWhileTheLastResponseGoesOutClosesOnceItIsOut() {
        // The peer's end of stream while idle with bytes queued: send them, then close without lingering.
        var machine = idleMachine()
        #expect(machine.enteredIdle(pendingWriteBytes: 5000, drainedWriteBytes: 0) == .armSendTimer)
        #expect(machine.readEOF(pendingWriteBytes: 5000) == .finishWritesAndClose)
        #expect(machine.state == .closing)
        #expect(machine.enteredClosing(pendingWriteBytes: 5000, drainedWriteBytes: 0) == .armSendTimer)
        #expect(machine.writesDrained() == .abortConnection)
        // While closing with bytes queued, the peer's end of stream waits for them.
        var closing = active()
        _ = closing.requestEndReceived()
        _ = closing.responseHeadSent(allowsKeepAlive: false)
        _ = closing.responseEnded()
        #expect(closing.enteredClosing(pendingWriteBytes: 5000, drainedWriteBytes: 0) == .armSendTimer)
        #expect(closing.readEOF(pendingWriteBytes: 3000) == .none)
        #expect(closing.writesDrained() == .abortConnection)
        // With nothing queued, the end of stream closes at once, as before.
        var idle = idleMachine()
        #expect(idle.readEOF(pendingWriteBytes: 0) == .abortConnection)
    }

    @Test func shutdownLetsAnIdleConnectionFinishItsLastResponse() {
        var machine = idleMachine()
        #expect(machine.shutdownRequested(pendingWriteBytes: 100) == .finishWritesAndClose)
        #expect(machine.state == .closing)
        var empty = idleMachine()
        #expect(empty.shutdownRequested(pendingWriteBytes: 0) == .abortConnection)
    }

    @Test func aResponseStillGoingOutHoldsTheNextRequestBack() {
        var machine = idleMachine()
        #expect(machine.enteredIdle(pendingWriteBytes: 5000, drainedWriteBytes: 100) == .armSendTimer)
        #expect(!machine.isReadingEnabled && !machine.isParsing)
        // Progress is the drained count growing, however much more is queued meanwhile.
        #expect(machine.sendTimeoutFired(drainedWriteBytes: 101) == .armSendTimer)
        #expect(machine.writesDrained() == .resumeAfterDrain)
        #expect(machine.isReadingEnabled && machine.isParsing)
    }
}
