import Testing
import Wire

/// `100 Continue` in the client connection's state machine: when the task that sent `Expect: 100-continue` sends its
/// body (at the 100, at its timeout) and when it never does (a final answer came first). No sockets, the time passed in.
struct HTTP1ClientConnectionStateMachineContinueTests {
    typealias Machine = HTTP1ClientConnectionStateMachine

    static let t0 = Deadline(uptimeNanoseconds: 1_000_000_000)
    static let timeout = Duration.seconds(1)

    /// A machine whose request 0 sent its head with `Expect: 100-continue`, its body held back.
    static func expecting() -> Machine {
        var machine = Machine()
        _ = machine.requestStarted(id: 0, keepAlive: true, readTimeout: .seconds(10), now: t0)
        return machine
    }

    @Test func anInterimContinueSendsTheBodyOfTheWaitingTask() {
        var machine = Self.expecting()
        #expect(machine.continueAwaited(0, timeout: Self.timeout, now: Self.t0) == .armContinueTimer(at: Self.t0 + Self.timeout))
        _ = machine.bytesReceived(now: Self.t0)
        #expect(machine.interimResponseReceived(status: HTTPStatus(code: 100)) == .answerContinue(sendBody: true))
        // Answered once: the timer that fires later, and a second 100, change nothing.
        #expect(machine.continueTimeoutFired(request: 0) == .none)
        #expect(machine.interimResponseReceived(status: HTTPStatus(code: 100)) == .none)
        machine.requestWritten(0)
        #expect(machine.responseHeadReceived(status: HTTPStatus(code: 201), keepAlive: true) == .deliverHead(refusingBody: false))
        #expect(
            machine.responseEnded(trailingBytes: false, now: Self.t0) == .completeRequest(armReadTimer: nil, resumeReading: false)
        )
    }

    @Test func aContinueThatCameBeforeTheTaskAskedIsKept() {
        var machine = Self.expecting()
        _ = machine.bytesReceived(now: Self.t0)
        #expect(machine.interimResponseReceived(status: HTTPStatus(code: 100)) == .none)
        #expect(machine.continueAwaited(0, timeout: Self.timeout, now: Self.t0) == .answerContinue(sendBody: true))
    }

    @Test func otherInterimResponsesAreNoGoAhead() {
        var machine = Self.expecting()
        _ = machine.continueAwaited(0, timeout: Self.timeout, now: Self.t0)
        #expect(machine.interimResponseReceived(status: HTTPStatus(code: 103)) == .none)
        #expect(machine.continueTimeoutFired(request: 0) == .answerContinue(sendBody: true))
    }

    @Test func atTheTimeoutTheBodyGoesAnyway() {
        var machine = Self.expecting()
        _ = machine.continueAwaited(0, timeout: Self.timeout, now: Self.t0)
        // RFC 9110 §10.1.1: a client that waited long enough sends the body without the 100.
        #expect(machine.continueTimeoutFired(request: 0) == .answerContinue(sendBody: true))
        #expect(machine.continueTimeoutFired(request: 0) == .none)
        machine.requestWritten(0)
        #expect(machine.responseHeadReceived(status: HTTPStatus(code: 200), keepAlive: true) == .deliverHead(refusingBody: false))
        #expect(
            machine.responseEnded(trailingBytes: false, now: Self.t0) == .completeRequest(armReadTimer: nil, resumeReading: false)
        )
    }

    @Test(arguments: [413, 401, 200])
    func aFinalResponseBeforeTheContinueStopsTheBody(code: Int) {
        var machine = Self.expecting()
        _ = machine.continueAwaited(0, timeout: Self.timeout, now: Self.t0)
        _ = machine.bytesReceived(now: Self.t0)
        #expect(machine.responseHeadReceived(status: HTTPStatus(code: code), keepAlive: true) == .deliverHead(refusingBody: true))
        // The timer finds no one waiting: the body is never sent after the final answer.
        #expect(machine.continueTimeoutFired(request: 0) == .none)
        #expect(machine.continueAwaited(0, timeout: Self.timeout, now: Self.t0) == .answerContinue(sendBody: false))
        // The request stream stays unfinished, so the connection cannot carry another request.
        #expect(!machine.acceptsRequest)
        #expect(
            machine.responseEnded(trailingBytes: false, now: Self.t0)
                == .completeRequestAndClose(requestWritten: false, pipelined: 0))
    }

    @Test func expectationFailedIsAFinalAnswerWhetherTheTaskWaitsOrNot() {
        // 417 while the task waits: it is told not to send the body.
        var waiting = Self.expecting()
        _ = waiting.continueAwaited(0, timeout: Self.timeout, now: Self.t0)
        #expect(waiting.responseHeadReceived(status: HTTPStatus(code: 417), keepAlive: true) == .deliverHead(refusingBody: true))
        #expect(
            waiting.responseEnded(trailingBytes: false, now: Self.t0)
                == .completeRequestAndClose(requestWritten: false, pipelined: 0))
        // 417 before the task got to wait: nothing to refuse yet, and its wait is answered at once with no body.
        var early = Self.expecting()
        #expect(early.responseHeadReceived(status: HTTPStatus(code: 417), keepAlive: true) == .deliverHead(refusingBody: false))
        #expect(early.continueAwaited(0, timeout: Self.timeout, now: Self.t0) == .answerContinue(sendBody: false))
    }

    @Test func aConnectionThatFailsOrARequestThatIsGoneSendsNoBody() {
        var failed = Self.expecting()
        _ = failed.continueAwaited(0, timeout: Self.timeout, now: Self.t0)
        #expect(failed.endOfStream() == .failRequestAndClose(.closedBeforeResponse, responseStarted: false, pipelined: 0))
        #expect(failed.continueTimeoutFired(request: 0) == .none)
        #expect(failed.continueAwaited(0, timeout: Self.timeout, now: Self.t0) == .answerContinue(sendBody: false))
        var unknown = Self.expecting()
        #expect(unknown.continueAwaited(5, timeout: Self.timeout, now: Self.t0) == .answerContinue(sendBody: false))
    }

    @Test func aTimerOfAnEarlierRequestDoesNotAnswerALaterOne() {
        var machine = Machine()
        for id in 0..<2 {
            _ = machine.requestStarted(id: id, keepAlive: true, readTimeout: .seconds(10), now: Self.t0)
            _ = machine.continueAwaited(id, timeout: Self.timeout, now: Self.t0)
            #expect(machine.interimResponseReceived(status: HTTPStatus(code: 100)) == .answerContinue(sendBody: true))
            machine.requestWritten(id)
            _ = machine.responseHeadReceived(status: HTTPStatus(code: 200), keepAlive: true)
            _ = machine.responseEnded(trailingBytes: false, now: Self.t0)
        }
        _ = machine.requestStarted(id: 2, keepAlive: true, readTimeout: .seconds(10), now: Self.t0)
        _ = machine.continueAwaited(2, timeout: Self.timeout, now: Self.t0)
        #expect(machine.continueTimeoutFired(request: 0) == .none)
        #expect(machine.continueTimeoutFired(request: 1) == .none)
        #expect(machine.continueTimeoutFired(request: 2) == .answerContinue(sendBody: true))
    }
}
