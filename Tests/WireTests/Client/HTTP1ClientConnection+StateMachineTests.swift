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
}
