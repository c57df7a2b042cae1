import Synchronization

/// The raw byte stream a proxy opened with a 2xx answer to `CONNECT` (RFC 9110 §9.3.6): what is
/// written goes to the far end as is, what the far end sends is read back, with no HTTP framing.
///
/// The caller owns it: the connection left the client's pool when the tunnel opened and is never
/// used for HTTP again. `close()` ends it; dropping the last reference closes it too.
///
/// ```swift
/// let answer = try await client.connect(to: "example.org:443", via: "http://proxy.local:3128")
/// guard let tunnel = answer.tunnel else { throw ProxyRefused(answer.status) }
/// try await tunnel.write(ByteBuffer(string: "hello"))
/// while let bytes = try await tunnel.read() { … }
/// await tunnel.close()
/// ```
public final class HTTPTunnel: Sendable {
    private let endpoint: LoopBound<TunnelEndpoint>
    private let incoming: BodyChannel

    /// Takes over `stream` on its loop; `leftover` are bytes that came after the proxy's head.
    init(stream: any ByteStream, leftover: ByteBuffer) {
        let endpoint = TunnelEndpoint(stream: stream, leftover: leftover)
        self.endpoint = LoopBound(endpoint, loop: stream.eventLoop)
        incoming = endpoint.incoming
    }

    deinit {
        let endpoint = self.endpoint
        endpoint.loop.execute { endpoint.value.close() }
    }

    /// The next bytes from the far end, in order; nil once it has ended its side (it may still
    /// read what is written). Reading slowly pauses the socket (back-pressure), so memory stays flat.
    ///
    /// - Throws: `HTTPClientError` when the connection failed (reset, closed by `close()`).
    public func read() async throws(HTTPClientError) -> ByteBuffer? {
        do {
            return try await incoming.next()
        } catch let error as HTTPClientError {
            throw error
        } catch {
            throw HTTPClientError(.cancelled, "reading the tunnel stopped: \(error)")
        }
    }

    /// Sends `bytes` to the far end; returns once the socket has room for more (at most 256 KiB wait
    /// in memory).
    ///
    /// - Throws: `HTTPClientError` (`.writeFailed`) when the tunnel is closed or the write failed.
    public func write(_ bytes: ByteBuffer) async throws(HTTPClientError) {
        let endpoint = self.endpoint
        let result = await withCheckedContinuation { continuation in
            endpoint.loop.execute { endpoint.value.write(bytes, continuation: continuation) }
        }
        try result.get()
    }

    /// Sends end of stream after what was written, keeping the reading side open (a half-close).
    public func finishWriting() async {
        let endpoint = self.endpoint
        try? await endpoint.loop.submit { endpoint.value.finishWriting() }
    }

    /// Closes the connection at once; reads and writes after it fail.
    public func close() async {
        let endpoint = self.endpoint
        try? await endpoint.loop.submit { endpoint.value.close() }
    }
}

/// The tunnel's side on the loop: the stream's delegate, which moves received bytes into the
/// channel `HTTPTunnel.read()` takes them from, and writes with the same watermark as uploads.
final class TunnelEndpoint: ByteStreamDelegate {
    let incoming = BodyChannel()
    private let stream: any ByteStream
    private var pausedReading = false
    private var drainWaiters: [CheckedContinuation<Result<Void, HTTPClientError>, Never>] = []

    init(stream: any ByteStream, leftover: ByteBuffer) {
        self.stream = stream
        // Weak: the endpoint holds the channel, so hooks holding the endpoint would be a cycle.
        let box = LoopBound(WeakEndpoint(self), loop: stream.eventLoop)
        incoming.setProducerHooks(
            onDemand: { box.loop.execute { box.value.endpoint?.resumeReading() } },
            // A reader that gave up (its task was cancelled) leaves a tunnel no one can read: close it.
            onCancel: { box.loop.execute { box.value.endpoint?.close() } }
        )
        stream.delegate = self
        if leftover.readableBytes > 0 { deliver(leftover) }
        stream.setReadingEnabled(!pausedReading)
    }

