import Testing
import Wire

/// CONNECT in the client connection's state machine: a 2xx hands the stream over as a tunnel, once; any other
/// answer is framed and pooled like every response. No sockets.
struct HTTP1ClientConnectionStateMachineTunnelTests {
    typealias Machine = HTTP1ClientConnectionStateMachine

    static let t0 = Deadline(uptimeNanoseconds: 1_000_000_000)

    /// A machine with a CONNECT (request 0) written and awaiting its answer.
    static func connecting() -> Machine {
        var machine = Machine()
        _ = machine.requestStarted(id: 0, keepAlive: true, isConnect: true, readTimeout: .seconds(10), now: t0)
        machine.requestWritten(0)
        _ = machine.bytesReceived(now: t0)
        return machine
    }

    @Test(arguments: [200, 204, 299])
    func aSuccessfulAnswerHandsTheStreamOverOnce(code: Int) {
        var machine = Self.connecting()
        #expect(machine.responseHeadReceived(status: HTTPStatus(code: code), keepAlive: true) == .holdHeadForTunnel)
        // Held, not delivered: no new request may join while the switch is pending.
        #expect(!machine.isClosed)
        #expect(machine.upgradeReceived() == .openTunnel(requestWritten: true, pipelined: 0))
        #expect(machine.isHandedOver && machine.isClosed && !machine.isBusy && !machine.acceptsRequest)
        #expect(machine.completedRequests == 1)
        // Nothing the stream does afterwards concerns HTTP any more, and there is never a second hand-over.
        #expect(machine.upgradeReceived() == .none)
        #expect(machine.endOfStream() == .none)
        #expect(machine.failed(.protocolOrIOError) == .none)
        #expect(machine.bytesReceived(now: Self.t0) == .none)
        #expect(machine.readTimerFired(now: Self.t0 + .seconds(60)) == .none)
    }

    @Test(arguments: [407, 403, 502])
    func anyOtherAnswerIsAResponseLikeEveryOther(code: Int) {
        var machine = Self.connecting()
        #expect(
            machine.responseHeadReceived(status: HTTPStatus(code: code), keepAlive: true) == .deliverHead(refusingBody: false))
        #expect(
            machine.responseEnded(trailingBytes: false, now: Self.t0) == .completeRequest(armReadTimer: nil, resumeReading: false)
        )
        #expect(!machine.isHandedOver && machine.acceptsRequest)
    }

    @Test func aSuccessfulAnswerToAnythingButCONNECTOpensNoTunnel() {
        var machine = Machine()
        _ = machine.requestStarted(id: 0, keepAlive: true, readTimeout: .seconds(10), now: Self.t0)
        #expect(machine.responseHeadReceived(status: HTTPStatus(code: 200), keepAlive: true) == .deliverHead(refusingBody: false))
        #expect(machine.upgradeReceived() == .failRequestAndClose(.upgraded, responseStarted: true, pipelined: 0))
        #expect(!machine.isHandedOver)
    }

    @Test func requestsQueuedBehindTheTunnelFailAsNeverAnswered() {
        var machine = Self.connecting()
        _ = machine.requestStarted(id: 1, keepAlive: true, readTimeout: .seconds(10), now: Self.t0)
        machine.requestWritten(1)
        _ = machine.responseHeadReceived(status: HTTPStatus(code: 200), keepAlive: true)
        #expect(machine.upgradeReceived() == .openTunnel(requestWritten: true, pipelined: 1))
    }

    @Test func aTunnelOpenedBeforeTheRequestBodyWentOutSaysSo() {
        var machine = Machine()
        _ = machine.requestStarted(id: 0, keepAlive: true, isConnect: true, readTimeout: .seconds(10), now: Self.t0)
        _ = machine.responseHeadReceived(status: HTTPStatus(code: 200), keepAlive: true)
        #expect(machine.upgradeReceived() == .openTunnel(requestWritten: false, pipelined: 0))
    }

    @Test func anythingButTheSwitchAfterAHeldHeadFailsTheRequestBeforeItsResponse() {
        // The held head was never delivered, so the request's response head is what fails.
        var ended = Self.connecting()
        _ = ended.responseHeadReceived(status: HTTPStatus(code: 200), keepAlive: true)
        #expect(ended.endOfStream() == .failRequestAndClose(.protocolOrIOError, responseStarted: false, pipelined: 0))
        var framed = Self.connecting()
        _ = framed.responseHeadReceived(status: HTTPStatus(code: 200), keepAlive: true)
        #expect(
            framed.responseEnded(trailingBytes: false, now: Self.t0)
                == .failRequestAndClose(.protocolOrIOError, responseStarted: false, pipelined: 0))
        #expect(!framed.isHandedOver)
    }

    @Test func anAbandonedCONNECTOpensNoTunnel() {
        var machine = Machine()
        _ = machine.requestStarted(id: 0, keepAlive: true, readTimeout: .seconds(10), now: Self.t0)
        machine.requestWritten(0)
        _ = machine.requestStarted(id: 1, keepAlive: true, isConnect: true, readTimeout: .seconds(10), now: Self.t0)
        machine.requestWritten(1)
        #expect(machine.requestAbandoned(1) == .failAbandonedRequest)
        _ = machine.responseHeadReceived(status: HTTPStatus(code: 200), keepAlive: true)
        _ = machine.responseEnded(trailingBytes: true, now: Self.t0)
        #expect(machine.responseHeadReceived(status: HTTPStatus(code: 200), keepAlive: true) == .discardResponse)
        #expect(machine.upgradeReceived() == .failRequestAndClose(.upgraded, responseStarted: true, pipelined: 0))
        #expect(!machine.isHandedOver)
    }
}
