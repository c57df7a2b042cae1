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
        /// The response is complete: finish the body and release the connection.
        case completeRequest(reusable: Bool)
        /// Fail the request (and its body, if delivered) and close the connection.
        case failRequestAndClose(Failure, responseStarted: Bool)
        /// Close without a request to fail (the peer closed or misbehaved while idle).
        case closeIdle
    }

    private enum State: Hashable {
        /// No request. Valid transitions: to `.awaitingHead` (request started) or `.closed`.
        case idle
        /// A request is being sent or awaits its response head. Valid transitions: to
        /// `.receivingBody` (head), `.idle` (a bodyless response ended), or `.closed`.
        case awaitingHead(requestKeepAlive: Bool, sawResponseBytes: Bool)
        /// The response head was delivered; body bytes flow. Valid transitions: to `.idle` or `.closed`.
        case receivingBody(keepAlive: Bool)
        /// Terminal.
        case closed
    }

    private var state = State.idle
    /// Whether the last byte of the current request has been handed to the kernel.
    private var requestFullyWritten = false

    /// Whether a request is in flight.
    var isBusy: Bool {
        switch state {
        case .awaitingHead, .receivingBody: true
        case .idle, .closed: false
        }
    }

    /// Whether the connection is closed.
    var isClosed: Bool { state == .closed }

    /// A request starts; `keepAlive` is false when it carries `Connection: close`.
    mutating func requestStarted(keepAlive: Bool) {
        guard state == .idle else { preconditionFailure("request started on a connection in state \(state)") }
        state = .awaitingHead(requestKeepAlive: keepAlive, sawResponseBytes: false)
        requestFullyWritten = false
    }

    /// The request's last byte was written.
    mutating func requestWritten() -> Action {
        requestFullyWritten = true
        return .none
    }

    /// Bytes arrived from the peer.
    mutating func bytesReceived() -> Action {
        switch state {
        case .idle:
            // A server has nothing to say to an idle connection; unsolicited bytes mean it is
            // out of sync (or about to close): never reuse it.
            state = .closed
            return .closeIdle
        case .awaitingHead(let keepAlive, _):
            state = .awaitingHead(requestKeepAlive: keepAlive, sawResponseBytes: true)
            return .none
        case .receivingBody, .closed:
            return .none
        }
    }

    /// The final (non-1xx) response head was parsed.
    mutating func responseHeadReceived(keepAlive responseKeepAlive: Bool) -> Action {
        guard case .awaitingHead(let requestKeepAlive, _) = state else { preconditionFailure("response head in state \(state)") }
        state = .receivingBody(keepAlive: requestKeepAlive && responseKeepAlive)
        return .deliverHead
    }

    /// The response ended per its framing. `trailingBytes` says whether more bytes followed it
    /// in the same read: a server has nothing more to say until the next request, so those bytes
    /// are a framing anomaly, and reusing the connection would hand them to the next request.
    mutating func responseEnded(trailingBytes: Bool) -> Action {
        guard case .receivingBody(let keepAlive) = state else { preconditionFailure("response end in state \(state)") }
        // A response that ends while the request is still being written (an early 413, say)
        // leaves the request stream unfinished: the connection cannot be reused either.
        let reusable = keepAlive && requestFullyWritten && !trailingBytes
        state = reusable ? .idle : .closed
        return .completeRequest(reusable: reusable)
    }

    /// The peer sent end of stream. `parserFinished` is true when the parser accepted the EOF
    /// as the end of a close-delimited body (it then also reported `responseEnded`).
    mutating func endOfStream() -> Action {
        switch state {
        case .idle:
            state = .closed
            return .closeIdle
        case .awaitingHead(_, let sawBytes):
            state = .closed
            return .failRequestAndClose(sawBytes ? .closedInHead : .closedBeforeResponse, responseStarted: false)
        case .receivingBody:
            state = .closed
            return .failRequestAndClose(.truncatedBody, responseStarted: true)
        case .closed:
            return .none
        }
    }

    /// A parse error, an I/O error, a timeout, an upgrade or an abandoned body.
    mutating func failed(_ failure: Failure) -> Action {
        switch state {
        case .idle:
            state = .closed
            return .closeIdle
        case .awaitingHead:
            state = .closed
            return .failRequestAndClose(failure, responseStarted: false)
        case .receivingBody:
            state = .closed
            return .failRequestAndClose(failure, responseStarted: true)
        case .closed:
            return .none
        }
    }
}
