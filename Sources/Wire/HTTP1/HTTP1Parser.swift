/// An incremental HTTP/1.1 parser for requests or responses (RFC 9112), as a value-type state machine.
///
/// Pull-style contract: pass every byte not yet consumed, starting with the oldest, to `parse(_:)`. It returns how
/// many leading bytes it consumed and at most one event. Handle the event (a `.body` range indexes the bytes you
/// passed), drop the consumed bytes, and call again; `nil` means more bytes are needed, even if some framing bytes
/// were consumed. An incomplete head is not consumed, but the parser remembers how far it scanned.
///
/// ```swift
/// var parser = HTTP1Parser(kind: .request)
/// while true {
///     let step = try parser.parse(buffer.span)
///     handle(step.event)            // before dropping: body ranges point into `buffer`
///     buffer.removeFirst(step.consumed)
///     if step.event == nil { break } // read more
/// }
/// ```
///
/// After an error, every call throws the same error: HTTP/1.1 framing cannot be resynchronised.
public struct HTTP1Parser: Sendable {
    /// Which messages the parser reads.
    public enum Kind: Sendable, Hashable {
        /// Requests: a server's parser.
        case request
        /// Responses: a client's parser.
        case response
    }

    /// Where the parser stands. Transitions are noted per case.
    private enum State: Sendable {
        /// Scanning a head; `scanner` holds progress. → fixedBody, chunked, closeDelimited, upgradePending, head.
        case head
        /// Content-Length body with `remaining` bytes to go; 0 means `.end` is due. → head or awaitingUpgradeDecision.
        case fixedBody(remaining: Int)
        /// Chunked body; `chunkedDecoder` holds progress. → trailers.
        case chunked
        /// Trailer section after the last chunk; `scanner` holds progress. → head or awaitingUpgradeDecision.
        case trailers
        /// Response body that ends when the connection closes. → closed (via `finish()`).
        case closeDelimited(received: Int)
        /// `.upgraded` is due. → upgraded.
        case upgradePending
        /// A request asked to switch protocols; waits for `acceptUpgrade()` or `declineUpgrade()`.
        case awaitingUpgradeDecision
        /// Bytes are no longer HTTP/1.1. Terminal.
        case upgraded
        /// The peer closed; terminal.
        case closed
        /// A parse error occurred; terminal.
        case failed(HTTP1ParseError)
    }

    /// Whether this parser reads requests or responses.
    public let kind: Kind
    /// Limits and leniency.
    public let configuration: HTTP1ParserConfiguration
    private var state = State.head
    package var scanner: HTTP1HeadScanner
    private var chunkedDecoder = HTTP1ChunkedDecoder()
    /// Absolute stream offset of the first byte of the next `parse` call.
    public private(set) var bytesConsumed = 0
    /// Request methods whose responses are still due, oldest first (response parsers only).
    private var pendingMethods: [HTTPMethod] = []
    /// Whether the request being read asked for a protocol switch (CONNECT, or Upgrade in HTTP/1.1).
    private var requestWantsUpgrade = false
    /// Whether the last response head was interim (1xx), so the final response is still due and an end of stream
    /// now cuts a response short.
    var awaitsFinalResponse = false
    /// A response head found by `advance`, until `parse` hands it on.
    private var parsedHead: HTTP1ParserEvent?
    /// A request head found by `advance`, until `parse` hands it on or the owner takes it.
    private var parsedRequestHead: HTTPRequestHead?
    /// Trailers found by `advance`, likewise.
    private var parsedTrailers: HTTPHeaders?
    /// Whether response heads carry their fields and reason phrase. A load generator that only needs the status
    /// and the framing turns this off: the head then costs no allocation (fields are still validated).
    package var copiesResponseFields = true
    /// Whether the connection stays open after the last response head parsed (RFC 9112 §9.3), known even when
    /// `copiesResponseFields` is off.
    package internal(set) var lastResponseKeepsAlive = true
    /// The status code of the last response head parsed, so a caller can count it without copying the head.
    package internal(set) var lastResponseStatus = 0
    /// Whether the last request head parsed lets the connection stay open (as its `isKeepAlive` says), known from
    /// the parse without another pass over the fields.
    package internal(set) var lastRequestKeepsAlive = true
    /// Whether the last request head parsed had `100-continue` in an `Expect` field.
    package internal(set) var lastRequestExpectsContinue = false

    /// Creates a parser.
    /// - Parameters:
    ///   - kind: Requests or responses.
    ///   - configuration: Limits and leniency; strict by default.
    public init(kind: Kind, configuration: HTTP1ParserConfiguration = .strict) {
        self.kind = kind
        self.configuration = configuration
        self.scanner = HTTP1HeadScanner(mode: kind == .request ? .request : .response)
    }

