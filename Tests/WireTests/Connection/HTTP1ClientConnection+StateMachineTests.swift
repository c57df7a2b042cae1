import Testing
import Wire

/// Event → action tables for the client connection's state machine; no sockets, and the time passed in.
struct HTTP1ClientConnectionStateMachineTests {
    typealias Machine = HTTP1ClientConnectionStateMachine

    static let t0 = Deadline(uptimeNanoseconds: 1_000_000_000)
    static let ok = HTTPStatus(code: 200)

    /// Starts request `id` at `t0` with a 10 s read timeout, and writes it whole unless `written` is false.
    static func start(_ machine: inout Machine, _ id: Int, keepAlive: Bool = true, written: Bool = true) {
        _ = machine.requestStarted(id: id, keepAlive: keepAlive, readTimeout: .seconds(10), now: t0)
        if written { machine.requestWritten(id) }
    }

    @Test func cleanKeepAliveExchangeIsReusable() {
        var machine = Machine()
        #expect(
            machine.requestStarted(id: 0, keepAlive: true, readTimeout: .seconds(10), now: Self.t0)
                == .armReadTimer(at: Self.t0 + .seconds(10)))
        machine.requestWritten(0)
        #expect(machine.bytesReceived(now: Self.t0) == .none)
        #expect(machine.responseHeadReceived(status: Self.ok, keepAlive: true) == .deliverHead(refusingBody: false))
        #expect(
            machine.responseEnded(trailingBytes: false, now: Self.t0) == .completeRequest(armReadTimer: nil, resumeReading: false)
        )
        #expect(!machine.isBusy && !machine.isClosed)
        #expect(machine.completedRequests == 1 && machine.reusesConnection)
    }

    @Test func eventsOutOfStepCloseTheConnectionInsteadOfTrapping() {
        var idle = Machine()
        #expect(idle.responseHeadReceived(status: Self.ok, keepAlive: true) == .closeIdle)
        #expect(idle.isClosed)

        var ended = Machine()
        Self.start(&ended, 0)
        #expect(
            ended.responseEnded(trailingBytes: false, now: Self.t0)
                == .failRequestAndClose(.protocolOrIOError, responseStarted: false, pipelined: 0))

        var twice = Machine()
        Self.start(&twice, 0, written: false)
        #expect(twice.responseHeadReceived(status: Self.ok, keepAlive: true) == .deliverHead(refusingBody: false))
        #expect(
            twice.responseHeadReceived(status: Self.ok, keepAlive: true)
                == .failRequestAndClose(.protocolOrIOError, responseStarted: true, pipelined: 0))
        #expect(twice.responseEnded(trailingBytes: false, now: Self.t0) == .none)
    }

    @Test(arguments: [
        (requestKeepAlive: false, responseKeepAlive: true, written: true, trailing: false),
        (requestKeepAlive: true, responseKeepAlive: false, written: true, trailing: false),
        (requestKeepAlive: true, responseKeepAlive: true, written: false, trailing: false),
        (requestKeepAlive: true, responseKeepAlive: true, written: true, trailing: true),
    ])
    func anyAnomalyMakesTheConnectionUnreusable(requestKeepAlive: Bool, responseKeepAlive: Bool, written: Bool, trailing: Bool) {
        var machine = Machine()
        Self.start(&machine, 0, keepAlive: requestKeepAlive, written: written)
        _ = machine.responseHeadReceived(status: Self.ok, keepAlive: responseKeepAlive)
        #expect(
            machine.responseEnded(trailingBytes: trailing, now: Self.t0)
                == .completeRequestAndClose(requestWritten: written, pipelined: 0))
        #expect(machine.isClosed)
    }

    @Test func endOfStreamBeforeAnyResponseByteIsRetryable() {
        var machine = Machine()
        Self.start(&machine, 0)
        #expect(machine.endOfStream() == .failRequestAndClose(.closedBeforeResponse, responseStarted: false, pipelined: 0))
    }

    @Test func endOfStreamInsideTheHeadOrBodyIsNot() {
        var inHead = Machine()
        Self.start(&inHead, 0)
        _ = inHead.bytesReceived(now: Self.t0)
        #expect(inHead.endOfStream() == .failRequestAndClose(.closedInHead, responseStarted: false, pipelined: 0))
        var inBody = Machine()
        Self.start(&inBody, 0)
        _ = inBody.bytesReceived(now: Self.t0)
        _ = inBody.responseHeadReceived(status: Self.ok, keepAlive: true)
        #expect(inBody.endOfStream() == .failRequestAndClose(.truncatedBody, responseStarted: true, pipelined: 0))
    }

    @Test func bytesOrEndOfStreamWhileIdleCloseQuietly() {
        var chatty = Machine()
        #expect(chatty.bytesReceived(now: Self.t0) == .closeIdle)
        #expect(chatty.isClosed)
        var closed = Machine()
        #expect(closed.endOfStream() == .closeIdle)
    }

    @Test func aSwitchOfProtocolNobodyAskedForFailsTheRequest() {
        var machine = Machine()
        Self.start(&machine, 0)
        #expect(machine.responseHeadReceived(status: HTTPStatus(code: 101), keepAlive: true) == .deliverHead(refusingBody: false))
        #expect(machine.upgradeReceived() == .failRequestAndClose(.upgraded, responseStarted: true, pipelined: 0))
        #expect(!machine.isHandedOver)
    }

    // MARK: Read timeout

    @Test func theReadTimerFailsTheOldestRequestOnlyAfterAWholeTimeoutOfSilence() {
        var machine = Machine()
        Self.start(&machine, 0)
        // Bytes at t0 + 4 s: the timer armed for t0 + 10 s finds the activity and re-arms for 4 s + 10 s.
        _ = machine.bytesReceived(now: Self.t0 + .seconds(4))
        #expect(machine.readTimerFired(now: Self.t0 + .seconds(10)) == .armReadTimer(at: Self.t0 + .seconds(14)))
        #expect(
            machine.readTimerFired(now: Self.t0 + .seconds(14))
                == .failRequestAndClose(.readTimedOut(.seconds(10)), responseStarted: false, pipelined: 0))
        // With nothing in flight the timer stops.
        var idle = Machine()
        Self.start(&idle, 0)
        _ = idle.responseHeadReceived(status: Self.ok, keepAlive: true)
        _ = idle.responseEnded(trailingBytes: false, now: Self.t0)
        #expect(idle.readTimerFired(now: Self.t0 + .seconds(10)) == .none)
    }

    @Test func aBodyConsumerThatFellBehindIsNotTheServersSilence() {
        var machine = Machine()
        Self.start(&machine, 0)
        _ = machine.responseHeadReceived(status: Self.ok, keepAlive: true)
        #expect(machine.bodyConsumerFellBehind() == .pauseReading)
        #expect(machine.bodyConsumerFellBehind() == .none)
        // Paused, the wait is the consumer's: the timer starts over from now.
        #expect(machine.readTimerFired(now: Self.t0 + .seconds(30)) == .armReadTimer(at: Self.t0 + .seconds(40)))
        // A hop from another response's consumer lifts nothing.
        #expect(machine.bodyConsumerCaughtUp(7) == .none)
        #expect(machine.bodyConsumerCaughtUp(0) == .resumeReading)
        #expect(
            machine.readTimerFired(now: Self.t0 + .seconds(40))
                == .failRequestAndClose(.readTimedOut(.seconds(10)), responseStarted: true, pipelined: 0))
    }

    @Test func aPausedBodyThatEndsLiftsItsPause() {
        var machine = Machine()
        Self.start(&machine, 0)
        _ = machine.responseHeadReceived(status: Self.ok, keepAlive: true)
        _ = machine.bodyConsumerFellBehind()
        #expect(
            machine.responseEnded(trailingBytes: false, now: Self.t0) == .completeRequest(armReadTimer: nil, resumeReading: true))
    }

    @Test func aRequestThatBecomesTheOldestKeepsATimerDueNoLater() {
        var machine = Machine()
        Self.start(&machine, 0)
        _ = machine.responseHeadReceived(status: Self.ok, keepAlive: true)
        _ = machine.responseEnded(trailingBytes: false, now: Self.t0 + .seconds(1))
        // The timer armed for t0 + 10 s still runs: the next request costs no timer work.
        #expect(machine.requestStarted(id: 1, keepAlive: true, readTimeout: .seconds(10), now: Self.t0 + .seconds(2)) == .none)
        // A shorter timeout moves it earlier.
        var short = Machine()
        Self.start(&short, 0)
        _ = short.requestStarted(id: 1, keepAlive: true, readTimeout: .seconds(1), now: Self.t0 + .seconds(1))
        _ = short.responseHeadReceived(status: Self.ok, keepAlive: true)
        #expect(
            short.responseEnded(trailingBytes: true, now: Self.t0 + .seconds(2))
                == .completeRequest(armReadTimer: Self.t0 + .seconds(3), resumeReading: false))
    }

    // MARK: Pipelining

    @Test func pipelinedRequestsAreAnsweredInOrderAndLeaveTheConnectionReusable() {
        var machine = Machine()
        Self.start(&machine, 0)
        #expect(machine.acceptsRequest)
        Self.start(&machine, 1)
        #expect(machine.inFlightCount == 2)
        #expect(machine.responseHeadReceived(status: Self.ok, keepAlive: true) == .deliverHead(refusingBody: false))
        // The second response's bytes in the same read are not an anomaly: they are its answer.
        #expect(
            machine.responseEnded(trailingBytes: true, now: Self.t0) == .completeRequest(armReadTimer: nil, resumeReading: false))
        #expect(machine.inFlightCount == 1)
        #expect(machine.responseHeadReceived(status: Self.ok, keepAlive: true) == .deliverHead(refusingBody: false))
        #expect(
            machine.responseEnded(trailingBytes: false, now: Self.t0) == .completeRequest(armReadTimer: nil, resumeReading: false)
        )
        #expect(!machine.isBusy && !machine.isClosed)
    }

    @Test func nothingJoinsARequestStillWritingOrOneThatEndsTheConnection() {
        var writing = Machine()
        Self.start(&writing, 0, written: false)
        #expect(!writing.acceptsRequest)
        writing.requestWritten(0)
        #expect(writing.acceptsRequest)

        var closing = Machine()
        Self.start(&closing, 0, keepAlive: false)
        #expect(!closing.acceptsRequest)

        var answeredClose = Machine()
        Self.start(&answeredClose, 0)
        _ = answeredClose.responseHeadReceived(status: Self.ok, keepAlive: false)
        #expect(!answeredClose.acceptsRequest)
    }

    @Test func aClosingResponseFailsThePipelinedRequestsBehindIt() {
        var machine = Machine()
        for id in 0..<3 { Self.start(&machine, id) }
        _ = machine.responseHeadReceived(status: Self.ok, keepAlive: false)
        #expect(
            machine.responseEnded(trailingBytes: false, now: Self.t0)
                == .completeRequestAndClose(requestWritten: true, pipelined: 2))
        #expect(machine.isClosed && !machine.isBusy)
        #expect(machine.endOfStream() == .none)
    }

    @Test func aFailureFailsThePipelinedRequestsBehindTheOldest() {
        var machine = Machine()
        for id in 0..<3 { Self.start(&machine, id) }
        _ = machine.bytesReceived(now: Self.t0)
        #expect(
            machine.failed(.protocolOrIOError) == .failRequestAndClose(.protocolOrIOError, responseStarted: false, pipelined: 2))
        #expect(machine.failed(.protocolOrIOError) == .none)
    }

    @Test func endOfStreamBehindAPipelinedResponseFailsTheOldestAsUnanswered() {
        var machine = Machine()
        for id in 0..<2 { Self.start(&machine, id) }
        _ = machine.responseHeadReceived(status: Self.ok, keepAlive: true)
        _ = machine.responseEnded(trailingBytes: false, now: Self.t0)
        #expect(machine.endOfStream() == .failRequestAndClose(.closedBeforeResponse, responseStarted: false, pipelined: 0))
    }

    @Test func aRequestAbandonedBehindTheOldestFailsNowAndItsResponseIsDropped() {
        var machine = Machine()
        for id in 0..<3 { Self.start(&machine, id) }
        #expect(machine.requestAbandoned(1) == .failAbandonedRequest)
        // Failed once: a second abandonment, or one of a request that is gone, does nothing.
        #expect(machine.requestAbandoned(1) == .none)
        #expect(machine.requestAbandoned(9) == .none)
        #expect(machine.responseHeadReceived(status: Self.ok, keepAlive: true) == .deliverHead(refusingBody: false))
        #expect(
            machine.responseEnded(trailingBytes: true, now: Self.t0) == .completeRequest(armReadTimer: nil, resumeReading: false))
        // Its response is read to its end and dropped; the connection and the request behind it survive.
        #expect(machine.responseHeadReceived(status: Self.ok, keepAlive: true) == .discardResponse)
        #expect(machine.responseBodyAbandoned(1) == .none)
        #expect(
            machine.responseEnded(trailingBytes: true, now: Self.t0) == .completeRequest(armReadTimer: nil, resumeReading: false))
        #expect(machine.responseHeadReceived(status: Self.ok, keepAlive: true) == .deliverHead(refusingBody: false))
        #expect(
            machine.responseEnded(trailingBytes: false, now: Self.t0) == .completeRequest(armReadTimer: nil, resumeReading: false)
        )
        #expect(!machine.isClosed && !machine.isBusy)
    }

    @Test func abandoningTheOldestClosesTheConnectionUnderTheOthers() {
        var machine = Machine()
        for id in 0..<2 { Self.start(&machine, id) }
        _ = machine.responseHeadReceived(status: Self.ok, keepAlive: true)
        #expect(machine.requestAbandoned(0) == .failRequestAndClose(.abandoned, responseStarted: true, pipelined: 1))
        var byBody = Machine()
        for id in 0..<2 { Self.start(&byBody, id) }
        // A body's consumer can let go only of a body it was given.
        #expect(byBody.responseBodyAbandoned(0) == .none)
        _ = byBody.responseHeadReceived(status: Self.ok, keepAlive: true)
        #expect(byBody.responseBodyAbandoned(1) == .none)
        #expect(byBody.responseBodyAbandoned(0) == .failRequestAndClose(.abandoned, responseStarted: true, pipelined: 1))
    }
}
