import FuzzSupport
@testable import Wire

/// libFuzzer entry: drives `HTTP1ClientConnectionStateMachine` the way its connection does — requests started when
/// the machine accepts them, response bytes through a real response parser, end of stream, timeouts, cancellations
/// and abandoned bodies in any order — and checks that it never traps and never lets a connection be reused after
/// anything but a clean, complete, keep-alive exchange.
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
    struct Request {
        var keepAlive: Bool
        var written = false
        var headDelivered = false
        var responseKeepAlive = true
    }

    var script: EventScript
    var checker: InvariantChecker
    var machine = Machine()
    var parser = HTTP1Parser(kind: .response)
    var parserFailed = false
    var requests: [Request] = []
    var finished = 0
    var started = 0

    init(input: [UInt8]) {
        script = EventScript(input)
        checker = InvariantChecker(input: input)
    }

    mutating func play() {
        var steps = 0
        while !script.isAtEnd && steps < 512 {
            steps += 1
            switch script.choice(11) {
            case 0, 1:
                guard machine.acceptsRequest else { continue }
                let keepAlive = script.choice(4) != 0
                let method: HTTPMethod = [.get, .head, .post, .get][script.choice(4)]
                checker.note("start(\(method), keepAlive: \(keepAlive))")
                machine.requestStarted(keepAlive: keepAlive)
                parser.expectResponse(to: method)
                requests.append(Request(keepAlive: keepAlive))
                started += 1
            case 2:
                checker.note("written")
                _ = machine.requestWritten()
                if !requests.isEmpty { requests[requests.count - 1].written = true }
            case 3, 4, 5:
                let bytes = script.take(Int(script.byte() % 64) + 1)
                receive(bytes)
            case 6:
                checker.note("endOfStream")
                if !parserFailed, let event = try? parser.finish(), case .end = event, !requests.isEmpty {
                    apply(machine.responseEnded(trailingBytes: false), event: "end at EOF")
                }
                apply(machine.endOfStream(), event: "endOfStream")
            case 7:
                apply(machine.failed(.protocolOrIOError), event: "timeout")
            case 8:
                apply(machine.failed(.abandoned), event: "abandoned")
            case 9:
                apply(machine.failed(.upgraded), event: "upgraded")
            default:
                // A 2xx to CONNECT hands the stream over: allowed only with a head delivered to the oldest request.
                checker.note("tunnelOpened")
                let eligible = !machine.isClosed && requests.first?.headDelivered == true
                let opened = machine.tunnelOpened()
                checker.check(opened == eligible, "tunnelOpened answered \(opened) with \(requests.first.map { "\($0)" } ?? "none") in flight")
                if opened {
                    checker.check(machine.isClosed && !machine.acceptsRequest, "an opened tunnel left HTTP open")
                    finished += requests.count
                    requests.removeAll()
                }
            }
            checkState()
        }
    }

    /// Bytes from the server: the machine hears of them, then the parser's events follow.
    mutating func receive(_ bytes: [UInt8]) {
        guard !machine.isClosed else { return }
        checker.note("bytes(\(bytes.count))")
        if machine.bytesReceived() == .closeIdle {
            checker.check(requests.isEmpty, "bytes closed a connection with requests in flight")
            checker.check(machine.isClosed, "closeIdle left the connection open")
            return
        }
        var rest = bytes[...]
        while !rest.isEmpty && !machine.isClosed && !requests.isEmpty {
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
                if head.isInterim { continue }
                let action = machine.responseHeadReceived(keepAlive: head.isKeepAlive)
                checker.note("head(keepAlive: \(head.isKeepAlive))")
                if action == .deliverHead {
                    checker.check(!requests.isEmpty && !requests[0].headDelivered, "a head delivered twice or to no request")
                    requests[0].headDelivered = true
                    requests[0].responseKeepAlive = head.isKeepAlive
                } else {
                    apply(action, event: "head out of step")
                }
            case .body?:
                continue
            case .end?:
                apply(machine.responseEnded(trailingBytes: !rest.isEmpty), event: "end(trailing: \(!rest.isEmpty))")
            case .upgraded?:
                apply(machine.failed(.upgraded), event: "upgraded")
            case .requestHead?:
                checker.check(false, "a response parser produced a request head")
            }
        }
    }

    /// Applies an action to the run's model and checks what it may and may not say.
    mutating func apply(_ action: Machine.Action, event: String) {
        checker.note(event)
        switch action {
        case .none, .deliverHead:
            break
        case .completeRequest(let reusable):
            checker.check(!requests.isEmpty, "a request completed with none in flight")
            guard !requests.isEmpty else { return }
            let oldest = requests.removeFirst()
            finished += 1
            if reusable {
                checker.check(oldest.keepAlive && oldest.written && oldest.responseKeepAlive && oldest.headDelivered,
                              "a connection was pooled after an exchange that was not clean: \(oldest)")
            } else {
                checker.check(machine.isClosed, "an unreusable exchange left the connection open")
                finished += requests.count
                requests.removeAll()
            }
        case .failRequestAndClose(_, let responseStarted):
            checker.check(!requests.isEmpty, "a request failed with none in flight")
            checker.check(machine.isClosed, "a failure left the connection open")
            if let oldest = requests.first {
                checker.check(responseStarted == oldest.headDelivered, "responseStarted \(responseStarted) for \(oldest)")
            }
            finished += requests.count
            requests.removeAll()
        case .closeIdle:
            checker.check(requests.isEmpty, "closeIdle with \(requests.count) requests in flight")
            checker.check(machine.isClosed, "closeIdle left the connection open")
        }
    }

    func checkState() {
        checker.check(machine.inFlightCount == requests.count || machine.isClosed,
                      "the machine counts \(machine.inFlightCount) in flight, the run \(requests.count)")
        checker.check(!machine.isClosed || !machine.acceptsRequest, "a closed connection accepts requests")
        checker.check(started == finished + requests.count, "requests lost: \(started) started, \(finished) finished, \(requests.count) in flight")
    }
}

/// The executable's entry (see `runLibFuzzer`).
@_cdecl("FuzzClientConnection_main")
public func fuzzClientConnectionMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc: argc, argv: argv) { data, size in fuzzClientConnection(data, size) }
}
