/// Where a handler writes its response: a head and a whole body in one call, or a head then a streamed body.
///
/// ```swift
/// try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "hi"))
/// // or streamed: chunked for HTTP/1.1 unless the head has a Content-Length
/// try await response.writeHead(HTTPResponseHead(status: .ok))
/// for try await chunk in source { try await response.write(chunk) }
/// try await response.end()
/// ```
///
/// The server adds `Content-Length` or `Transfer-Encoding`, `Connection`, `Date` and (if configured) `Server`. For
/// a HEAD request no body bytes are sent, but a `Content-Length` is kept. Writes return once the bytes are queued;
/// they wait while more than 256 KiB are queued, so a slow client slows its handler instead of filling memory.
/// Called from the handler's task (which runs on the connection's loop), a write costs no thread hop.
public struct HTTPResponseWriter: Sendable {
    private let connection: LoopBound<HTTPServerConnection>
    private let exchangeID: UInt64

    init(connection: LoopBound<HTTPServerConnection>, exchangeID: UInt64) {
        self.connection = connection
        self.exchangeID = exchangeID
    }

    /// Writes a whole response: the head and `body`, in one write when the body is small.
    /// - Parameters:
    ///   - head: The status and fields; `Content-Length` is set from `body`.
    ///   - body: The body bytes.
    /// - Throws: `HTTPServerError` if a response was already started, the head is unsafe, or the connection closed.
    public func respond(_ head: HTTPResponseHead, body: ByteBuffer = ByteBuffer()) async throws {
        try await send(.whole(head, body))
    }

    /// Writes a response whose body is `body`, streamed as it comes.
    /// - Parameters:
    ///   - head: The status and fields; with a `Content-Length` the body must match it, otherwise it is chunked.
    ///   - body: The body's chunks.
    /// - Throws: `HTTPServerError`, or what the sequence throws.
    public func respond<Body: AsyncSequence>(_ head: HTTPResponseHead, body: Body) async throws
    where Body.Element == ByteBuffer {
        try await writeHead(head)
        for try await chunk in body { try await write(chunk) }
        try await end()
    }

    /// Writes the response head; the body follows with `write(_:)` and `end(trailers:)`.
    /// - Parameter head: The status and fields. With a `Content-Length` the body must have that length; without
    ///   one the body is chunked (HTTP/1.1 clients) or ends with the connection (HTTP/1.0 clients).
    /// - Throws: `HTTPServerError` if a head was already written, the head is unsafe, or the connection closed.
    public func writeHead(_ head: HTTPResponseHead) async throws {
        try await send(.head(head))
    }

    /// Writes body bytes.
    /// - Parameter chunk: The bytes.
    /// - Throws: `HTTPServerError` before the head, after the end, past the `Content-Length`, or once closed.
    public func write(_ chunk: ByteBuffer) async throws {
        try await send(.body(chunk))
    }

    /// Ends the body.
    /// - Parameter trailers: Trailer fields, sent only with a chunked body.
    /// - Throws: `HTTPServerError` if the body is shorter than its `Content-Length`, or the connection closed.
    public func end(trailers: HTTPHeaders? = nil) async throws {
        try await send(.end(trailers))
    }

    private func send(_ part: HTTPServerConnection.ResponsePart) async throws {
        let connection = self.connection
        let id = exchangeID
        if connection.loop.inEventLoop {
            // The usual case: the handler's task runs on the connection's loop.
            if try connection.value.writeResponsePart(part, exchangeID: id) {
                try await withCheckedThrowingContinuation { continuation in
                    connection.value.waitForDrain(exchangeID: id, continuation)
                }
            }
            return
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            connection.loop.execute {
                do {
                    if try connection.value.writeResponsePart(part, exchangeID: id) {
                        connection.value.waitForDrain(exchangeID: id, continuation)
                    } else {
                        continuation.resume()
                    }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Tells the connection the handler is done; runs on the handler's task.
    func handlerFinished(error: (any Error)?) {
        let connection = self.connection
        let id = exchangeID
        if connection.loop.inEventLoop {
            connection.value.handlerFinished(exchangeID: id, error: error)
        } else {
            connection.loop.execute { connection.value.handlerFinished(exchangeID: id, error: error) }
        }
    }
}
