/// One HTTP/1.1 client connection on its event loop: writes requests, parses responses, and
/// tells its owner (the pool) when it is free again or gone. It speaks to `any ByteStream`, so it runs the
/// same over TCP, a Unix socket, or TLS.
///
/// The decisions are `HTTP1ClientConnectionStateMachine`'s; this class performs them. Everything
/// here runs on `loop`; tasks reach it through `LoopBound` and the async helpers at the bottom.
package final class HTTP1ClientConnection: ByteStreamDelegate, DeferredLoopWork {
    /// The response head with its body stream, as handed to the waiting request.
    package struct ResponseStart: Sendable {
        package var head: HTTPResponseHead
        package var body: HTTPBody
        /// The connection's stream, handed over after a 2xx answer to CONNECT.
        var tunnel: OpenedTunnel? = nil
    }

    /// Identifies a request on its connection, for the calls a task makes after `start`.
    package typealias ExchangeID = Int

    /// Sees one exchange's bytes as HTTP writes and reads them (above TLS, so in plaintext), on the loop and in
    /// order: `sent` for bytes written, each write as one piece; otherwise what one read gave the exchange.
    package typealias ByteTap = @Sendable (_ sent: Bool, _ bytes: ByteBuffer) -> Void

    /// What a task waiting on a continuation gets: the response head (or the failure before it), and whether the
    /// request was started at all (false when its loop had closed).
    struct ResponseOutcome: Sendable {
        var result: Result<ResponseStart, HTTPClientError>
        var started: Bool

        /// The result, moved out (a copy retains every part of the head).
        @inline(__always) consuming func takeResult() -> Result<ResponseStart, HTTPClientError> { result }
    }

    /// Where a response head goes: a closure, or straight to the continuation of the task that waits for it (no
    /// closure to allocate per request), with the request's metrics object when that task runs on another executor
    /// than the loop (the head then waits in it for the loop's batch of hand-overs). Called once.
    enum Responder {
        case closure((Result<ResponseStart, HTTPClientError>) -> Void)
        case waiter(UnsafeContinuation<ResponseOutcome, Never>, handOverVia: HTTPClientMetrics?)

        func callAsFunction(_ result: consuming Result<ResponseStart, HTTPClientError>) {
            switch self {
            case .closure(let respond): respond(result)
            case .waiter(let continuation, _):
                ThreadSanitizer.release(resuming: continuation)
                continuation.resume(returning: ResponseOutcome(result: consume result, started: true))
            }
        }

        /// Hands a parsed head over at the end of `loop`'s iteration: a task off the loop through the loop's batch of
        /// hand-overs (`EventLoop.handOver`), anything else at once.
        func deliver(_ start: consuming ResponseStart, from loop: EventLoop) {
            guard case .waiter(let continuation, let metrics?) = self else { return self(.success(consume start)) }
            ThreadSanitizer.release(resuming: continuation)
            metrics.park(consume start, for: continuation)
            loop.handOver(metrics)
        }
    }

    /// A request in flight: what its task waits on and what its metrics record. What happens to it is the
    /// machine's to decide. Its state, as the connection's, is the loop's alone and each access is a read, an
    /// assignment or one value's mutating call, never held across a call out: no dynamic exclusivity checks.
    private final class Exchange {
        @exclusivity(unchecked) private(set) var id: ExchangeID
        @exclusivity(unchecked) private(set) var metrics: HTTPClientMetrics
        /// Where the response head goes, until it is delivered: then dropped, because what it
        /// captures holds the body, and the connection must not keep a body its reader let go of
        /// (dropping it unread is how a reader abandons a response).
        @exclusivity(unchecked) var respond: Responder?
        /// The body's channel, once the head is delivered (nil while a response is dropped or held for a tunnel).
        @exclusivity(unchecked) var body: BodyChannel?
        // The waiters are unsafe continuations, resumed exactly once by the machine's decisions (the tests hold every
        // path to it): `CheckedContinuation` is a resilient type of the standard library, so each test, copy and
        // destruction of an optional one is a call through its value witnesses, several for every exchange.
        /// The task waiting for `100 Continue`, parked while the machine says it waits.
        @exclusivity(unchecked) var continueWaiter: UnsafeContinuation<Bool, Never>?
        /// The task whose upload waits for the socket to drain.
        @exclusivity(unchecked) var drainWaiter: UnsafeContinuation<Result<Void, HTTPClientError>, Never>?
        /// The read loop reached this request (for the metrics' first byte, and to tell a failure before the
        /// response from one inside it).
        @exclusivity(unchecked) var sawFirstByte = false
        @exclusivity(unchecked) var bodyBytes = 0
        /// Whether a body goes with the request, and how many of its bytes were written (for the listener).
        @exclusivity(unchecked) var hasBody = false
        @exclusivity(unchecked) var sentBodyBytes = 0
        /// A 2xx head answering CONNECT, held until the parser confirms the switch (`.holdHeadForTunnel`).
        @exclusivity(unchecked) var tunnelHead: HTTPResponseHead?
        /// Told of every byte of this exchange as it is written and read; nil (the usual case) for none.
        @exclusivity(unchecked) var tap: ByteTap?

        init(id: ExchangeID, metrics: HTTPClientMetrics) {
            self.id = id
            self.metrics = metrics
        }

        /// Makes an exchange that ended, and that nothing else holds, ready for the connection's next request: as
        /// `init` leaves a new one, without the allocation. Every stored property is set here: one added to the
        /// exchange must be reset here too, or a request would see its predecessor's.
        func reuse(id: ExchangeID, metrics: HTTPClientMetrics) {
            self.id = id
            self.metrics = metrics
            respond = nil
            body = nil
            continueWaiter = nil
            drainWaiter = nil
            sawFirstByte = false
            bodyBytes = 0
            hasBody = false
            sentBodyBytes = 0
            // Cleared only when set (a tunnel's exchange is seldom reused): assigning nil destroyed the old head first,
            // for every request (through its value witness, before release builds turned off type-layout lowering).
            if case .some = tunnelHead { tunnelHead = nil }
            tap = nil
        }

        /// Hands the response head (or the failure before it) over, once.
        func settle(_ result: Result<ResponseStart, HTTPClientError>) {
            let respond = respond
            self.respond = nil
            respond?(result)
        }
    }

    let loop: EventLoop
    private let stream: any ByteStream
    // The state below is the loop's alone, and no access to it is held across a call out (a machine's event returns
    // its actions, performed after): unchecked, as SocketStream's, it costs no dynamic exclusivity check per access
    // (about 20 per request).
    @exclusivity(unchecked) private var parser: HTTP1Parser
    @exclusivity(unchecked) private var machine = HTTP1ClientConnectionStateMachine()
    /// Requests in flight, oldest first: the first owns the response being parsed. More than one
    /// only when pipelining.
    @exclusivity(unchecked) private var exchanges: [Exchange] = []
    /// The exchange of the last response that ended normally, kept for the next request (one allocation fewer per
    /// request on a kept-alive connection); taken only when nothing else still holds it.
    @exclusivity(unchecked) private var spareExchange: Exchange?
    /// The body channel of the last response that ended normally, kept for the next response (one allocation fewer per
    /// response); taken, and made new, only once its reader has let go of it.
    @exclusivity(unchecked) private var spareChannel: BodyChannel?
    @exclusivity(unchecked) private var nextExchangeID = 0
    /// The error that closed the connection while no request was under way, for the next request
    /// to report: a TLS 1.3 server refuses a client certificate only after the handshake, and a
    /// peer may reset a connection just made, before the first request.
    @exclusivity(unchecked) private var idleCloseError: HTTPClientError?
    /// Set by the owner (the pool, which knows it by an ID of its own): called once per started request when it is done with the connection,
    /// with whether the connection may be reused.
    /// `now` is when the connection was done with the request (the time its last read was handled, when it was one).
    var onRelease: ((HTTP1ClientConnection, _ reusable: Bool, _ now: Deadline) -> Void)?
    /// The clock as read when the read being handled began, nil between reads: what that read ends (the response's last
    /// byte, the connection's lease) is timed by it, not by reading the clock again (a response took three readings).
    @exclusivity(unchecked) private var readTime: Deadline?
    /// Set by the owner: called when a connection with no request in flight closes on its own.
    var onIdleClose: ((HTTP1ClientConnection) -> Void)?
    /// The connection's number in the client's events and metrics (`HTTPClientEvent.connection`), set by the owner.
    var number = 0
    /// Whether each exchange's metrics get a `TCP_INFO` sample as its response ends (one `getsockopt`).
    var samplesTCPInfo = false
    /// The read timer, armed and re-armed as the machine says (`.armReadTimer`).
    @exclusivity(unchecked) private var readTimer: TimerQueue<() -> Void>.ID?
    /// Response heads parsed during the read being handled, handed over at the end of the loop iteration: a small
    /// response's body and end usually arrive in the same read, and its task then finds the body
    /// complete instead of waking once for the head and again for each part of the body.
    @exclusivity(unchecked) private var deliveries: [Delivery] = []
    /// The ones being handed over (swapped with `deliveries`, so neither array is reallocated per round).
    @exclusivity(unchecked) private var delivering: [Delivery] = []
    @exclusivity(unchecked) private var handOverScheduled = false
    @exclusivity(unchecked) private var isHandlingRead = false

    /// The request whose response is being read.
    private var oldest: Exchange? { exchanges.first }

    /// A response head parsed during a read, waiting for the end of the loop iteration with its body's channel, into
    /// which the rest of the read goes meanwhile. A tuple, not a struct: taken apart into locals, the head is moved
    /// on (a struct's stored head would be copied, a retain per field).
    private typealias Delivery = (respond: Responder, head: HTTPResponseHead, channel: BodyChannel, exchange: ExchangeID)

    /// High-water mark of queued request bytes before a streaming upload waits for the socket.
    static let writeHighWatermark = 256 * 1024

    /// How many bytes of a response body are copied out of the read buffer rather than sliced from it.
    static let copiedBodyBytes = 4096

    package init(stream: any ByteStream, parserConfiguration: HTTP1ParserConfiguration) {
        self.loop = stream.eventLoop
        self.stream = stream
        self.parser = HTTP1Parser(kind: .response, configuration: parserConfiguration)
        stream.delegate = self
    }

    /// Whether the connection can take a request now (behind others, if they are pipelined).
    package var isUsable: Bool { stream.isOpen && machine.acceptsRequest }

    var remoteAddress: SocketAddress? { stream.remoteAddress }
    var localAddress: SocketAddress? { stream.localAddress }
    var securityInfo: TransportSecurityInfo? { stream.securityInfo }

    /// What each request's metrics report of this connection: its addresses, its TLS, its number. Made by the first
    /// request (the stream is connected, and secured, by then) and shared by the rest.
    var metricsFacts: HTTPClientMetrics.ConnectionFacts {
        if let facts = metricsFactsCache { return facts }
        let facts = HTTPClientMetrics.ConnectionFacts(
            HTTPClientMetrics.ConnectionFactFields(
                remoteAddress: stream.remoteAddress, localAddress: stream.localAddress,
                transportSecurity: stream.securityInfo, number: number))
        metricsFactsCache = facts
        return facts
    }
    @exclusivity(unchecked) private var metricsFactsCache: HTTPClientMetrics.ConnectionFacts?

    // MARK: Sending

    /// Starts a request: writes the head (and `inlineBody`, if the whole body is in memory) and
    /// returns the promise of its response head, with the ID the later calls for it take.
    package func start(
        head: [UInt8],
        inlineBody: ByteBuffer?,
        method: HTTPMethod,
        keepAlive: Bool,
        requestComplete: Bool,
        readTimeout: Duration,
        metrics: HTTPClientMetrics,
        tap: ByteTap? = nil
    ) -> (Promise<ResponseStart, HTTPClientError>, ExchangeID) {
        let promise = Promise<ResponseStart, HTTPClientError>()
        let id = start(
            head: head, inlineBody: inlineBody, method: method, keepAlive: keepAlive, requestComplete: requestComplete,
            readTimeout: readTimeout, metrics: metrics, tap: tap, responder: .closure { promise.complete($0) })
        return (promise, id)
    }

    /// Starts a request as `start(head:...)` does, handing its response head (or the failure before it) to
    /// `respond` on the loop, exactly once. A `.waiter` is resumed from the read that parsed the head: at once when
    /// its task runs on this loop, in the loop's batch of hand-overs (`EventLoop.handOver`) when it runs elsewhere.
    func start(
        head: [UInt8],
        inlineBody: ByteBuffer?,
        method: HTTPMethod,
        keepAlive: Bool,
        requestComplete: Bool,
        readTimeout: Duration,
        metrics: HTTPClientMetrics,
        tap: ByteTap? = nil,
        responder respond: Responder
    ) -> ExchangeID {
        loop.preconditionInEventLoop()
        let id = nextExchangeID
        nextExchangeID += 1
        guard isUsable else {
            // The connection closed after the pool leased it (a server's idle close racing the
            // lease): the pool kept its entry for this request, which must give it back, or the
            // pool holds the closed connection forever. Requests still in flight (a pipelined
            // lease behind a response that ends the connection) release it themselves.
            if exchanges.isEmpty { onRelease?(self, false, readTime ?? .now()) }
            var error =
                idleCloseError
                ?? HTTPClientError(.emptyReply, "the pooled connection was closed by the server", failedBeforeResponse: true)
            error.wasNotSent = true
            respond(.failure(error))
            return id
        }
        let exchange: Exchange
        if isKnownUniquelyReferenced(&spareExchange), let spare = spareExchange.take() {
            spare.reuse(id: id, metrics: metrics)
            exchange = spare
        } else {
            exchange = Exchange(id: id, metrics: metrics)
        }
        exchange.respond = respond
        exchange.tap = tap
        let reused = machine.reusesConnection
        exchanges.append(exchange)
        perform(
            machine.requestStarted(
                id: id, keepAlive: keepAlive, isConnect: method == .connect, readTimeout: readTimeout, now: .now()),
            error: nil)
        parser.expectResponse(to: method)
        let facts = metricsFacts
        metrics.update {
            $0.isReusedConnection = reused
            $0.connectionFacts = facts
        }
        if let tap {
            // Told before the write: a failing write closes the connection, and the trace shows what was attempted.
            tap(true, ByteBuffer(bytes: head))
            if let inlineBody, inlineBody.readableBytes > 0 { tap(true, inlineBody) }
        }
        if let inlineBody {
            stream.write([ByteBuffer(bytes: head), inlineBody])
            exchange.hasBody = true
            exchange.sentBodyBytes = inlineBody.readableBytes
        } else {
            // Straight from the array: only what the kernel does not take at once is copied.
            head.withUnsafeBytes { stream.write(copying: $0) }
        }
        metrics.emit(.requestHeadSent(bytes: head.count), connection: number)
        if requestComplete { requestWritten(exchange) }
        return id
    }

    private func findExchange(_ id: ExchangeID) -> Exchange? {
        exchanges.first { $0.id == id }
    }

    private func requestWritten(_ exchange: Exchange) {
        machine.requestWritten(exchange.id)
        if stream.pendingWriteBytes == 0 {
            exchange.metrics.update { $0.timings.requestSentNanoseconds = exchange.metrics.elapsedNanoseconds() }
        }
        if exchange.hasBody { exchange.metrics.emit(.requestBodySent(bytes: exchange.sentBodyBytes), connection: number) }
    }

    /// Writes part of a streamed body; completes once the socket has room for more.
    func writeBodyPart(
        _ buffers: [ByteBuffer], isLast: Bool, for id: ExchangeID,
        continuation: UnsafeContinuation<Result<Void, HTTPClientError>, Never>
    ) {
        loop.preconditionInEventLoop()
        guard let exchange = findExchange(id), stream.isOpen, !machine.isClosed else {
            continuation.resume(
                returning: .failure(
                    HTTPClientError(
                        .writeFailed, "the connection closed while the request body was being sent",
                        mayHaveBeenProcessed: true)))
            return
        }
        if let tap = exchange.tap { Self.tell(tap, buffers) }
        stream.write(buffers)
        exchange.hasBody = true
        if exchange.metrics.listener != nil { exchange.sentBodyBytes += buffers.reduce(0) { $0 + $1.readableBytes } }
        if isLast { requestWritten(exchange) }
        if stream.pendingWriteBytes > Self.writeHighWatermark {
            exchange.drainWaiter = continuation
        } else {
            continuation.resume(returning: .success(()))
        }
    }

    /// Tells `tap` of the parts of one write as one piece.
    private static func tell(_ tap: ByteTap, _ buffers: [ByteBuffer]) {
        if buffers.count == 1 {
            if buffers[0].readableBytes > 0 { tap(true, buffers[0]) }
            return
        }
        var joined = ByteBuffer(capacity: buffers.reduce(0) { $0 + $1.readableBytes })
        for buffer in buffers { joined.writeBuffer(buffer) }
        if joined.readableBytes > 0 { tap(true, joined) }
    }

    /// Whether the stream can send the file regions of exchange `id` itself (`sendfile(2)` on a plain socket; not
    /// TLS, and not for a tapped exchange, whose bytes must pass through memory to be seen).
    func takesFileRegions(for id: ExchangeID) -> Bool {
        loop.preconditionInEventLoop()
        return stream.fileRegions != nil && findExchange(id)?.tap == nil
    }

    /// Writes a region of a file of a `.segments` body (only when `takesFileRegions`); completes once the socket has
    /// room for more.
    func writeBodyRegion(
        _ region: FileRegion, isLast: Bool, for id: ExchangeID,
        continuation: UnsafeContinuation<Result<Void, HTTPClientError>, Never>
    ) {
        loop.preconditionInEventLoop()
        guard let exchange = findExchange(id), stream.isOpen, !machine.isClosed, let regions = stream.fileRegions
        else {
            continuation.resume(
                returning: .failure(
                    HTTPClientError(
                        .writeFailed, "the connection closed while the request body was being sent",
                        mayHaveBeenProcessed: true)))
            return
        }
        regions.write(region)
        exchange.hasBody = true
        exchange.sentBodyBytes += region.count
        if isLast { requestWritten(exchange) }
        if stream.pendingWriteBytes > Self.writeHighWatermark {
            exchange.drainWaiter = continuation
        } else {
            continuation.resume(returning: .success(()))
        }
    }

    /// Waits for the go-ahead to send the body of a request that asked `Expect: 100-continue`: true at
    /// `100 Continue` or at the timeout (the body goes anyway, RFC 9110 §10.1.1), false when a final response
    /// came first or the request is gone. The machine decides (`continueAwaited`); this parks the task meanwhile.
    func awaitContinue(timeout: Duration, for id: ExchangeID, continuation: UnsafeContinuation<Bool, Never>) {
        loop.preconditionInEventLoop()
        switch machine.continueAwaited(id, timeout: timeout, now: .now()) {
        case .armContinueTimer(let deadline):
            guard let exchange = findExchange(id) else { return continuation.resume(returning: false) }
            exchange.continueWaiter = continuation
            // A strong capture, as the read timer's: the timer holds the connection at most until the timeout.
            _ = loop.scheduleOnLoop(at: deadline) { self.continueTimerFired(for: id) }
        case .answerContinue(let sendBody):
            continuation.resume(returning: sendBody)
        default:
            continuation.resume(returning: false)
        }
    }

    private func continueTimerFired(for id: ExchangeID) {
        guard case .answerContinue(let sendBody) = machine.continueTimeoutFired(request: id) else { return }
        answerContinue(of: findExchange(id), sendBody: sendBody)
    }

    /// Resumes the task that waits for `100 Continue` on `exchange`, if one does.
    private func answerContinue(of exchange: Exchange?, sendBody: Bool) {
        guard let exchange, let waiter = exchange.continueWaiter else { return }
        exchange.continueWaiter = nil
        waiter.resume(returning: sendBody)
    }

    /// Abandons a request (deadline passed, task cancelled). The oldest request's response is
    /// being read, so abandoning it closes the connection; a request pipelined behind it is
    /// failed at once and its response, when it comes, is read and dropped.
    func abort(_ id: ExchangeID, with error: HTTPClientError) {
        loop.preconditionInEventLoop()
        let action = machine.requestAbandoned(id)
        guard action == .failAbandonedRequest else { return perform(action, error: error) }
        findExchange(id)?.settle(.failure(error))
    }

    /// Closes the connection (pool eviction or shutdown).
    func close() {
        loop.preconditionInEventLoop()
        guard !machine.isHandedOver else { return }
        stream.close(error: nil)
    }

    // MARK: Receiving

    package func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer) {
        isHandlingRead = true
        var readTap: ReadTap?
        defer {
            readTime = nil
            readTap?.tell()
            // The rest of a large body may gather in the kernel before the next wake-up.
            stream.expectAtLeast(parser.bodyBytesStillDue)
            deliverHeads()
        }
        let now = Deadline.now()
        readTime = now
        if machine.bytesReceived(now: now) == .closeIdle {
            closeIdle()
            return
        }
        // Keep asking until the parser neither consumes nor reports anything: some events (the
        // end of a Content-Length body) come from a call with no new bytes. Each pass serves the
        // oldest request; behind pipelined requests one read may hold several responses.
        while let exchange = oldest, !machine.isClosed {
            if !exchange.sawFirstByte {
                exchange.sawFirstByte = true
                exchange.metrics.update { $0.timings.firstByteNanoseconds = exchange.metrics.elapsedNanoseconds(at: now) }
            }
            let step: HTTP1LeanStep
            do {
                // The lean step leaves a head in the parser until taken: no event holding it is copied on the way
                // out (a head event is a large enum, copied and destroyed through its value witnesses).
                step = try buffer.withUnsafeReadableBytes { (bytes) throws(HTTP1ParseError) -> HTTP1LeanStep in
                    try parser.parseLean(bytes.assumingMemoryBound(to: UInt8.self))
                }
            } catch {
                perform(
                    machine.failed(.protocolOrIOError),
                    error: HTTPClientError(.malformedResponse, "\(error)", parseError: error, mayHaveBeenProcessed: true))
                return
            }
            var chunk: ByteBuffer?
            if case .body(let range) = step.kind {
                // A small body is copied out: a slice would keep the loop's whole read buffer (64 KiB) alive for as
                // long as the caller keeps the response, and with many responses held at once the loop would
                // allocate a fresh read buffer per response. Past the first few KiB a body is sliced (no copy).
                chunk =
                    exchange.bodyBytes + range.count <= Self.copiedBodyBytes
                    ? buffer.copy(at: range.lowerBound, length: range.count)
                    : buffer.slice(at: range.lowerBound, length: range.count)
            }
            if step.consumed > 0, exchange.tap != nil {
                if readTap?.exchange !== exchange {
                    readTap?.tell()
                    readTap = ReadTap(exchange: exchange, base: buffer)
                }
                readTap?.length += step.consumed
            }
            buffer.moveReaderIndex(forwardBy: step.consumed)
            switch step.kind {
            case .needMore:
                if step.consumed == 0 { return }
            case .head:
                guard let head = parser.takeResponseHead() else {
                    // A response parser always leaves a response head here; were it not to, fail rather than guess.
                    perform(
                        machine.failed(.protocolOrIOError),
                        error: HTTPClientError(
                            .malformedResponse, "no response head where the parser reported one", mayHaveBeenProcessed: true))
                    return
                }
                handleHead(head, exchange: exchange)
            case .body:
                handleBody(chunk, exchange: exchange)
            case .end:
                // A response's trailers are not handed on; taken so that they do not wait in the parser.
                _ = parser.takeTrailers()
                perform(machine.responseEnded(trailingBytes: buffer.readableBytes > 0, now: now), error: nil)
            case .upgraded:
                // Every byte after the head belongs to the tunnel, if the switch opens one; else the connection fails.
                let leftover = buffer.slice(at: 0, length: buffer.readableBytes)
                buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
                switchedProtocols(exchange, leftover: leftover)
                return
            }
        }
    }

    /// The bytes one read gave a tapped exchange, gathered to be told as one piece: they follow each other in the
    /// read buffer from `base`'s reader index on.
    private struct ReadTap {
        let exchange: Exchange
        let base: ByteBuffer
        var length = 0

        func tell() {
            if length > 0 { exchange.tap?(false, base.slice(at: 0, length: length)) }
        }
    }

    /// Hands over the response heads parsed during the read just handled.
    private func deliverHeads() {
        isHandlingRead = false
        guard !deliveries.isEmpty else { return }
        // At the end of the loop iteration, with the heads of every other connection read in it (tasks on another
        // executor then go through the loop's batch of hand-overs), by one job for every head read until it runs.
        guard !handOverScheduled else { return }
        handOverScheduled = true
        loop.executeSoon(self)
    }

    /// The loop got to the hand-over `deliverHeads` queued: the heads read since go to their requests.
    package func runDeferredWork() {
        handOverHeads()
    }

    private func handOverHeads() {
        handOverScheduled = false
        swap(&deliveries, &delivering)
        // Taken out one by one, oldest first, rather than copied out by a loop and destroyed by `removeAll` after it.
        delivering.reverse()
        while let (respond, head, channel, exchange) = delivering.popLast() {
            // A body the read ended too (a small response, read whole) goes over as it is: its producer has nothing
            // left to resume or abandon, so the body gets neither a producer nor a consumer to tell when dropped.
            let body: HTTPBody
            if channel.hasEnded {
                body = HTTPBody(ended: channel)
            } else {
                channel.setProducer(ResponseBodyProducer(connection: LoopBound(self, loop: loop), exchange: exchange))
                body = HTTPBody(channel: channel)
            }
            respond.deliver(ResponseStart(head: consume head, body: consume body), from: loop)
        }
    }

    /// An event from `parser.finish()` at the end of the stream (the read path takes the lean steps apart itself).
    private func handle(_ event: HTTP1ParserEvent, chunk: ByteBuffer?, exchange: Exchange, trailingBytes: Bool, now: Deadline) {
        switch event {
        case .requestHead:
            // A response parser never produces one; were it ever to, the bytes are not a response.
            perform(
                machine.failed(.protocolOrIOError),
                error: HTTPClientError(
                    .malformedResponse, "a request head in the response stream",
                    mayHaveBeenProcessed: true))
        case .responseHead(let head):
            handleHead(head, exchange: exchange)
        case .body:
            handleBody(chunk, exchange: exchange)
        case .end:
            perform(machine.responseEnded(trailingBytes: trailingBytes, now: now), error: nil)
        case .upgraded:
            switchedProtocols(exchange, leftover: ByteBuffer())
        }
    }

    // `consuming` down to the response start it goes into: a borrowed head was copied there (a retain per field).
    private func handleHead(_ head: consuming HTTPResponseHead, exchange: Exchange) {
        if head.isInterim {
            if case .answerContinue(let sendBody) = machine.interimResponseReceived(status: head.status) {
                answerContinue(of: exchange, sendBody: sendBody)
            }
            return
        }
        // The parser knows it from its one pass over the fields (`head.isKeepAlive` would walk them again).
        switch machine.responseHeadReceived(status: head.status, keepAlive: parser.lastResponseKeepsAlive) {
        case .deliverHead(let refusingBody):
            deliverHead(head, to: exchange, refusingBody: refusingBody)
        case .discardResponse:
            // Abandoned while queued: no channel, so its body bytes are dropped as they come.
            return
        case .holdHeadForTunnel:
            exchange.tunnelHead = head
        case let action:
            perform(action, error: nil)
        }
    }

    private func handleBody(_ chunk: ByteBuffer?, exchange: Exchange) {
        guard let chunk, let channel = exchange.body else { return }
        exchange.bodyBytes += chunk.readableBytes
        if !channel.yield(chunk) { perform(machine.bodyConsumerFellBehind(), error: nil) }
    }

    private func deliverHead(_ head: consuming HTTPResponseHead, to exchange: Exchange, refusingBody: Bool) {
        let channel: BodyChannel
        if isKnownUniquelyReferenced(&spareChannel), let spare = spareChannel.take() {
            spare.resetForReuse()
            channel = spare
        } else {
            channel = BodyChannel()
        }
        exchange.body = channel
        exchange.metrics.emit(.responseHeadReceived(head), connection: number)
        if refusingBody { answerContinue(of: exchange, sendBody: false) }
        if isHandlingRead, let respond = exchange.respond {
            // Handed over at the end of the loop iteration, with the body's producer only if the body is still open.
            exchange.respond = nil
            deliveries.append((respond, consume head, channel, exchange.id))
        } else {
            channel.setProducer(ResponseBodyProducer(connection: LoopBound(self, loop: loop), exchange: exchange.id))
            exchange.settle(.success(ResponseStart(head: head, body: HTTPBody(channel: channel))))
        }
    }

    /// The parser reported a switch of protocol: a tunnel when the machine held a 2xx to CONNECT, a failure
    /// otherwise.
    private func switchedProtocols(_ exchange: Exchange, leftover: ByteBuffer) {
        let action = machine.upgradeReceived()
        guard case .openTunnel(let requestWritten, let pipelined) = action else {
            return perform(
                action, error: HTTPClientError(.upgradeNotSupported, "the server switched protocols", mayHaveBeenProcessed: true))
        }
        guard let head = exchange.tunnelHead else {
            // The machine held a head this shell did not keep: nothing to hand over, so the request fails instead.
            return perform(
                .failRequestAndClose(.protocolOrIOError, responseStarted: false, pipelined: pipelined),
                error: HTTPClientError(
                    .connectionClosed, "the connection closed as the tunnel opened", mayHaveBeenProcessed: true))
        }
        openTunnel(exchange, head: head, requestWritten: requestWritten, leftover: leftover)
    }

    /// A 2xx answered CONNECT: the stream leaves HTTP and this connection for good. The request
    /// gets the head with the tunnel; the pool is told the connection is not reusable, and its
    /// close does nothing now that the stream has another owner.
    private func openTunnel(_ exchange: Exchange, head: HTTPResponseHead, requestWritten: Bool, leftover: ByteBuffer) {
        stopReadTimer()
        finishOldest(exchange)
        wakeWaiters(of: exchange, requestWritten: requestWritten)
        // Nobody listens until the next owner (an HTTPTunnel, TLS to the origin) takes the stream: it keeps
        // what it reads meanwhile, end of stream included.
        stream.delegate = nil
        let tunnel = OpenedTunnel(stream: LoopBound(stream, loop: loop), leftover: leftover)
        // Out of the pool before the request resumes, as a completed response is.
        onRelease?(self, false, readTime ?? .now())
        failPipelined()
        exchange.settle(.success(ResponseStart(head: head, body: .empty, tunnel: tunnel)))
    }

    package func streamDidReachEnd(_ stream: any ByteStream) {
        guard let exchange = oldest else {
            perform(machine.endOfStream(), error: nil)
            return
        }
        do {
            if let event = try parser.finish() {
                handle(event, chunk: nil, exchange: exchange, trailingBytes: false, now: .now())
            }
        } catch {
            // Mid-message EOF: the state machine decides which error it is.
        }
        if !exchanges.isEmpty || !machine.isClosed { perform(machine.endOfStream(), error: nil) }
    }

    package func streamDidDrainWrites(_ stream: any ByteStream) {
        guard let exchange = exchanges.last else { return }
        if machine.isBusy, exchange.metrics.snapshot.timings.requestSent == nil {
            exchange.metrics.update { $0.timings.requestSentNanoseconds = exchange.metrics.elapsedNanoseconds() }
        }
        if let waiter = exchange.drainWaiter {
            exchange.drainWaiter = nil
            waiter.resume(returning: .success(()))
        }
    }

    package func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?) {
        stopReadTimer()
        spareExchange = nil
        spareChannel = nil
        let ioError = error as? IOError
        if exchanges.isEmpty, let error, !(error is EventLoopClosedError) {
            idleCloseError =
                if let ioError {
                    HTTPClientError(
                        ioError.errno == .connectionReset || ioError.errno == .brokenPipe ? .connectionReset : .connectionClosed,
                        "\(ioError)", ioError: ioError, failedBeforeResponse: true)
                } else {
                    HTTPClientError(.tlsFailed, "\(error)", securityError: error, failedBeforeResponse: true)
                }
        }
        let clientError: HTTPClientError
        let beforeResponse = !(oldest?.sawFirstByte ?? true)
        if let ioError, ioError.errno == .connectionReset || ioError.errno == .brokenPipe {
            clientError = HTTPClientError(.connectionReset, "\(ioError)", ioError: ioError, failedBeforeResponse: beforeResponse)
        } else if let ioError {
            clientError = HTTPClientError(.writeFailed, "\(ioError)", ioError: ioError, failedBeforeResponse: beforeResponse)
        } else {
            // A TLS layer's error (a truncated stream, an alert) keeps its precise reason.
            clientError = HTTPClientError(
                .connectionClosed, error.map { "\($0)" } ?? "the connection closed", securityError: error,
                failedBeforeResponse: beforeResponse)
        }
        perform(machine.failed(.protocolOrIOError), error: clientError)
    }

    // MARK: Back-pressure and abandonment

    fileprivate func resumeReadingForBody(of id: ExchangeID) {
        perform(machine.bodyConsumerCaughtUp(id), error: nil)
    }

    fileprivate func bodyAbandoned(of id: ExchangeID) {
        perform(machine.responseBodyAbandoned(id), error: HTTPClientError(.cancelled, "the response body was abandoned"))
    }

    // MARK: Timers

    /// One timer per connection for the oldest request, re-armed lazily (the machine says when: `readTimerFired`).
    private func armReadTimer(at when: Deadline) {
        if let readTimer { loop.cancelOnLoop(readTimer) }
        // A strong capture (a weak one would give the connection a side table, and every retain and release of it
        // the slow path): the timer is cancelled when the stream closes or is handed over.
        readTimer = loop.scheduleOnLoop(at: when) { self.readTimerFired() }
    }

    private func stopReadTimer() {
        if let readTimer { loop.cancelOnLoop(readTimer) }
        readTimer = nil
    }

    private func readTimerFired() {
        readTimer = nil
        perform(machine.readTimerFired(now: .now()), error: nil)
    }

    // MARK: Performing actions

    private func perform(_ action: HTTP1ClientConnectionStateMachine.Action, error: HTTPClientError?) {
        switch action {
        case .none, .deliverHead, .discardResponse, .holdHeadForTunnel, .openTunnel, .answerContinue, .armContinueTimer,
            .failAbandonedRequest:
            // Answered where the event is handled: each needs what only its caller has (the head, the waiter, the
            // bytes after the head).
            return
        case .armReadTimer(let deadline):
            armReadTimer(at: deadline)
        case .pauseReading:
            stream.setReadingEnabled(false)
        case .resumeReading:
            if stream.isOpen { stream.setReadingEnabled(true) }
        case .completeRequest(let timer, let resumeReading):
            guard let exchange = oldest else { return }
            finishOldest(exchange, responseEnded: true)
            if let timer { armReadTimer(at: timer) }
            wakeWaiters(of: exchange, requestWritten: true)
            // A pause this body asked for ends with it (its last bytes can arrive in the read that
            // paused): the bytes that follow are another response's, and this body's consumer may
            // never read again to lift it.
            if resumeReading, stream.isOpen { stream.setReadingEnabled(true) }
            // Back to the pool before the body ends: ending it wakes the consumer, whose next
            // request must find this connection idle rather than open a new one.
            exchange.metrics.emit(.connectionReleased(reusable: true), connection: number)
            onRelease?(self, true, readTime ?? .now())
            exchange.body?.finish()
            // Nothing of the response stays with the connection: the exchange keeps only its shell, and the channel
            // waits apart until its reader lets go of it.
            spareChannel = exchange.body.take()
            spareExchange = exchange
        case .completeRequestAndClose(let requestWritten, _):
            guard let exchange = oldest else { return }
            finishOldest(exchange, responseEnded: true)
            wakeWaiters(of: exchange, requestWritten: requestWritten)
            stream.close(error: nil)
            failPipelined()
            exchange.metrics.emit(.connectionReleased(reusable: false), connection: number)
            onRelease?(self, false, readTime ?? .now())
            exchange.body?.finish()
        case .failRequestAndClose(let failure, let responseStarted, _):
            guard let exchange = oldest else { return }
            finishOldest(exchange)
            let failureError = error ?? describe(failure, exchange: exchange)
            // Every byte of the request head went out with its start, so the server may have acted on it.
            let finalError = failureError.failedBeforeResponse ? failureError : failureError.markingMayHaveBeenProcessed()
            // Told before the failure reaches the body, whose end ends the call.
            exchange.metrics.emit(.connectionReleased(reusable: false), connection: number)
            fail(exchange, with: finalError, responseStarted: responseStarted)
            stream.close(error: nil)
            onRelease?(self, false, readTime ?? .now())
            failPipelined()
        case .closeIdle:
            closeIdle()
        }
    }

    private func fail(_ exchange: Exchange, with error: HTTPClientError, responseStarted: Bool) {
        if responseStarted {
            exchange.body?.fail(error)
        } else {
            exchange.settle(.failure(error))
        }
        exchange.continueWaiter?.resume(returning: false)
        exchange.continueWaiter = nil
        exchange.drainWaiter?.resume(returning: .failure(error))
        exchange.drainWaiter = nil
    }

    /// The request's response is over (or became a tunnel) while its task may still wait on it:
    /// parked by a full socket in the middle of an upload the server answered without reading
    /// (an early 413 or 401), or waiting for `100 Continue`. Nothing else would wake it: the
    /// exchange is gone, so neither a drain nor an abort finds it. An unfinished upload fails,
    /// and the request then returns the response it already has.
    private func wakeWaiters(of exchange: Exchange, requestWritten: Bool) {
        answerContinue(of: exchange, sendBody: false)
        guard let waiter = exchange.drainWaiter else { return }
        exchange.drainWaiter = nil
        if requestWritten {
            waiter.resume(returning: .success(()))
        } else {
            waiter.resume(
                returning: .failure(
                    HTTPClientError(
                        .writeFailed, "the server answered before the request body was sent",
                        mayHaveBeenProcessed: true)))
        }
    }

    /// The connection closed with requests pipelined behind the one it answered last (the machine's `pipelined`):
    /// none of them saw a response byte, so they fail as never answered (and idempotent ones are retried).
    private func failPipelined() {
        let queued = exchanges
        exchanges.removeAll()
        var error = HTTPClientError(
            .emptyReply, "the connection closed before the response to this pipelined request",
            failedBeforeResponse: true)
        error.queuedBehindClosedResponse = true
        for exchange in queued {
            fail(exchange, with: error, responseStarted: false)
            exchange.metrics.emit(.connectionReleased(reusable: false), connection: number)
            onRelease?(self, false, readTime ?? .now())
        }
    }

    /// Removes the oldest request and records its last byte (and a `TCP_INFO` sample, when asked for).
    private func finishOldest(_ exchange: Exchange, responseEnded: Bool = false) {
        _ = exchanges.removeOldest()
        let bytes = exchange.bodyBytes
        let tcpInfo = samplesTCPInfo ? stream.tcpInfo() : nil
        exchange.metrics.update {
            $0.timings.lastByteNanoseconds = exchange.metrics.elapsedNanoseconds(at: readTime ?? .now())
            $0.bodyBytes = bytes
            if let tcpInfo { $0.tcpInfo = tcpInfo }
        }
        if responseEnded { exchange.metrics.emit(.responseBodyReceived(bytes: bytes), connection: number) }
    }

    private func describe(_ failure: HTTP1ClientConnectionStateMachine.Failure, exchange: Exchange) -> HTTPClientError {
        switch failure {
        case .closedBeforeResponse:
            return HTTPClientError(
                .emptyReply, "the server closed the connection without sending a response", failedBeforeResponse: true)
        case .closedInHead:
            return HTTPClientError(.connectionClosed, "the server closed the connection in the middle of the response head")
        case .truncatedBody:
            return HTTPClientError(
                .bodyTruncated,
                "the server closed the connection after \(exchange.bodyBytes) body bytes, before the end its framing announced")
        case .protocolOrIOError:
            return HTTPClientError(.connectionClosed, "the connection failed")
        case .upgraded:
            return HTTPClientError(.upgradeNotSupported, "the server switched protocols")
        case .abandoned:
            return HTTPClientError(.cancelled, "the request was abandoned")
        case .readTimedOut(let timeout):
            return HTTPClientError(.readTimeout, "no data from the server for \(timeout)", mayHaveBeenProcessed: true)
        }
    }

    private func closeIdle() {
        stream.close(error: nil)
        onIdleClose?(self)
    }
}

/// What a response body's channel tells its connection, naming the response: a hop the consumer queued may run after
/// the loop has finished this response and begun the next, which is not its to resume or abandon.
private struct ResponseBodyProducer: BodyProducer {
    let connection: LoopBound<HTTP1ClientConnection>
    let exchange: HTTP1ClientConnection.ExchangeID

    func resumeProducing() {
        let (connection, exchange) = (connection, exchange)
        connection.loop.execute { connection.value.resumeReadingForBody(of: exchange) }
    }

    func consumerAbandoned() {
        let (connection, exchange) = (connection, exchange)
        connection.loop.execute { connection.value.bodyAbandoned(of: exchange) }
    }
}
