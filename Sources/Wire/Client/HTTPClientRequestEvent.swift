import Synchronization

/// Something that happened to one request, told to its `HTTPClientRequest.observer` as it happens: what a manager
/// layer needs for upload progress, task delegates and logging.
public enum HTTPClientRequestEvent: Sendable {
    /// More of the body was handed to the socket: `total` bytes of it so far on this attempt, of `expected` when the
    /// length is known. A retry or a redirect that sends the body again starts again from 0.
    case bodyBytesSent(total: Int, expected: Int?)
    /// The final response head arrived (interim 1xx heads are not told).
    case responseHead(HTTPResponseHead)
    /// A redirect was followed: the exchange that answered with it.
    case redirect(HTTPClientMetrics.RedirectHop)
    /// The request is sent again on a fresh connection after `error` (a pooled connection the server had closed).
    case retry(attempt: Int, after: HTTPClientError)
    /// Bytes written to the connection, as HTTP wrote them (in plaintext: TLS encrypts below): the request head as
    /// one piece, then the body in the pieces it was written in, chunked framing included. Told only when the
    /// request's `observesBytes` is set.
    case bytesWritten(ByteBuffer)
    /// Bytes read from the connection for this request, as they came (in plaintext): response heads, interim ones
    /// included, then the body with its framing; one piece per read. Told only when `observesBytes` is set.
    case bytesRead(ByteBuffer)
}

/// One request's observer, with what it has been told: the body bytes counted per attempt.
final class RequestObservation: Sendable {
    let observer: @Sendable (HTTPClientRequestEvent, HTTPClientMetrics) -> Void
    let metrics: HTTPClientMetrics
    /// What the connection tells of every byte, when the request observes bytes; nil otherwise, and then the
    /// connection spends nothing on it.
    let tap: HTTP1ClientConnection.ByteTap?
    private let sent = Atomic<Int>(0)

    init(
        observer: @escaping @Sendable (HTTPClientRequestEvent, HTTPClientMetrics) -> Void, metrics: HTTPClientMetrics,
        observesBytes: Bool = false
    ) {
        self.observer = observer
        self.metrics = metrics
        if observesBytes {
            tap = { @Sendable (sent: Bool, bytes: ByteBuffer) in
                let event: HTTPClientRequestEvent = sent ? .bytesWritten(bytes) : .bytesRead(bytes)
                observer(event, metrics)
            }
        } else {
            tap = nil
        }
    }

    /// Tells `event`.
    // Out of line, the event made inside it: inlined into an async caller, each event's value was a slot of that
    // caller's frame, for every request, observed or not.
    @inline(never)
    func tell(_ event: @autoclosure () -> HTTPClientRequestEvent) {
        observer(event(), metrics)
    }

    /// A new attempt sends the body from its start.
    func attemptStarted() {
        sent.store(0, ordering: .relaxed)
    }

    /// `count` more body bytes went to the socket.
    func bodySent(_ count: Int, expected: Int?) {
        guard count > 0 else { return }
        let total = sent.add(count, ordering: .relaxed).newValue
        tell(.bodyBytesSent(total: total, expected: expected))
    }
}