    /// Gives back the storage kept for the next message (the field offsets of the last head),
    /// so that a connection idle between messages holds no parser memory. Call it only between
    /// messages; the next head allocates the storage again.
    public mutating func releaseIdleStorage() {
        scanner.releaseStorage()
        if pendingMethods.isEmpty { pendingMethods = [] }
    }

    /// Makes the parser as good as new for another stream, keeping the storage a fresh parser would allocate
    /// again (a server lends one parser to its busy connections in turn).
    package mutating func resetForNewStream() {
        // After a complete message the parser already waits for the next head: only the offsets start over.
        // (Matched as patterns: comparing these optionals with nil copied them first.)
        if case .head = state, scanner.scannedCount == 0, case .none = parsedHead, case .none = parsedRequestHead,
            case .none = parsedTrailers, pendingMethods.isEmpty, !requestWantsUpgrade, !awaitsFinalResponse
        {
            bytesConsumed = 0
            return
        }
        state = .head
        scanner.reset(mode: kind == .request ? .request : .response)
        chunkedDecoder = HTTP1ChunkedDecoder()
        bytesConsumed = 0
        // (Emptying an empty array with keepingCapacity would allocate one.)
        if !pendingMethods.isEmpty { pendingMethods.removeAll(keepingCapacity: true) }
        requestWantsUpgrade = false
        awaitsFinalResponse = false
        parsedHead = nil
        parsedRequestHead = nil
        parsedTrailers = nil
        lastResponseKeepsAlive = true
        lastResponseStatus = 0
    }

    /// Tells a response parser that a request with `method` was sent, so its response is framed correctly: no body
    /// after HEAD (RFC 9110 §9.3.2), a tunnel after a 2xx to CONNECT (RFC 9110 §9.3.6). Call once per request, in
    /// order; pipelined requests queue up. Without a queued method, GET framing is assumed.
    /// - Parameter method: The method of the request whose response comes next after those already queued.
    public mutating func expectResponse(to method: HTTPMethod) {
        pendingMethods.append(method)
    }

    /// Whether a request asking to switch protocols (CONNECT or Upgrade) has been read and the parser waits for
    /// `acceptUpgrade()` or `declineUpgrade()` before reading further; until then `parse` returns no events.
    public var isAwaitingUpgradeDecision: Bool {
        if case .awaitingUpgradeDecision = state { return true }
        return false
    }

    /// Body bytes of the current message that are certain to follow: the rest of a Content-Length body, or of the
    /// current chunk's data; 0 anywhere else (a head, chunk framing, a body that ends when the connection closes).
    /// A reader may wait for this many before it reads again without ever waiting past the message's end.
    public var bodyBytesStillDue: Int {
        switch state {
        case .fixedBody(let remaining): return remaining
        case .chunked: return chunkedDecoder.dataStillDue
        case .head, .trailers, .closeDelimited, .upgradePending, .awaitingUpgradeDecision, .upgraded, .closed, .failed:
            return 0
        }
    }

    /// Whether the stream switched protocols: the remaining bytes are not HTTP/1.1.
    public var isUpgraded: Bool {
        switch state {
        case .upgraded, .upgradePending: return true
        case .head, .fixedBody, .chunked, .trailers, .closeDelimited, .awaitingUpgradeDecision, .closed, .failed:
            return false
        }
    }

    /// The server switched protocols (sent 101, or 2xx to CONNECT): the next `parse` returns `.upgraded`.
    public mutating func acceptUpgrade() {
        guard isAwaitingUpgradeDecision else { return }
        state = .upgradePending
    }

    /// The server refused to switch protocols: parsing continues with the next HTTP/1.1 request.
    public mutating func declineUpgrade() {
        guard isAwaitingUpgradeDecision else { return }
        startNextMessage()
    }

    /// Parses `bytes`, the unconsumed input starting with its oldest byte.
    /// - Parameter bytes: Every byte received and not yet consumed.
    /// - Returns: How many leading bytes to drop, and the event found, if any (`nil`: need more bytes).
    /// - Throws: `HTTP1ParseError` with the fault's kind and absolute offset; the parser then stays failed.
    public mutating func parse(_ bytes: Span<UInt8>) throws(HTTP1ParseError) -> HTTP1ParseStep {
        try bytes.withUnsafeBufferPointer { (buffer) throws(HTTP1ParseError) -> HTTP1ParseStep in
            try parse(buffer)
        }
    }

