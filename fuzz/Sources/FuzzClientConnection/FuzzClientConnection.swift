import FuzzSupport
@testable import Wire

/// libFuzzer entry: drives `HTTP1ClientConnectionStateMachine` the way its connection does — requests (GET, HEAD,
/// POST, CONNECT, some with `Expect: 100-continue`) started when the machine accepts them, response bytes through a
/// real response parser, end of stream, I/O errors, the read timer and the `100 Continue` timers with the time
/// passed in, waits for `100 Continue`, abandoned requests and bodies, a body consumer falling behind — in any order,
/// and checks the machine's decisions against a model kept from its actions.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzClientConnection(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    var run = ClientConnectionRun(input: input)
    run.play()
    return 0
}

struct ClientConnectionRun {
    typealias Machine = HTTP1ClientConnectionStateMachine
    /// What the run knows of each request in flight, oldest first.
    struct Request: CustomStringConvertible {
        var id: Int
        var keepAlive: Bool
        var isConnect: Bool
        var readTimeout: Duration
        var written = false
        /// A final head was parsed for it (delivered, dropped or held).
        var headParsed = false
        /// Its head was handed to it (`deliverHead`).
        var headDelivered = false
        /// A 2xx to its CONNECT is held.
        var tunnelHeld = false
        var responseKeepAlive = true
        /// Abandoned while queued: already failed, its response dropped.
        var discarded = false
        /// Its task asked to wait for `100 Continue` (once: a task asks before it sends its body).
        var askedContinue = false
        /// Its task waits for `100 Continue` (a timer armed).
        var awaitingContinue = false
        /// Its task was told not to send the body.
        var bodyRefused = false

        var description: String {
            "#\(id)(keepAlive: \(keepAlive), connect: \(isConnect), written: \(written), head: \(headParsed)/\(headDelivered), "
                + "held: \(tunnelHeld), discarded: \(discarded), continue: \(awaitingContinue), refused: \(bodyRefused))"
        }
    }

    var script: EventScript
    var checker: InvariantChecker
    var machine = Machine()
    var parser = HTTP1Parser(kind: .response)
    var parserFailed = false
    var requests: [Request] = []
    var nextID = 0
    var finished = 0
    var started = 0
    /// The clock, moved only by the script.
    var now = Deadline(uptimeNanoseconds: 1_000_000_000)
    /// When the bytes last came (the machine's own record of activity is never earlier).
    var lastBytes = Deadline(uptimeNanoseconds: 1_000_000_000)
    /// The read timer as the machine's actions left it.
    var readTimer: Deadline?
    /// `100 Continue` timers armed, by request.
    var continueTimers: [Int] = []
    /// Reading paused for a body consumer behind.
    var paused = false
    var tunnelsOpened = 0
    /// Whether the connection was ever closed (terminal).
    var closed = false

    init(input: [UInt8]) {
        script = EventScript(input)
        checker = InvariantChecker(input: input)
    }

