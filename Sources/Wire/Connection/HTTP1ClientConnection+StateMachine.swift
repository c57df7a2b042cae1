/// The request lifecycle of one client connection, as a value type: events in, actions out.
///
/// Framing itself is the parser's job; this machine decides what each framing event means for
/// the request and the connection: deliver, finish, fail, retry, pool or close. Its rule for
/// pooling is strict: a connection goes back to the pool only after a complete, well-framed
/// response to a completely written request on a keep-alive exchange, so the next request can
/// never read a previous response's leftover bytes.
struct HTTP1ClientConnectionStateMachine {
    /// Why a request failed, as far as the connection can tell.
    enum Failure: Hashable, Sendable {
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
    }

    /// What the shell must do.
    enum Action: Hashable, Sendable {
        /// Nothing.
        case none
        /// Hand the response head to the request; `keepAlive` says whether the exchange allows reuse.
        case deliverHead
        /// The oldest request's response is complete: finish its body and release it. When not
        /// `reusable` the connection closes, and requests pipelined behind it fail as never answered.
        case completeRequest(reusable: Bool)
        /// Fail the oldest request (and its body, if delivered) and close the connection;
        /// requests pipelined behind it fail as never answered.
        case failRequestAndClose(Failure, responseStarted: Bool)
        /// Close without a request to fail (the peer closed or misbehaved while idle).
        case closeIdle
    }

    /// One request in flight, oldest first.
    private struct InFlight: Hashable {
        /// False when the request carries `Connection: close`.
        var keepAlive: Bool
        /// Whether its last byte has been handed to the stream.
        var fullyWritten = false
    }

    /// Where the oldest request's response stands.
    private enum Phase: Hashable {
        /// Its response head has not been parsed yet.
        case awaitingHead(sawResponseBytes: Bool)
        /// Its response head was delivered; body bytes flow.
        case receivingBody(keepAlive: Bool)
    }

    /// Requests in flight, oldest first: the first one owns the response being parsed. More than
    /// one only when requests are pipelined.
    private var inFlight: [InFlight] = []
    private var phase = Phase.awaitingHead(sawResponseBytes: false)
    /// Terminal.
    private(set) var isClosed = false

    /// Whether a request is in flight.
    var isBusy: Bool { !inFlight.isEmpty }

    /// The number of requests in flight.
    var inFlightCount: Int { inFlight.count }

    /// Whether a request may be started now: the connection is open, and every request already in
    /// flight is keep-alive and completely written (pipelined requests never interleave, and never
    /// follow one that ends the connection).
    var acceptsRequest: Bool {
        guard !isClosed else { return false }
        if case .receivingBody(keepAlive: false) = phase, !inFlight.isEmpty { return false }
        return inFlight.allSatisfy { $0.keepAlive && $0.fullyWritten }
    }

    /// A request starts; `keepAlive` is false when it carries `Connection: close`.
    ///
    /// The shell asks `acceptsRequest` first (the pool leases only usable connections, and the shell refuses a
    /// request on one that closed meanwhile), so a start it refused is a bug in Wire, not something a peer causes:
    /// that alone traps.
    mutating func requestStarted(keepAlive: Bool) {
        guard acceptsRequest else { preconditionFailure("request started on a connection that cannot take one: \(inFlight), \(phase), closed: \(isClosed)") }
        if inFlight.isEmpty { phase = .awaitingHead(sawResponseBytes: false) }
        inFlight.append(InFlight(keepAlive: keepAlive))
    }

    /// The newest request's last byte was written (only the newest can still be writing).
    mutating func requestWritten() -> Action {
        if !inFlight.isEmpty { inFlight[inFlight.count - 1].fullyWritten = true }
        return .none
    }

    /// Bytes arrived from the peer.
    mutating func bytesReceived() -> Action {
        guard !isClosed else { return .none }
        guard !inFlight.isEmpty else {
            // A server has nothing to say to an idle connection; unsolicited bytes mean it is
            // out of sync (or about to close): never reuse it.
            isClosed = true
            return .closeIdle
        }
        if case .awaitingHead = phase { phase = .awaitingHead(sawResponseBytes: true) }
        return .none
    }

    /// The final (non-1xx) response head of the oldest request was parsed.
    mutating func responseHeadReceived(keepAlive responseKeepAlive: Bool) -> Action {
        guard !isClosed, let oldest = inFlight.first, case .awaitingHead = phase else {
            // A head nobody asked for, or a second one: the exchange is out of step with the bytes, so the
            // connection is finished (never reused) and its request, if any, fails.
            return failed(.protocolOrIOError)
        }
        phase = .receivingBody(keepAlive: oldest.keepAlive && responseKeepAlive)
        return .deliverHead
    }

    /// The oldest request's response ended per its framing. `trailingBytes` says whether more
    /// bytes followed it in the same read: with nothing pipelined behind it, the server has nothing
    /// more to say until the next request, so those bytes are a framing anomaly, and reusing the
    /// connection would hand them to the next request. Behind a pipelined request they are its
    /// response.
    mutating func responseEnded(trailingBytes: Bool) -> Action {
        guard !isClosed, let oldest = inFlight.first, case .receivingBody(let keepAlive) = phase else {
            // An end without a head under way: out of step, as above.
            return failed(.protocolOrIOError)
        }
        // A response that ends while the request is still being written (an early 413, say)
        // leaves the request stream unfinished: the connection cannot be reused either.
        let reusable = keepAlive && oldest.fullyWritten && !(trailingBytes && inFlight.count == 1)
        inFlight.removeFirst()
        phase = .awaitingHead(sawResponseBytes: false)
        if !reusable { isClosed = true }
        return .completeRequest(reusable: reusable)
    }

    /// The peer sent end of stream. When the parser accepted the EOF as the end of a
    /// close-delimited body it reported `responseEnded` first.
    mutating func endOfStream() -> Action {
        guard !isClosed else { return .none }
        isClosed = true
        guard !inFlight.isEmpty else { return .closeIdle }
        switch phase {
        case .awaitingHead(let sawBytes):
            return .failRequestAndClose(sawBytes ? .closedInHead : .closedBeforeResponse, responseStarted: false)
        case .receivingBody:
            return .failRequestAndClose(.truncatedBody, responseStarted: true)
        }
    }

    /// The oldest request was a CONNECT answered with 2xx: the connection is a tunnel now, owned by
    /// that request, and nothing more happens here (requests behind it fail as never answered).
    /// - Returns: False, changing nothing, when no response head is under way to open it (the
    ///   connection closed meanwhile): the shell then fails the request instead of handing over.
    mutating func tunnelOpened() -> Bool {
        guard !isClosed, !inFlight.isEmpty, case .receivingBody = phase else { return false }
        isClosed = true
        inFlight.removeFirst()
        phase = .awaitingHead(sawResponseBytes: false)
        return true
    }

    /// A parse error, an I/O error, a timeout, an upgrade or an abandoned body.
    mutating func failed(_ failure: Failure) -> Action {
        guard !isClosed else { return .none }
        isClosed = true
        guard !inFlight.isEmpty else { return .closeIdle }
        switch phase {
        case .awaitingHead:
            return .failRequestAndClose(failure, responseStarted: false)
        case .receivingBody:
            return .failRequestAndClose(failure, responseStarted: true)
        }
    }
}
