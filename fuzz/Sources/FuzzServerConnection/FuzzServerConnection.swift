import FuzzSupport
@testable import Wire

/// libFuzzer entry: drives `HTTPServerConnection.StateMachine` with an arbitrary sequence of events — request bytes
/// through a real parser, end of stream, resets, each timer, handler writes, aborts, back-pressure and shutdown — in
/// any order, and checks that it never traps and that its invariants hold after every event.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzServerConnection(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    var run = ServerConnectionRun(input: input)
    run.play()
    return 0
}

/// One input's run: the machine, a request parser feeding it, and what the invariants need to remember.
struct ServerConnectionRun {
    typealias Machine = HTTPServerConnection.StateMachine
    var script: EventScript
    var checker: InvariantChecker
    var machine = Machine()
    var parser = HTTP1Parser(kind: .request)
    var parserFailed = false
    var shutDown = false
    /// The stream's drained-byte count as the script moves it: it only grows.
    var drained: UInt64 = 0

    init(input: [UInt8]) {
        script = EventScript(input)
        checker = InvariantChecker(input: input)
    }

    mutating func play() {
        // The accept: the first head is due within the header timeout from here.
        checker.note("connectionOpened")
        checker.check(machine.connectionOpened() == .scheduleHeaderTimer, "a new connection armed no header timer")
        var steps = 0
        while !script.isAtEnd && steps < 512 {
            steps += 1
            let before = machine.state
            let action: Machine.Action
            switch script.choice(26) {
            case 0, 1, 2:
                let bytes = script.take(Int(script.byte() % 48) + 1)
                feed(bytes)
                continue
            case 3:
                let pending = Int(script.byte() % 4)
                checker.note("readEOF(\(pending))")
                action = machine.readEOF(pendingWriteBytes: pending)
            case 4:
                checker.note("idleTimeout")
                action = machine.idleTimeoutFired()
            case 5:
                checker.note("headerTimeout")
                action = machine.headerTimeoutFired()
            case 6:
                checker.note("lingerTimeout")
                action = machine.lingerTimeoutFired()
            case 7:
                checker.note("bodyReadStarted")
                action = machine.bodyReadStarted()
            case 8:
                let allows = script.flag()
                checker.note("responseHeadSent(\(allows))")
                let keepAlive = machine.responseHeadSent(allowsKeepAlive: allows)
                checker.check(!keepAlive || allows, "a response that rules out keep-alive kept the connection")
                checker.check(!keepAlive || !shutDown, "a response after shutdown kept the connection")
                if case .active = before {} else { checker.check(!keepAlive, "a head outside an exchange kept the connection") }
                action = .none
            case 9:
                checker.note("responseEnded")
                action = machine.responseEnded()
            case 10:
                checker.note("responseAborted")
                action = machine.responseAborted()
            case 11:
                checker.note("shutdown")
                shutDown = true
                action = machine.shutdownRequested(pendingWriteBytes: Int(script.byte() % 4))
            case 12:
                checker.note("streamClosed")
                action = machine.streamClosed()
            case 13:
                checker.note("consumerBehind")
                action = machine.bodyConsumerFellBehind()
            case 14:
                checker.note("consumerCaughtUp")
                action = machine.bodyConsumerCaughtUp()
            case 15:
                checker.note("bodyBytesAwaited")
                action = machine.bodyBytesAwaited()
            case 16:
                checker.note("bodyReadTimeout")
                action = machine.bodyReadTimeoutFired()
            case 17:
                drained += UInt64(script.byte() % 3)
                checker.note("sendTimeout(\(drained))")
                action = machine.sendTimeoutFired(drainedWriteBytes: drained)
            case 18:
                checker.note("writerBlocked(\(drained))")
                action = machine.writerBlocked(drainedWriteBytes: drained)
            case 19:
                checker.note("writesDrained")
                action = machine.writesDrained()
            case 20:
                let pending = Int(script.byte() % 4)
                checker.note("enteredIdle(\(pending))")
                action = machine.enteredIdle(pendingWriteBytes: pending, drainedWriteBytes: drained)
            case 21:
                let pending = Int(script.byte() % 4)
                checker.note("enteredClosing(\(pending))")
                action = machine.enteredClosing(pendingWriteBytes: pending, drainedWriteBytes: drained)
            default:
                let code = [400, 408, 413, 431, 501, 505][script.choice(6)]
                checker.note("parseError(\(code))")
                action = machine.parseErrorOccurred(status: HTTPStatus(code: code))
            }
            checkTransition(from: before, action: action)
        }
    }