    mutating func play() {
        var steps = 0
        while !script.isAtEnd && steps < 512 {
            steps += 1
            switch script.choice(16) {
            case 0, 1:
                start()
            case 2:
                // The newest request's last byte goes out (only the newest can still be writing), unless its task
                // waits for `100 Continue` or was told to keep its body.
                guard let newest = requests.last, !newest.awaitingContinue, !newest.bodyRefused else { continue }
                checker.note("written #\(newest.id)")
                machine.requestWritten(newest.id)
                requests[requests.count - 1].written = true
            case 3, 4, 5:
                let bytes = script.take(Int(script.byte() % 64) + 1)
                receive(bytes)
            case 6:
                checker.note("endOfStream")
                if !parserFailed, !machine.isClosed, !requests.isEmpty, let event = try? parser.finish(), case .end = event {
                    apply(machine.responseEnded(trailingBytes: false, now: now), event: "end at EOF")
                }
                apply(machine.endOfStream(), event: "endOfStream")
            case 7:
                // The read timer fires when it is due (the shell arms one timer at a time, and cancels it on close).
                guard let due = readTimer, !closed else { continue }
                now = max(now, due)
                readTimer = nil
                let action = machine.readTimerFired(now: now)
                if case .failRequestAndClose(.readTimedOut(let timeout), _, _) = action {
                    checker.check(!paused, "a read timeout while reading was paused for the body's consumer")
                    checker.check(now - lastBytes >= timeout, "a read timeout \(now - lastBytes) after the last bytes, under \(timeout)")
                    checker.check(requests.first?.readTimeout == timeout, "a read timeout not the oldest request's")
                }
                apply(action, event: "readTimerFired")
            case 8:
                now = now + .milliseconds(Int(script.byte()) * 40)
            case 9:
                // A task abandons its request (deadline, cancellation): any in flight, or one already gone.
                let id = pickID()
                apply(machine.requestAbandoned(id), event: "abandon #\(id)", request: id)
            case 10:
                let id = pickID()
                apply(machine.responseBodyAbandoned(id), event: "body abandoned #\(id)", request: id)
            case 11:
                // A task asks once, before it sends its body: a request not yet written (or one that is gone).
                let waiting = requests.filter { !$0.written && !$0.askedContinue }
                let pick = script.choice(waiting.count + 1)
                let id = pick < waiting.count ? waiting[pick].id : nextID + 1
                let timeout = Duration.milliseconds(Int(script.byte()) * 20)
                if let index = requests.firstIndex(where: { $0.id == id }) { requests[index].askedContinue = true }
                apply(machine.continueAwaited(id, timeout: timeout, now: now), event: "continueAwaited #\(id)", request: id)
            case 12:
                guard !continueTimers.isEmpty else { continue }
                let id = continueTimers.remove(at: script.choice(continueTimers.count))
                apply(machine.continueTimeoutFired(request: id), event: "continue timer #\(id)", request: id)
            case 13:
                apply(machine.bodyConsumerFellBehind(), event: "consumer behind")
            case 14:
                let id = pickID()
                apply(machine.bodyConsumerCaughtUp(id), event: "consumer caught up #\(id)", request: id)
            default:
                apply(machine.failed(.protocolOrIOError), event: "I/O error")
            }
            checkState()
        }
    }

    /// A request in flight (mostly), or one that is not.
    mutating func pickID() -> Int {
        let pick = script.choice(requests.count + 1)
        return pick < requests.count ? requests[pick].id : nextID + 1
    }

    mutating func start() {
        let options = script.byte()
        let methodByte = script.byte()
        guard machine.acceptsRequest else { return }
        let keepAlive = options % 4 != 0
        let readTimeout = Duration.milliseconds(200 * (Int(options >> 2) + 1))
        let method: HTTPMethod = [.get, .head, .post, .connect][Int(methodByte % 4)]
        let id = nextID
        nextID += 1
        checker.note("start #\(id) \(method), keepAlive: \(keepAlive)")
        let reuses = machine.reusesConnection
        checker.check(reuses == (finished > 0 || !requests.isEmpty), "reusesConnection \(reuses) with \(finished) finished and \(requests.count) in flight")
        requests.append(Request(id: id, keepAlive: keepAlive, isConnect: method == .connect, readTimeout: readTimeout))
        started += 1
        let action = machine.requestStarted(id: id, keepAlive: keepAlive, isConnect: method == .connect, readTimeout: readTimeout, now: now)
        if requests.count == 1 { lastBytes = max(lastBytes, now) }
        parser.expectResponse(to: method)
        apply(action, event: "started #\(id)")
    }

    /// Bytes from the server: the machine hears of them, then the parser's events follow.
    mutating func receive(_ bytes: [UInt8]) {
        guard !machine.isClosed else { return }
        checker.note("bytes(\(bytes.count))")
        let action = machine.bytesReceived(now: now)
        if action == .closeIdle {
            checker.check(requests.isEmpty, "bytes closed a connection with requests in flight")
            apply(action, event: "unsolicited bytes")
            return
        }
        checker.check(action == .none, "bytes answered \(action)")
        lastBytes = now
        var rest = bytes[...]
        while !machine.isClosed && !requests.isEmpty {
            if parserFailed {
                apply(machine.failed(.protocolOrIOError), event: "parse error (still)")
                return
            }
            let step: HTTP1ParseStep
            do {
                let chunk = Array(rest)
                step = try parser.parse(chunk.span)
            } catch {
                parserFailed = true
                apply(machine.failed(.protocolOrIOError), event: "parse error \(error.kind)")
                return
            }
            rest = rest.dropFirst(step.consumed)
            switch step.event {
            case nil:
                if step.consumed == 0 { return }
            case .responseHead(let head)?:
                if head.isInterim {
                    let oldest = requests[0]
                    let action = machine.interimResponseReceived(status: head.status)
                    if case .answerContinue = action {
                        checker.check(head.status.code == 100 && oldest.awaitingContinue, "\(head.status.code) answered \(oldest)")
                    }
                    apply(action, event: "interim \(head.status.code)", request: oldest.id)
                    continue
                }
                requests[0].headParsed = true
                let action = machine.responseHeadReceived(status: head.status, keepAlive: head.isKeepAlive)
                checker.note("head \(head.status.code) keepAlive: \(head.isKeepAlive)")
                requests[0].responseKeepAlive = head.isKeepAlive
                apply(action, event: "head", request: requests[0].id, status: head.status)
            case .body?:
                continue
            case .end?:
                apply(machine.responseEnded(trailingBytes: !rest.isEmpty, now: now), event: "end(trailing: \(!rest.isEmpty))")
            case .upgraded?:
                apply(machine.upgradeReceived(), event: "upgraded")
                return
            case .requestHead?:
                checker.check(false, "a response parser produced a request head")
            }
        }
    }

