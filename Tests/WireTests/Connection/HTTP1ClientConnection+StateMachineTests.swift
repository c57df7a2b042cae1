import Testing
@testable import Wire

struct HTTP1ClientConnectionStateMachineTests {
    typealias Machine = HTTP1ClientConnectionStateMachine

    @Test func cleanKeepAliveExchangeIsReusable() {
        var machine = Machine()
        machine.requestStarted(keepAlive: true)
        _ = machine.requestWritten()
        #expect(machine.bytesReceived() == .none)
        #expect(machine.responseHeadReceived(keepAlive: true) == .deliverHead)
        #expect(machine.responseEnded(trailingBytes: false) == .completeRequest(reusable: true))
        #expect(!machine.isBusy && !machine.isClosed)
    }

    @Test func eventsOutOfStepCloseTheConnectionInsteadOfTrapping() {
        var idle = Machine()
        #expect(idle.responseHeadReceived(keepAlive: true) == .closeIdle)
        #expect(idle.isClosed)

        var ended = Machine()
        ended.requestStarted(keepAlive: true)
        _ = ended.requestWritten()
        #expect(ended.responseEnded(trailingBytes: false) == .failRequestAndClose(.protocolOrIOError, responseStarted: false))

        var twice = Machine()
        twice.requestStarted(keepAlive: true)
        #expect(twice.responseHeadReceived(keepAlive: true) == .deliverHead)
        #expect(twice.responseHeadReceived(keepAlive: true) == .failRequestAndClose(.protocolOrIOError, responseStarted: true))
        #expect(twice.responseEnded(trailingBytes: false) == .none)
    }

    @Test func anOpenedTunnelEndsTheConnectionsHTTPLife() {
        var machine = Machine()
        machine.requestStarted(keepAlive: true)
        _ = machine.requestWritten()
        #expect(machine.responseHeadReceived(keepAlive: true) == .deliverHead)
        let opened = machine.tunnelOpened()
        #expect(opened)
        #expect(machine.isClosed && !machine.isBusy && !machine.acceptsRequest)
        // Nothing the stream does afterwards concerns HTTP any more.
        #expect(machine.endOfStream() == .none)
        #expect(machine.failed(.protocolOrIOError) == .none)
        // A second opening, or one with nothing under way, is refused rather than trapped.
        let reopened = machine.tunnelOpened()
        var idle = Machine()
        let openedIdle = idle.tunnelOpened()
        #expect(!reopened && !openedIdle)
    }

    @Test(arguments: [
        (requestKeepAlive: false, responseKeepAlive: true, written: true, trailing: false),
        (requestKeepAlive: true, responseKeepAlive: false, written: true, trailing: false),
        (requestKeepAlive: true, responseKeepAlive: true, written: false, trailing: false),
        (requestKeepAlive: true, responseKeepAlive: true, written: true, trailing: true),
    ])
    func anyAnomalyMakesTheConnectionUnreusable(requestKeepAlive: Bool, responseKeepAlive: Bool, written: Bool, trailing: Bool) {
        var machine = Machine()
        machine.requestStarted(keepAlive: requestKeepAlive)
        if written { _ = machine.requestWritten() }
        _ = machine.responseHeadReceived(keepAlive: responseKeepAlive)
        #expect(machine.responseEnded(trailingBytes: trailing) == .completeRequest(reusable: false))
        #expect(machine.isClosed)
    }

    @Test func endOfStreamBeforeAnyResponseByteIsRetryable() {
        var machine = Machine()
        machine.requestStarted(keepAlive: true)
        #expect(machine.endOfStream() == .failRequestAndClose(.closedBeforeResponse, responseStarted: false))
    }

    @Test func endOfStreamInsideTheHeadOrBodyIsNot() {
        var inHead = Machine()
        inHead.requestStarted(keepAlive: true)
        _ = inHead.bytesReceived()
        #expect(inHead.endOfStream() == .failRequestAndClose(.closedInHead, responseStarted: false))
        var inBody = Machine()
        inBody.requestStarted(keepAlive: true)
        _ = inBody.bytesReceived()
        _ = inBody.responseHeadReceived(keepAlive: true)
        #expect(inBody.endOfStream() == .failRequestAndClose(.truncatedBody, responseStarted: true))
    }

    @Test func bytesOrEndOfStreamWhileIdleCloseQuietly() {
        var chatty = Machine()
        #expect(chatty.bytesReceived() == .closeIdle)
        #expect(chatty.isClosed)
        var closed = Machine()
        #expect(closed.endOfStream() == .closeIdle)
    }

    // MARK: Pipelining

    @Test func pipelinedRequestsAreAnsweredInOrderAndLeaveTheConnectionReusable() {
        var machine = Machine()
        machine.requestStarted(keepAlive: true)
        _ = machine.requestWritten()
        #expect(machine.acceptsRequest)
        machine.requestStarted(keepAlive: true)
        _ = machine.requestWritten()
        #expect(machine.inFlightCount == 2)
        #expect(machine.responseHeadReceived(keepAlive: true) == .deliverHead)
        // The second response's bytes in the same read are not an anomaly: they are its answer.
        #expect(machine.responseEnded(trailingBytes: true) == .completeRequest(reusable: true))
        #expect(machine.inFlightCount == 1)
        #expect(machine.responseHeadReceived(keepAlive: true) == .deliverHead)
        #expect(machine.responseEnded(trailingBytes: false) == .completeRequest(reusable: true))
        #expect(!machine.isBusy && !machine.isClosed)
    }

    @Test func nothingJoinsARequestStillWritingOrOneThatEndsTheConnection() {
        var writing = Machine()
        writing.requestStarted(keepAlive: true)
        #expect(!writing.acceptsRequest)
        _ = writing.requestWritten()
        #expect(writing.acceptsRequest)

        var closing = Machine()
        closing.requestStarted(keepAlive: false)
        _ = closing.requestWritten()
        #expect(!closing.acceptsRequest)

        var answeredClose = Machine()
        answeredClose.requestStarted(keepAlive: true)
        _ = answeredClose.requestWritten()
        _ = answeredClose.responseHeadReceived(keepAlive: false)
        #expect(!answeredClose.acceptsRequest)
    }

    @Test func aClosingResponseClosesTheConnectionUnderThePipelinedRequests() {
        var machine = Machine()
        for _ in 0..<3 {
            machine.requestStarted(keepAlive: true)
            _ = machine.requestWritten()
        }
        _ = machine.responseHeadReceived(keepAlive: false)
        #expect(machine.responseEnded(trailingBytes: false) == .completeRequest(reusable: false))
        #expect(machine.isClosed)
        // The two behind it are the shell's to fail; the machine ignores further events.
        #expect(machine.endOfStream() == .none)
    }

    @Test func endOfStreamBehindAPipelinedResponseFailsTheOldestAsUnanswered() {
        var machine = Machine()
        for _ in 0..<2 {
            machine.requestStarted(keepAlive: true)
            _ = machine.requestWritten()
        }
        _ = machine.responseHeadReceived(keepAlive: true)
        _ = machine.responseEnded(trailingBytes: false)
        #expect(machine.endOfStream() == .failRequestAndClose(.closedBeforeResponse, responseStarted: false))
    }
}