    /// `parse` over a raw buffer, for the package's own connections and tools that already hold one; users
    /// call the `Span` form, so that no raw pointer crosses the public API (ARCHITECTURE.md's rule).
    /// - Parameter bytes: Every byte received and not yet consumed.
    /// - Returns: How many leading bytes to drop, and the event found, if any (`nil`: need more bytes).
    /// - Throws: `HTTP1ParseError` with the fault's kind and absolute offset; the parser then stays failed.
    package mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(HTTP1ParseError) -> HTTP1ParseStep {
        let step = try parseLean(bytes)
        switch step.kind {
        case .needMore: return HTTP1ParseStep(consumed: step.consumed, event: nil)
        case .head:
            let event = parsedRequestHead.take().map(HTTP1ParserEvent.requestHead) ?? parsedHead.take()
            return HTTP1ParseStep(consumed: step.consumed, event: event)
        case .body(let range): return HTTP1ParseStep(consumed: step.consumed, event: .body(range))
        case .end: return HTTP1ParseStep(consumed: step.consumed, event: .end(trailers: parsedTrailers.take()))
        case .upgraded: return HTTP1ParseStep(consumed: step.consumed, event: .upgraded)
        }
    }

    /// `parse` for a connection's hot path: the step is a plain value, and a head or trailers found wait in the
    /// parser until taken (`takeRequestHead`, `takeTrailers`), so no event holding them is copied on the way out.
    /// - Parameter bytes: Every byte received and not yet consumed.
    /// - Returns: How many leading bytes to drop, and what was found.
    /// - Throws: As `parse`.
    package mutating func parseLean(_ bytes: UnsafeBufferPointer<UInt8>) throws(HTTP1ParseError) -> HTTP1LeanStep {
        do {
            let step = try advance(bytes)
            bytesConsumed += step.consumed
            return step
        } catch {
            state = .failed(error)
            throw error
        }
    }

    /// The request head that `parseLean` reported with `.head`; call once, right after.
    package mutating func takeRequestHead() -> HTTPRequestHead {
        guard let head = parsedRequestHead.take() else {
            preconditionFailure("takeRequestHead without a request head parsed")
        }
        return head
    }

    /// The response head that `parseLean` reported with `.head`; call once, right after (nil for a request parser's).
    package mutating func takeResponseHead() -> HTTPResponseHead? {
        guard case .responseHead(let head)? = parsedHead.take() else { return nil }
        return head
    }

    /// The trailers of the message `parseLean` reported ended (nil if it had none).
    package mutating func takeTrailers() -> HTTPHeaders? {
        parsedTrailers.take()
    }

    /// Tells the parser the peer closed the connection.
    /// - Returns: `.end` if this completes a close-delimited body, else `nil`.
    /// - Throws: `.unexpectedEndOfStream` if a message was cut short, including a response stream that ends after
    ///   interim (1xx) responses only: their final response never came (RFC 9110 §15.2).
    public mutating func finish() throws(HTTP1ParseError) -> HTTP1ParserEvent? {
        switch state {
        case .failed(let error):
            throw error
        case .closeDelimited:
            state = .closed
            return .end(trailers: nil)
        case .head:
            if scanner.hasPartialSection || awaitsFinalResponse {
                let error = HTTP1ParseError(.unexpectedEndOfStream, at: bytesConsumed + scanner.scannedCount)
                state = .failed(error)
                throw error
            }
            state = .closed
            return nil
        case .fixedBody(let remaining) where remaining == 0:
            startNextMessage()
            state = .closed
            return .end(trailers: nil)
        case .trailers:
            let error = HTTP1ParseError(.unexpectedEndOfStream, at: bytesConsumed + scanner.scannedCount)
            state = .failed(error)
            throw error
        case .fixedBody, .chunked:
            let error = HTTP1ParseError(.unexpectedEndOfStream, at: bytesConsumed)
            state = .failed(error)
            throw error
        case .upgradePending, .awaitingUpgradeDecision, .upgraded, .closed:
            return nil
        }
    }