    func write(_ bytes: ByteBuffer, continuation: CheckedContinuation<Result<Void, HTTPClientError>, Never>) {
        guard stream.isOpen else {
            continuation.resume(returning: .failure(HTTPClientError(.writeFailed, "the tunnel is closed")))
            return
        }
        if bytes.readableBytes > 0 { stream.write([bytes]) }
        if stream.pendingWriteBytes > HTTP1ClientConnection.writeHighWatermark {
            drainWaiters.append(continuation)
        } else {
            continuation.resume(returning: .success(()))
        }
    }

    func finishWriting() {
        if stream.isOpen { stream.shutdownWrite() }
    }

    func close() {
        if stream.isOpen { stream.close(error: nil) }
    }

    private func deliver(_ bytes: ByteBuffer) {
        if !incoming.yield(bytes) {
            pausedReading = true
            stream.setReadingEnabled(false)
        }
    }

    private func resumeReading() {
        guard pausedReading, stream.isOpen else { return }
        pausedReading = false
        stream.setReadingEnabled(true)
    }

    func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer) {
        let bytes = buffer.slice(at: 0, length: buffer.readableBytes)
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        deliver(bytes)
    }

    func streamDidReachEnd(_ stream: any ByteStream) {
        incoming.finish()
    }

    func streamDidDrainWrites(_ stream: any ByteStream) {
        let waiters = drainWaiters
        drainWaiters.removeAll()
        for waiter in waiters { waiter.resume(returning: .success(())) }
    }

    func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?) {
        let failure: HTTPClientError =
            if let ioError = error as? IOError {
                HTTPClientError(
                    ioError.errno == .connectionReset || ioError.errno == .brokenPipe ? .connectionReset : .connectionClosed,
                    "the tunnel failed: \(ioError)", ioError: ioError)
            } else if let error {
                HTTPClientError(.connectionClosed, "the tunnel failed: \(error)", securityError: error)
            } else {
                HTTPClientError(.connectionClosed, "the tunnel is closed")
            }
        // After the far end's end of stream the channel is finished already and keeps that ending.
        incoming.fail(failure)
        let waiters = drainWaiters
        drainWaiters.removeAll()
        for waiter in waiters {
            waiter.resume(returning: .failure(HTTPClientError(.writeFailed, failure.detail, ioError: failure.ioError)))
        }
    }
}

/// A stream a proxy turned into a tunnel (a 2xx to `CONNECT`), between the connection that opened it and its next
/// owner: an `HTTPTunnel` for `HTTPClient.connect(to:via:)`, or TLS and HTTP to the origin for a pool of tunnels.
/// The stream has no delegate and keeps what it reads. Released untaken, it closes the stream.
final class OpenedTunnel: Sendable {
    private let stream: LoopBound<any ByteStream>
    /// Bytes that came after the proxy's head.
    let leftover: ByteBuffer
    private let taken = Atomic<Bool>(false)

    init(stream: LoopBound<any ByteStream>, leftover: ByteBuffer) {
        self.stream = stream
        self.leftover = leftover
    }

    /// The stream, once: nil if it was taken already.
    func take() -> LoopBound<any ByteStream>? {
        taken.exchange(true, ordering: .acquiringAndReleasing) ? nil : stream
    }

    /// An `HTTPTunnel` over the stream, made on its loop.
    /// - Throws: `HTTPClientError` when the loop has shut down or the stream was taken.
    func makeHTTPTunnel() async throws(HTTPClientError) -> HTTPTunnel {
        guard let stream = take() else { throw HTTPClientError(.connectionClosed, "the tunnel was handed over already") }
        let leftover = self.leftover
        do {
            return try await stream.loop.submit { HTTPTunnel(stream: stream.value, leftover: leftover) }
        } catch {
            throw HTTPClientError(.shutDown, "the event loop shut down")
        }
    }

    deinit {
        guard !taken.load(ordering: .acquiring) else { return }
        let stream = self.stream
        stream.loop.execute { if stream.value.isOpen { stream.value.close(error: nil) } }
    }
}

/// A weak reference to an endpoint, for the channel's hooks (carried in a `LoopBound`).
private final class WeakEndpoint {
    weak var endpoint: TunnelEndpoint?
    init(_ endpoint: TunnelEndpoint) { self.endpoint = endpoint }
}
