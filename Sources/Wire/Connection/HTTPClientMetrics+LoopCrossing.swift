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
/// which both sides hold already, so that neither direction allocates a closure for it. The whole value is swapped in
/// and out and its payload taken by consuming it (moved, never copied: a copy would retain every reference in it, and
/// release them again).
///
/// One enum, not an optional of each: the two never wait at the same time, and a request on its connection's loop
/// never uses either, yet every request's metrics object carried both (208 bytes, three cache lines read again as it
/// was destroyed).
enum LoopCrossing: Sendable {
    /// A response head for the task off the loop that the continuation resumes.
    typealias ParkedResponse =
        (UnsafeContinuation<HTTP1ClientConnection.ResponseOutcome, Never>, HTTP1ClientConnection.ResponseStart)

    /// Nothing waits.
    case empty
    /// A request waits for the loop to start it.
    case start(PendingStart)
    /// A response head waits for the loop's batch of hand-overs.
    case response(ParkedResponse)

    /// What waits, leaving `.empty` behind.
    static func take(from crossing: borrowing Lock<LoopCrossing>) -> LoopCrossing {
        var taken = LoopCrossing.empty
        crossing.withLock { swap(&$0, &taken) }
        return taken
    }

    /// Makes `value` what waits; nothing else waits then (the two directions take turns), so what is swapped out is
    /// `.empty`.
    static func put(_ value: consuming LoopCrossing, into crossing: borrowing Lock<LoopCrossing>) {
        var swapped = value
        crossing.withLock { swap(&$0, &swapped) }
    }
}

extension HTTPClientMetrics: LoopWork, LoopHandOver {
    /// Starts `start` on its connection's loop, from a task off that loop; a loop that has closed fails it at once
    /// (`.shutDown`, not started).
    func post(_ start: consuming PendingStart) {
        let loop = start.connection.loop
        LoopCrossing.put(.start(consume start), into: crossing)
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
        LoopCrossing.put(.response((continuation, consume start)), into: crossing)
    }

    /// The loop's batch got to a parked response head: the task resumes with it.
    package func runHandOver() {
        switch LoopCrossing.take(from: crossing) {
        case .response(let (continuation, start)):
            continuation.resume(returning: HTTP1ClientConnection.ResponseOutcome(result: .success(start), started: true))
        case .empty:
            return
        case .start(let start):
            LoopCrossing.put(.start(start), into: crossing)
        }
    }

    /// The posted start, moved out.
    private func takeStart() -> PendingStart? {
        switch LoopCrossing.take(from: crossing) {
        case .start(let start):
            return start
        case .empty:
            return nil
        case .response(let parked):
            LoopCrossing.put(.response(parked), into: crossing)
            return nil
        }
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
        let exchangeID = value.start(
            head: head, inlineBody: inlineBody, method: method, keepAlive: keepAlive, requestComplete: true,
            readTimeout: readTimeout, metrics: metrics, tap: tap, responder: responder)
        metrics.setAbortTarget(connection, exchangeID)
    }
}
