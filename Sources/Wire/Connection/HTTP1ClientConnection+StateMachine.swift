/// The request lifecycle of one client connection, as a value type: events in, actions out, no I/O and no clock (the
/// shell passes the time in).
///
/// Framing itself is the parser's job; this machine decides what each framing event means for
/// the requests and the connection: deliver, drop, finish, fail, pool, hand over or close. It decides the
/// pipelined requests' fate (a request abandoned behind the oldest has its response read and dropped; those queued
/// behind a response that ends the connection fail as never answered), `100 Continue` (when the task waiting for it
/// sends its body: at the 100, at its timeout, or never, when a final answer comes first), the hand-over of the
/// stream to a tunnel after a 2xx to CONNECT, and the read timeout of the oldest request.
///
/// Its rule for pooling is strict: a connection goes back to the pool only after a complete, well-framed
/// response to a completely written request on a keep-alive exchange, so the next request can
/// never read a previous response's leftover bytes.
package struct HTTP1ClientConnectionStateMachine {
    /// Names a request on its connection (the shell's `ExchangeID`), for events that come after it started.
    package typealias RequestID = Int

    /// Why a request failed, as far as the connection can tell.
    package enum Failure: Hashable, Sendable {
        /// The peer closed before any response byte: on a reused connection this is the normal
        /// race with the server's idle timeout, and an idempotent request may be retried.
        case closedBeforeResponse
        /// The peer closed inside the response head.
        case closedInHead
        /// The body ended (EOF) before its framing said it would.
        case truncatedBody
        /// The response broke HTTP/1.1 framing, or a write or read failed.
        case protocolOrIOError
        /// The server switched protocols.
        case upgraded
        /// The consumer stopped reading the body.
        case abandoned
        /// The server sent nothing for the oldest request's read timeout (while its body's reader kept up).
        case readTimedOut(Duration)
    }

    /// What the shell must do.
    package enum Action: Hashable, Sendable {
        /// Nothing.
        case none
        /// Hand the oldest request its response head, with a body channel. When `refusingBody`, its task waits for
        /// `100 Continue`: tell it not to send its body (a final answer came first, RFC 9110 §10.1.1); the request
        /// then stays unfinished and the connection is not reused.
        case deliverHead(refusingBody: Bool)
        /// The oldest request was abandoned while it was queued behind another: its response is read and dropped.
        case discardResponse
        /// A 2xx answered the oldest request, a CONNECT: hold the head until the parser confirms the switch
        /// (`upgradeReceived`), so that the head and the tunnel are handed over together.
        case holdHeadForTunnel
        /// The held 2xx to CONNECT is confirmed: the stream, with the bytes after the head, becomes the oldest
        /// request's tunnel and this connection never touches it again. Stop the read timer, tell the pool the
        /// connection is gone, wake a task parked on the request's upload (failed unless `requestWritten`) or on
        /// `100 Continue` (no body), and fail the `pipelined` requests behind it as never answered.
        case openTunnel(requestWritten: Bool, pipelined: Int)
        /// Answer the task that waits for `100 Continue`: send the body now (a 100 came, or the wait timed out), or not.
        case answerContinue(sendBody: Bool)
        /// The task waits for `100 Continue`: park it, and call `continueTimeoutFired(request:)` at this deadline.
        case armContinueTimer(at: Deadline)
        /// Arm the read timer for this deadline (cancelling one that runs); it calls `readTimerFired(now:)`.
        case armReadTimer(at: Deadline)
        /// Stop reading from the stream: the body's consumer fell behind.
        case pauseReading
        /// Read from the stream again.
        case resumeReading
        /// A request queued behind the oldest was abandoned: fail it now with the abandoning error; its response,
        /// when it comes, is read and dropped (`discardResponse`), so the connection and its neighbours survive.
        case failAbandonedRequest
        /// The oldest request's response is complete and the connection stays: finish its body and release the
        /// connection as reusable. The next request, if one is queued, now owns the response: arm the read timer at
        /// `armReadTimer` when it is not nil. `resumeReading`: the pause the finished body asked for ends with it.
        case completeRequest(armReadTimer: Deadline?, resumeReading: Bool)
        /// The oldest request's response is complete and the connection closes: finish its body, wake a task
        /// parked on its upload (failed unless `requestWritten`: an early answer such as 413 or 401), close, and
        /// fail the `pipelined` requests behind it as never answered.
        case completeRequestAndClose(requestWritten: Bool, pipelined: Int)
        /// Fail the oldest request (its body when `responseStarted`, else its response head) and close the
        /// connection; fail the `pipelined` requests behind it as never answered.
        case failRequestAndClose(Failure, responseStarted: Bool, pipelined: Int)
        /// Close without a request to fail (the peer closed or misbehaved while idle).
        case closeIdle
    }

    /// Where the task of a request that sent `Expect: 100-continue` stands.
    private enum ContinueWait: Hashable {
        /// No task waits, and no 100 came.
        case notAsked
        /// A task waits for the go-ahead; a timer bounds the wait.
        case waiting
        /// `100 Continue` came (before or while the task waited): the body goes.
        case received
    }

    /// One request in flight, oldest first.
    private struct InFlight: Hashable {
        let id: RequestID
        /// False when the request carries `Connection: close`.
        let keepAlive: Bool
        /// A CONNECT: a 2xx answer opens a tunnel.
        let isConnect: Bool
        /// How long the server may stay silent while this request's response is awaited.
        let readTimeout: Duration
        /// Whether its last byte has been handed to the stream.
        var fullyWritten = false
        /// Abandoned while queued behind another: its response is read and dropped.
        var discarded = false
        var continueWait = ContinueWait.notAsked
    }

    /// Where the oldest request's response stands.
    private enum Phase: Hashable {
        /// Its response head has not been parsed yet.
        case awaitingHead(sawResponseBytes: Bool)
        /// Its response head was delivered (or is being dropped); body bytes flow.
        case receivingBody(keepAlive: Bool)
        /// A 2xx to its CONNECT was parsed and held; the parser's switch comes next.
        case awaitingTunnel
    }

    /// Where the connection as a whole stands.
    private enum Lifecycle: Hashable {
        case open
        /// Terminal.
        case closed
        /// Terminal: the stream belongs to a tunnel.
        case handedOver
    }

    /// Requests in flight, oldest first: the first one owns the response being parsed. More than
    /// one only when requests are pipelined.
    private var inFlight: [InFlight] = []
    private var phase = Phase.awaitingHead(sawResponseBytes: false)
    private var lifecycle = Lifecycle.open
    /// When the peer last sent bytes, or the oldest request became the one awaiting them.
    private var lastActivity = Deadline(uptimeNanoseconds: 0)
    /// When the armed read timer fires; nil when none is armed.
    private var readTimerDue: Deadline?
    /// The body's consumer fell behind and reading is paused: a stall that is not the server's.
    private var bodyPaused = false
    /// Requests answered on this connection (completed, or turned into a tunnel).
    package private(set) var completedRequests = 0

    package init() {}

    /// Whether the connection is done with HTTP: closed, or handed over to a tunnel.
    package var isClosed: Bool { lifecycle != .open }

    /// Whether the stream was handed over to a tunnel: it is no longer this connection's to close.
    package var isHandedOver: Bool { lifecycle == .handedOver }

    /// Whether a request is in flight.
    package var isBusy: Bool { !inFlight.isEmpty }

    /// The number of requests in flight.
    package var inFlightCount: Int { inFlight.count }

    /// Whether a request started now reuses the connection (one before it completed or is still in flight).
    package var reusesConnection: Bool { completedRequests > 0 || !inFlight.isEmpty }

    /// Whether a request may be started now: the connection is open, and every request already in
    /// flight is keep-alive and completely written (pipelined requests never interleave, and never
    /// follow one that ends the connection).
    package var acceptsRequest: Bool {
        guard lifecycle == .open else { return false }
        if case .receivingBody(keepAlive: false) = phase, !inFlight.isEmpty { return false }
        return inFlight.allSatisfy { $0.keepAlive && $0.fullyWritten }
    }

    // MARK: Requests

    /// A request starts at `now`; `keepAlive` is false when it carries `Connection: close`. When it is the only
    /// one in flight its read timeout starts now.
    ///
    /// The shell asks `acceptsRequest` first (the pool leases only usable connections, and the shell refuses a
    /// request on one that closed meanwhile), so a start it refused is a bug in Wire, not something a peer causes:
    /// that alone traps.
    package mutating func requestStarted(
        id: RequestID, keepAlive: Bool, isConnect: Bool = false, readTimeout: Duration, now: Deadline
    )
        -> Action
    {
        guard acceptsRequest else {
            preconditionFailure("request started on a connection that cannot take one: \(inFlight), \(phase), \(lifecycle)")
        }
        if inFlight.isEmpty { phase = .awaitingHead(sawResponseBytes: false) }
        inFlight.append(InFlight(id: id, keepAlive: keepAlive, isConnect: isConnect, readTimeout: readTimeout))
        guard inFlight.count == 1 else { return .none }
        return becameOldest(readTimeout: readTimeout, now: now).map { .armReadTimer(at: $0) } ?? .none
    }

    /// The request's last byte was handed to the stream.
    package mutating func requestWritten(_ id: RequestID) {
        guard let index = index(of: id) else { return }
        inFlight[index].fullyWritten = true
    }

    /// The request's task gave up on it (deadline passed, task cancelled). The oldest request's response is being
    /// read, so abandoning it closes the connection; one queued behind it fails at once and its response, when it
    /// comes, is read and dropped.
    package mutating func requestAbandoned(_ id: RequestID) -> Action {
        guard lifecycle == .open, let index = index(of: id) else { return .none }
        if index == 0 { return failed(.abandoned) }
        guard !inFlight[index].discarded else { return .none }
        inFlight[index].discarded = true
        return .failAbandonedRequest
    }

    /// The consumer of the oldest request's body let it go before its end.
    package mutating func responseBodyAbandoned(_ id: RequestID) -> Action {
        guard lifecycle == .open, let oldest = inFlight.first, oldest.id == id, !oldest.discarded,
            case .receivingBody = phase
        else { return .none }
        return failed(.abandoned)
    }

    // MARK: 100 Continue

    /// The request's task waits for `100 Continue` before it sends its body, for at most `timeout` from `now`.
    package mutating func continueAwaited(_ id: RequestID, timeout: Duration, now: Deadline) -> Action {
        guard lifecycle == .open, let index = index(of: id), !inFlight[index].discarded else {
            // Failed, finished or abandoned: there is no body to send.
            return .answerContinue(sendBody: false)
        }
        if index == 0, !isAwaitingHead {
            // A final answer came first.
            return .answerContinue(sendBody: false)
        }
        switch inFlight[index].continueWait {
        case .received:
            // The server said 100 before the task got here: the loop ran the read first.
            return .answerContinue(sendBody: true)
        case .notAsked, .waiting:
            inFlight[index].continueWait = .waiting
            return .armContinueTimer(at: now + timeout)
        }
    }

    /// The timer armed by `.armContinueTimer` fired: a task still waiting sends its body anyway (RFC 9110 §10.1.1).
    package mutating func continueTimeoutFired(request id: RequestID) -> Action {
        guard lifecycle == .open, let index = index(of: id), inFlight[index].continueWait == .waiting else { return .none }
        inFlight[index].continueWait = .notAsked
        return .answerContinue(sendBody: true)
    }

    /// An interim (1xx) response head for the oldest request was parsed.
    package mutating func interimResponseReceived(status: HTTPStatus) -> Action {
        guard lifecycle == .open, !inFlight.isEmpty, status.code == 100 else { return .none }
        let wasWaiting = inFlight[0].continueWait == .waiting
        inFlight[0].continueWait = .received
        return wasWaiting ? .answerContinue(sendBody: true) : .none
    }

    // MARK: Reading

    /// Bytes arrived from the peer at `now`.
    package mutating func bytesReceived(now: Deadline) -> Action {
        guard lifecycle == .open else { return .none }
        guard !inFlight.isEmpty else {
            // A server has nothing to say to an idle connection; unsolicited bytes mean it is
            // out of sync (or about to close): never reuse it.
            lifecycle = .closed
            return .closeIdle
        }
        lastActivity = now
        if case .awaitingHead = phase { phase = .awaitingHead(sawResponseBytes: true) }
        return .none
    }

    /// The final (non-1xx) response head of the oldest request was parsed.
    /// - Parameters:
    ///   - status: Its status: a 2xx to a CONNECT opens a tunnel.
    ///   - keepAlive: Whether the response allows another exchange on the connection.
    package mutating func responseHeadReceived(status: HTTPStatus, keepAlive responseKeepAlive: Bool) -> Action {
        guard lifecycle == .open, let oldest = inFlight.first, isAwaitingHead else {
            // A head nobody asked for, or a second one: the exchange is out of step with the bytes, so the
            // connection is finished (never reused) and its request, if any, fails.
            return failed(.protocolOrIOError)
        }
        if oldest.discarded {
            phase = .receivingBody(keepAlive: oldest.keepAlive && responseKeepAlive)
            return .discardResponse
        }
        if oldest.isConnect && status.responseClass == .successful {
            phase = .awaitingTunnel
            return .holdHeadForTunnel
        }
        phase = .receivingBody(keepAlive: oldest.keepAlive && responseKeepAlive)
        let refusingBody = oldest.continueWait == .waiting
        if refusingBody { inFlight[0].continueWait = .notAsked }
        return .deliverHead(refusingBody: refusingBody)
    }

    /// The oldest request's response ended per its framing, at `now`. `trailingBytes` says whether more
    /// bytes followed it in the same read: with nothing pipelined behind it, the server has nothing
    /// more to say until the next request, so those bytes are a framing anomaly, and reusing the
    /// connection would hand them to the next request. Behind a pipelined request they are its
    /// response.
    package mutating func responseEnded(trailingBytes: Bool, now: Deadline) -> Action {
        guard lifecycle == .open, let oldest = inFlight.first, case .receivingBody(let keepAlive) = phase else {
            // An end without a head under way: out of step, as above.
            return failed(.protocolOrIOError)
        }
        // A response that ends while the request is still being written (an early 413, say)
        // leaves the request stream unfinished: the connection cannot be reused either.
        let reusable = keepAlive && oldest.fullyWritten && !(trailingBytes && inFlight.count == 1)
        _ = inFlight.removeOldest()
        phase = .awaitingHead(sawResponseBytes: false)
        completedRequests += 1
        guard reusable else {
            lifecycle = .closed
            let pipelined = inFlight.count
            inFlight.removeAll()
            return .completeRequestAndClose(requestWritten: oldest.fullyWritten, pipelined: pipelined)
        }
        let resumeReading = bodyPaused
        bodyPaused = false
        let timer = inFlight.first.flatMap { becameOldest(readTimeout: $0.readTimeout, now: now) }
        return .completeRequest(armReadTimer: timer, resumeReading: resumeReading)
    }

    /// The parser reported a switch of protocol after the oldest request's head: the tunnel a 2xx to CONNECT
    /// opened, or a switch the client never asked for (a 101), which fails the request.
    package mutating func upgradeReceived() -> Action {
        guard lifecycle == .open else { return .none }
        guard case .awaitingTunnel = phase, let oldest = inFlight.first else { return failed(.upgraded) }
        lifecycle = .handedOver
        completedRequests += 1
        let pipelined = inFlight.count - 1
        inFlight.removeAll()
        phase = .awaitingHead(sawResponseBytes: false)
        return .openTunnel(requestWritten: oldest.fullyWritten, pipelined: pipelined)
    }

    /// The peer sent end of stream. When the parser accepted the EOF as the end of a
    /// close-delimited body it reported `responseEnded` first.
    package mutating func endOfStream() -> Action {
        guard lifecycle == .open else { return .none }
        guard !inFlight.isEmpty else {
            lifecycle = .closed
            return .closeIdle
        }
        switch phase {
        case .awaitingHead(let sawBytes):
            return failed(sawBytes ? .closedInHead : .closedBeforeResponse)
        case .receivingBody:
            return failed(.truncatedBody)
        case .awaitingTunnel:
            return failed(.protocolOrIOError)
        }
    }

    // MARK: Back-pressure and timers

    /// The oldest request's body consumer has more unread bytes than it wants.
    package mutating func bodyConsumerFellBehind() -> Action {
        guard lifecycle == .open, !inFlight.isEmpty, !bodyPaused else { return .none }
        bodyPaused = true
        return .pauseReading
    }

    /// The body consumer of the request `id` wants more. A hop the consumer queued may arrive after its response
    /// ended and the next began: then it is not that consumer's pause to lift.
    package mutating func bodyConsumerCaughtUp(_ id: RequestID) -> Action {
        guard lifecycle == .open, inFlight.first?.id == id, bodyPaused else { return .none }
        bodyPaused = false
        return .resumeReading
    }

    /// The read timer fired at `now`. One timer serves the connection and is re-armed lazily: reads only stamp
    /// `lastActivity`, so neither a fast download nor a run of keep-alive requests costs timer work per read or per
    /// request. It fails the oldest request after a whole timeout without bytes, unless reading is paused for the
    /// body's consumer (a stall that is not the server's); with no request in flight it stops.
    package mutating func readTimerFired(now: Deadline) -> Action {
        readTimerDue = nil
        guard lifecycle == .open, let oldest = inFlight.first else { return .none }
        if now - lastActivity >= oldest.readTimeout && !bodyPaused { return failed(.readTimedOut(oldest.readTimeout)) }
        if bodyPaused { lastActivity = now }
        let due = lastActivity + oldest.readTimeout
        readTimerDue = due
        return .armReadTimer(at: due)
    }

    /// A parse error, an I/O error, or the stream closing under the connection.
    package mutating func failed(_ failure: Failure) -> Action {
        guard lifecycle == .open else { return .none }
        lifecycle = .closed
        guard !inFlight.isEmpty else { return .closeIdle }
        let responseStarted = if case .receivingBody = phase { true } else { false }
        let pipelined = inFlight.count - 1
        inFlight.removeAll()
        return .failRequestAndClose(failure, responseStarted: responseStarted, pipelined: pipelined)
    }

    // MARK: Helpers

    private var isAwaitingHead: Bool {
        if case .awaitingHead = phase { true } else { false }
    }

    private func index(of id: RequestID) -> Int? {
        // Almost always the oldest or the newest of one or two.
        inFlight.firstIndex { $0.id == id }
    }

    /// A request became the one whose response is awaited, at `now`: its read timeout starts. A timer already due no
    /// later keeps running (when it fires it finds the activity since and re-arms itself), so a busy connection
    /// costs no timer work per request.
    /// - Returns: The deadline to arm the read timer at, or nil to leave it.
    private mutating func becameOldest(readTimeout: Duration, now: Deadline) -> Deadline? {
        lastActivity = now
        let due = now + readTimeout
        if let armed = readTimerDue, armed <= due { return nil }
        readTimerDue = due
        return due
    }
}
