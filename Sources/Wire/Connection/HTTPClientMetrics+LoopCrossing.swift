/// A whole request (head and body in memory) that a task off its connection's loop asked to start, waiting for the
/// loop in the request's metrics object.
struct PendingStart: Sendable {
    let connection: LoopBound<HTTP1ClientConnection>
    let head: [UInt8]
    let inlineBody: ByteBuffer?
    let method: HTTPMethod
    let keepAlive: Bool
    let readTimeout: Duration
    let tap: HTTP1ClientConnection.ByteTap?
    let continuation: UnsafeContinuation<HTTP1ClientConnection.ResponseOutcome, Never>
}

/// What a request's task off the loop (on Swift's global executor) and its connection's loop hand each other, one at
/// a time: the request to start, then the response head to resume the task with. Kept in the request's metrics object,
/// which both sides hold already, so that neither direction allocates a closure for it. Each is swapped in and out
/// (moved, never copied: a copy would retain every reference in it, and release them again; matching an enum's case
/// copied its payload).
struct LoopCrossing: Sendable {
    /// A response head for the task off the loop that the continuation resumes.
    typealias ParkedResponse =
        (UnsafeContinuation<HTTP1ClientConnection.ResponseOutcome, Never>, HTTP1ClientConnection.ResponseStart)

    var start: PendingStart?
    var response: ParkedResponse?
}

extension HTTPClientMetrics: LoopWork, LoopHandOver {
    /// Starts `start` on its connection's loop, from a task off that loop; a loop that has closed fails it at once
    /// (`.shutDown`, not started).
    func post(_ start: consuming PendingStart) {
        let loop = start.connection.loop
        var posted: PendingStart? = consume start
        crossing.withLock { swap(&$0.start, &posted) }
        loop.execute(self) {
            guard let start = takeStart() else { return }
            start.continuation.resume(
                returning: HTTP1ClientConnection.ResponseOutcome(
                    result: .failure(HTTPClientError(.shutDown, "the event loop shut down")), started: false))
        }
    }

    /// The loop got to a posted start.
    package func runOnLoop() {
        guard let start = takeStart() else { return }
        HTTP1ClientConnection.startWhole(
            on: start.connection, head: start.head, inlineBody: start.inlineBody, method: start.method,
            keepAlive: start.keepAlive, readTimeout: start.readTimeout, metrics: self, tap: start.tap,
            responder: .waiter(start.continuation, handOverVia: self))
    }

    /// Keeps a response head for the task off the loop that `continuation` resumes, until the loop's batch of
    /// hand-overs (`runHandOver`).
    func park(
        _ start: consuming HTTP1ClientConnection.ResponseStart,
        for continuation: UnsafeContinuation<HTTP1ClientConnection.ResponseOutcome, Never>
    ) {
        var parked: LoopCrossing.ParkedResponse? =
            (continuation, consume start)
        crossing.withLock { swap(&$0.response, &parked) }
    }

    /// The loop's batch got to a parked response head: the task resumes with it.
    package func runHandOver() {
        var parked: LoopCrossing.ParkedResponse?
        crossing.withLock { swap(&$0.response, &parked) }
        guard let (continuation, start) = consume parked else { return }
        continuation.resume(returning: HTTP1ClientConnection.ResponseOutcome(result: .success(start), started: true))
    }

    /// The posted start, moved out.
    private func takeStart() -> PendingStart? {
        var start: PendingStart?
        crossing.withLock { swap(&$0.start, &start) }
        return start
    }
}

extension HTTP1ClientConnection {
    /// Starts a whole request on `connection` (loop thread only), records where it goes in `metrics`, and lets an abort
    /// of the request reach the exchange.
    static func startWhole(
        on connection: LoopBound<HTTP1ClientConnection>, head: [UInt8], inlineBody: ByteBuffer?, method: HTTPMethod,
        keepAlive: Bool, readTimeout: Duration, metrics: HTTPClientMetrics, tap: ByteTap?, responder: Responder
    ) {
        let value = connection.value
        metrics.update {
            $0.remoteAddress = value.remoteAddress
            $0.localAddress = value.localAddress
            $0.transportSecurity = value.securityInfo
        }
        let exchangeID = value.start(
            head: head, inlineBody: inlineBody, method: method, keepAlive: keepAlive, requestComplete: true,
            readTimeout: readTimeout, metrics: metrics, tap: tap, responder: responder)
        metrics.setAbortTarget(connection, exchangeID)
    }
}