    /// Feeds `bytes` to the parser while the machine parses, turning the parser's steps into machine events.
    mutating func feed(_ bytes: [UInt8]) {
        var rest = bytes[...]
        while machine.isParsing && !rest.isEmpty {
            let before = machine.state
            let action: Machine.Action
            if parserFailed {
                checker.note("parseError(after failure)")
                action = machine.parseErrorOccurred(status: .badRequest)
                checkTransition(from: before, action: action)
                return
            }
            let step: HTTP1ParseStep
            do {
                let chunk = Array(rest)
                step = try parser.parse(chunk.span)
            } catch {
                parserFailed = true
                checker.note("parseError(\(error.kind))")
                action = machine.parseErrorOccurred(status: HTTPServerConnection.status(for: error))
                checkTransition(from: before, action: action)
                return
            }
            checker.check(step.consumed <= rest.count, "the parser consumed more than it was given")
            rest = rest.dropFirst(step.consumed)
            switch step.event {
            case nil:
                if step.consumed == 0 || rest.isEmpty {
                    if !rest.isEmpty || step.consumed > 0 {
                        checker.note("partialHead")
                        checkTransition(from: before, action: machine.partialHeadReceived())
                    }
                    return
                }
                continue
            case .requestHead(let head)?:
                checker.note("requestHead")
                action = machine.requestHeadReceived(keepAlive: head.isKeepAlive, expectsContinue: false)
                switch before {
                case .awaitingFirstRequest, .idle, .readingHead:
                    checker.check(action == .startHandler, "a head while idle did not start a handler: \(action)")
                default:
                    checker.check(action != .startHandler, "a handler started in state \(before)")
                }
            case .body?:
                continue
            case .end?:
                checker.note("requestEnd")
                if parser.isAwaitingUpgradeDecision { parser.declineUpgrade() }
                action = machine.requestEndReceived()
            case .upgraded?, .responseHead?:
                checker.note("unexpected parser event")
                action = machine.streamClosed()
            }
            checkTransition(from: before, action: action)
        }
    }

    /// The invariants every transition keeps.
    func checkTransition(from before: Machine.State, action: Machine.Action) {
        let after = machine.state
        if before == .closed {
            checker.check(after == .closed, "closed is not terminal: now \(after)")
            checker.check(action == .none, "a closed connection asked for \(action)")
        }
        if after == .closed {
            checker.check(!machine.isReadingEnabled && !machine.isParsing, "a closed connection still reads or parses")
        }
        switch action {
        case .abortConnection, .sendTimedOut:
            checker.check(after == .closed, "\(action) left the connection \(after)")
        case .bodyReadTimedOut, .finishWritesAndClose:
            checker.check(after == .closing, "\(action) left the connection \(after)")
        case .armLingerTimer:
            checker.check(after == .closing, "the linger timer armed in state \(after)")
        case .armIdleTimer, .resumeAfterDrain:
            checker.check(after == .idle, "the idle timer armed in state \(after)")
        case .closeConnection, .writeErrorResponseAndClose, .failBodyAndWriteErrorResponseAndClose:
            checker.check(after == .closing, "a close left the connection \(after)")
        case .prepareForNextRequest:
            checker.check(after == .idle, "the next request is awaited in state \(after)")
            checker.check(!shutDown, "a connection was kept for another request after shutdown")
        case .startHandler:
            checker.check({ if case .active = after { return true } else { return false } }(), "a handler started outside an exchange")
        case .none, .scheduleHeaderTimer, .sendContinue, .pauseReading, .resumeReading, .discardRequestBody, .failRequestBody,
             .armBodyReadTimer, .armSendTimer:
            break
        }
        if case .active(let exchange) = after {
            checker.check(!(exchange.requestComplete && exchange.response == .ended), "a finished exchange was never closed or recycled")
            checker.check(!exchange.continueSent || exchange.expectsContinue, "100 Continue sent unasked")
            if shutDown && exchange.response != .pending { checker.check(!exchange.keepAlive, "keep-alive promised during shutdown") }
        }
        if shutDown { checker.check(after != .idle || before == .idle, "the connection went idle after shutdown") }
    }
}

/// The executable's entry (see `runLibFuzzer`).
@_cdecl("FuzzServerConnection_main")
public func fuzzServerConnectionMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc: argc, argv: argv) { data, size in fuzzServerConnection(data, size) }
}