    private mutating func advance(_ bytes: UnsafeBufferPointer<UInt8>) throws(HTTP1ParseError) -> HTTP1LeanStep {
        var index = 0
        while true {
            switch state {
            case .head:
                let section = UnsafeBufferPointer(rebasing: bytes[index...])
                let outcome = try scanner.scan(
                    section, streamOffset: bytesConsumed + index, configuration: configuration)
                switch outcome {
                case .incomplete(let consumable):
                    scanner.dropLeading(consumable)
                    if consumable > 0 {
                        // Ignored empty lines: consume them and scan on from the request line.
                        index += consumable
                        continue
                    }
                    return HTTP1LeanStep(consumed: index, kind: .needMore)
                case .complete(let end):
                    // A request head waits as itself, not in an event: taking it back out of an enum cost a few
                    // hundred instructions a request.
                    if kind == .request {
                        parsedRequestHead = try makeRequestHead(section, streamOffset: bytesConsumed + index)
                    } else {
                        parsedHead = try makeHeadEvent(section, streamOffset: bytesConsumed + index)
                    }
                    return HTTP1LeanStep(consumed: index + end, kind: .head)
                }

            case .fixedBody(let remaining):
                if remaining == 0 {
                    finishMessage()
                    return HTTP1LeanStep(consumed: index, kind: .end)
                }
                let take = min(bytes.count - index, remaining)
                guard take > 0 else { return HTTP1LeanStep(consumed: index, kind: .needMore) }
                state = .fixedBody(remaining: remaining - take)
                return HTTP1LeanStep(consumed: index + take, kind: .body(index..<index + take))

            case .chunked:
                let outcome = try chunkedDecoder.decode(
                    bytes, from: index, streamOffset: bytesConsumed, configuration: configuration)
                // With `passesChunkedFraming`, the framing the decoder validated goes out as body bytes too.
                let raw = configuration.passesChunkedFraming
                switch outcome {
                case .needMore(let consumed):
                    if raw && consumed > index { return HTTP1LeanStep(consumed: consumed, kind: .body(index..<consumed)) }
                    return HTTP1LeanStep(consumed: consumed, kind: .needMore)
                case .data(let range):
                    return HTTP1LeanStep(
                        consumed: range.upperBound, kind: .body((raw ? index : range.lowerBound)..<range.upperBound))
                case .lastChunk(let end):
                    scanner.reset(mode: .trailers)
                    state = .trailers
                    if raw { return HTTP1LeanStep(consumed: end, kind: .body(index..<end)) }
                    index = end
                }

            case .trailers:
                let section = UnsafeBufferPointer(rebasing: bytes[index...])
                let outcome = try scanner.scan(
                    section, streamOffset: bytesConsumed + index, configuration: configuration)
                switch outcome {
                case .incomplete:
                    return HTTP1LeanStep(consumed: index, kind: .needMore)
                case .complete(let end):
                    parsedTrailers = scanner.fields.isEmpty ? nil : makeHeaders(section)
                    if configuration.passesChunkedFraming {
                        // The trailer section (its final CRLF included) as body bytes; `.end` comes next, as after a
                        // Content-Length body's last byte.
                        state = .fixedBody(remaining: 0)
                        return HTTP1LeanStep(consumed: index + end, kind: .body(index..<index + end))
                    }
                    finishMessage()
                    return HTTP1LeanStep(consumed: index + end, kind: .end)
                }

            case .closeDelimited(let received):
                var take = bytes.count - index
                guard take > 0 else { return HTTP1LeanStep(consumed: index, kind: .needMore) }
                if let maxBodySize = configuration.maxBodySize {
                    // Deliver up to the limit, then fail on the first byte beyond it, however the input is split.
                    guard received < maxBodySize else {
                        throw HTTP1ParseError(.bodyTooLarge, at: bytesConsumed + index)
                    }
                    take = min(take, maxBodySize - received)
                }
                state = .closeDelimited(received: received + take)
                return HTTP1LeanStep(consumed: index + take, kind: .body(index..<index + take))

            case .upgradePending:
                state = .upgraded
                return HTTP1LeanStep(consumed: index, kind: .upgraded)

            case .awaitingUpgradeDecision, .upgraded, .closed:
                return HTTP1LeanStep(consumed: index, kind: .needMore)

            case .failed(let error):
                throw error
            }
        }
    }

    /// Moves past a completed message.
    private mutating func finishMessage() {
        if kind == .request && requestWantsUpgrade {
            state = .awaitingUpgradeDecision
        } else {
            startNextMessage()
        }
    }

    private mutating func startNextMessage() {
        requestWantsUpgrade = false
        scanner.reset(mode: kind == .request ? .request : .response)
        state = .head
    }

    /// Sets the state for the body that follows a head.
    mutating func enterBody(_ framing: HTTP1BodyFraming) {
        switch framing {
        case .length(let length):
            state = .fixedBody(remaining: length)
        case .chunked:
            chunkedDecoder = HTTP1ChunkedDecoder()
            state = .chunked
        case .closeDelimited:
            state = .closeDelimited(received: 0)
        case .upgrade:
            state = .upgradePending
        case .interim:
            startNextMessage()
        }
    }

    /// Pops the method the current response answers (not for interim responses).
    mutating func dequeueRequestMethod() -> HTTPMethod {
        pendingMethods.isEmpty ? .get : pendingMethods.removeOldest()
    }

    /// The method the current response answers, without dequeuing it.
    var nextRequestMethod: HTTPMethod {
        pendingMethods.first ?? .get
    }

    /// Records that the request just parsed asked to switch protocols.
    mutating func noteUpgradeRequest(_ wantsUpgrade: Bool) {
        requestWantsUpgrade = wantsUpgrade
    }
}