    /// Applies an action to the run's model and checks what it may and may not say. `request` names the request the
    /// event was about, for the actions that answer one.
    mutating func apply(_ action: Machine.Action, event: String, request: Int? = nil, status: HTTPStatus? = nil) {
        checker.note("\(event) → \(action)")
        if closed {
            // Closed (or handed over) is terminal: nothing more is done to the connection. Only a task that asks
            // whether to send its body still gets an answer, and it is no.
            checker.check(action == .none || action == .answerContinue(sendBody: false), "\(action) after the connection closed")
            return
        }
        switch action {
        case .none:
            break
        case .deliverHead(let refusingBody):
            checker.check(!requests.isEmpty && request == requests[0].id, "a head delivered to \(request.map { "#\($0)" } ?? "none")")
            guard !requests.isEmpty else { return }
            let oldest = requests[0]
            checker.check(!oldest.discarded && !oldest.headDelivered, "a head delivered to \(oldest)")
            checker.check(!(oldest.isConnect && status?.responseClass == .successful), "a 2xx to CONNECT delivered as a response")
            checker.check(refusingBody == oldest.awaitingContinue, "refusingBody \(refusingBody) for \(oldest)")
            requests[0].headDelivered = true
            if refusingBody {
                requests[0].awaitingContinue = false
                requests[0].bodyRefused = true
            }
        case .discardResponse:
            checker.check(requests.first?.discarded == true && request == requests[0].id, "a response dropped for \(String(describing: requests.first))")
        case .holdHeadForTunnel:
            guard let oldest = requests.first else { return checker.check(false, "a head held with no request") }
            checker.check(oldest.isConnect && !oldest.discarded && status?.responseClass == .successful, "a head held for \(oldest)")
            requests[0].tunnelHeld = true
        case .openTunnel(let requestWritten, let pipelined):
            tunnelsOpened += 1
            checker.check(tunnelsOpened == 1, "a second hand-over")
            checker.check(machine.isHandedOver && machine.isClosed && !machine.acceptsRequest, "an opened tunnel left HTTP open")
            guard let oldest = requests.first else { return checker.check(false, "a tunnel opened with no request") }
            checker.check(oldest.tunnelHeld, "a tunnel opened for \(oldest), whose 2xx was not held")
            checker.check(requestWritten == oldest.written, "requestWritten \(requestWritten) for \(oldest)")
            checker.check(pipelined == requests.count - 1, "\(pipelined) pipelined of \(requests.count)")
            close()
        case .answerContinue(let sendBody):
            guard let id = request, let index = requests.firstIndex(where: { $0.id == id }) else {
                // A request that is gone: never a go-ahead.
                return checker.check(!sendBody, "a go-ahead for a request not in flight")
            }
            let target = requests[index]
            if sendBody {
                // The body never follows a final answer the task was given, nor one it was told to skip. (A request
                // abandoned while its task waited still gets the go-ahead at the 100 or the timeout: its body keeps
                // the request stream framed, so the connection survives, and RFC 9110 §10.1.1 allows a body after a
                // final answer.)
                checker.check(!target.headDelivered && !target.bodyRefused, "a go-ahead after the final response: \(target)")
            } else {
                checker.check(target.headParsed || target.discarded, "the body refused before any final answer: \(target)")
                requests[index].bodyRefused = true
            }
            requests[index].awaitingContinue = false
        case .armContinueTimer(let deadline):
            guard let id = request, let index = requests.firstIndex(where: { $0.id == id }) else {
                return checker.check(false, "a continue timer for a request not in flight")
            }
            checker.check(!requests[index].discarded && !requests[index].headDelivered, "a continue wait for \(requests[index])")
            checker.check(deadline >= now, "a continue timer in the past")
            requests[index].awaitingContinue = true
            continueTimers.append(id)
        case .armReadTimer(let deadline):
            checker.check(!requests.isEmpty, "a read timer with no request in flight")
            checker.check(deadline > now, "a read timer armed at \(deadline), not after now (\(now))")
            readTimer = deadline
        case .pauseReading:
            checker.check(!paused && !requests.isEmpty, "a pause while paused or idle")
            paused = true
        case .resumeReading:
            checker.check(paused, "a resume while reading")
            checker.check(request == requests.first?.id, "a resume by another body's consumer")
            paused = false
        case .failAbandonedRequest:
            guard let id = request, let index = requests.firstIndex(where: { $0.id == id }) else {
                return checker.check(false, "a request failed that is not in flight")
            }
            checker.check(index > 0 && !requests[index].discarded, "abandonment of \(requests[index]) at \(index) failed it alone")
            requests[index].discarded = true
        case .completeRequest(let timer, let resumeReading):
            checker.check(!requests.isEmpty, "a request completed with none in flight")
            guard !requests.isEmpty else { return }
            let oldest = requests.removeFirst()
            finished += 1
            checker.check(oldest.keepAlive && oldest.written && oldest.responseKeepAlive && (oldest.headDelivered || oldest.discarded),
                          "a connection was pooled after an exchange that was not clean: \(oldest)")
            checker.check(!oldest.tunnelHeld, "a held CONNECT answer completed as a response")
            checker.check(resumeReading == paused, "resumeReading \(resumeReading) while paused: \(paused)")
            paused = false
            if let timer {
                checker.check(!requests.isEmpty && timer > now, "a read timer for no request, or in the past")
                readTimer = timer
            }
            // The next request's wait starts now (the machine's record of activity moves with it).
            if !requests.isEmpty { lastBytes = max(lastBytes, now) }
        case .completeRequestAndClose(let requestWritten, let pipelined):
            guard let oldest = requests.first else { return checker.check(false, "a request completed with none in flight") }
            checker.check(oldest.headDelivered || oldest.discarded, "a request completed without its head: \(oldest)")
            checker.check(requestWritten == oldest.written, "requestWritten \(requestWritten) for \(oldest)")
            checker.check(pipelined == requests.count - 1, "\(pipelined) pipelined of \(requests.count)")
            close()
        case .failRequestAndClose(_, let responseStarted, let pipelined):
            guard let oldest = requests.first else { return checker.check(false, "a request failed with none in flight") }
            checker.check(responseStarted == (oldest.headParsed && !oldest.tunnelHeld), "responseStarted \(responseStarted) for \(oldest)")
            checker.check(pipelined == requests.count - 1, "\(pipelined) pipelined of \(requests.count)")
            close()
        case .closeIdle:
            checker.check(requests.isEmpty, "closeIdle with \(requests.count) requests in flight")
            close()
        }
    }

    /// The connection is gone: every request in flight is answered, failed or handed its tunnel.
    mutating func close() {
        checker.check(machine.isClosed && !machine.isBusy && !machine.acceptsRequest, "a close left the connection open")
        closed = true
        finished += requests.count
        requests.removeAll()
        readTimer = nil
    }

    func checkState() {
        checker.check(machine.isClosed == closed, "the machine says closed: \(machine.isClosed), the run \(closed)")
        checker.check(machine.inFlightCount == requests.count, "the machine counts \(machine.inFlightCount) in flight, the run \(requests.count)")
        checker.check(!machine.isClosed || !machine.acceptsRequest, "a closed connection accepts requests")
        checker.check(machine.isHandedOver == (tunnelsOpened == 1), "handed over: \(machine.isHandedOver) after \(tunnelsOpened) tunnels")
        checker.check(started == finished + requests.count, "requests lost: \(started) started, \(finished) finished, \(requests.count) in flight")
        // Nothing joins a request that is still writing, that ends the connection, or that waits for 100.
        if machine.acceptsRequest {
            checker.check(requests.allSatisfy { $0.written && $0.keepAlive && !$0.awaitingContinue }, "a request may join \(requests)")
        }
        // While a request is in flight and the connection open, a read timer runs.
        if !closed && !requests.isEmpty {
            checker.check(readTimer != nil, "no read timer with \(requests.count) requests in flight")
        }
    }
}

/// The executable's entry (see `runLibFuzzer`).
@_cdecl("FuzzClientConnection_main")
public func fuzzClientConnectionMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc: argc, argv: argv) { data, size in fuzzClientConnection(data, size) }
}
