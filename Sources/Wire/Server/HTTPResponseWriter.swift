/// Where a handler writes its response: a head and a whole body in one call, or a head then a streamed body.
///
/// ```swift
/// try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "hi"))
/// // or streamed: chunked for HTTP/1.1 unless the head has a Content-Length
/// try await response.writeHead(HTTPResponseHead(status: .ok))
/// for try await chunk in source { try await response.write(chunk) }
/// try await response.end()
/// // or a file: the kernel sends it (sendfile) on plain connections
/// try await response.respond(HTTPResponseHead(status: .ok), file: try RegularFile(path: path).region())
/// ```
///
/// The server adds `Content-Length` or `Transfer-Encoding`, `Connection`, `Date` and (if configured) `Server`. For
/// a HEAD request no body bytes are sent, but a `Content-Length` is kept. Writes return once the bytes are queued;
/// they wait while more than 256 KiB are queued, so a slow client slows its handler instead of filling memory.
/// Called from the handler's task (which runs on the connection's loop), a write costs no thread hop.
public struct HTTPResponseWriter: Sendable {
    private let connection: LoopBound<HTTPServerConnection>
    private let exchangeID: UInt64
    /// Whether the connection's stream sends file regions itself; otherwise the writer reads them.
    private let sendsFiles: Bool

    /// The read size for file bodies on connections that cannot send files (TLS): one read blocks the loop no
    /// longer than this many bytes take to copy from the page cache.
    static let fileChunkSize = 64 * 1024

    init(connection: LoopBound<HTTPServerConnection>, exchangeID: UInt64, sendsFiles: Bool) {
        self.connection = connection
        self.exchangeID = exchangeID
        self.sendsFiles = sendsFiles
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

    /// Writes body bytes from a file.
    ///
    /// On a plain connection the kernel sends them from the page cache (`sendfile(2)`), never copying them into the
    /// process; the call returns once they are nearly all sent. On a TLS connection, which must encrypt them, the file
    /// is read 64 KiB at a time on the connection's loop and each piece written like `write(_:)`'s bytes; nothing is read
    /// for a response that takes no body (a HEAD request's, a 304).
    /// - Parameter region: The bytes; the region keeps its file open until they are sent or the connection closes.
    /// - Throws: `HTTPServerError` as `write(_:)` does; `IOError` from reading the file, or `FileTruncatedError`
    ///   when it ends before the region does (on a plain connection that closes the connection instead).
    public func write(_ region: FileRegion) async throws {
        guard region.count > 0 else { return }
        if sendsFiles {
            try await send(.file(region))
            return
        }
        // A response that takes no body (HEAD, 304) would drop every piece: read none of the file.
        if await dropsBody() { return }
        var offset = region.offset
        let end = region.offset + region.count
        while offset < end {
            try Task.checkCancellation()
            let chunk = try region.file.read(at: offset, upTo: min(Self.fileChunkSize, end - offset))
            guard chunk.readableBytes > 0 else { throw FileTruncatedError(path: region.file.path, offset: offset) }
            try await write(chunk)
            offset += chunk.readableBytes
        }
    }

    /// Writes a whole response whose body is a region of a file (see `write(_:)` for how it is sent).
    /// - Parameters:
    ///   - head: The status and fields; `Content-Length` is set to the region's size.
    ///   - region: The body.
    /// - Throws: As `writeHead(_:)`, `write(_:)` and `end(trailers:)`.
    public func respond(_ head: HTTPResponseHead, file region: FileRegion) async throws {
        var head = head
        head.headers.replaceOrAdd(name: "Content-Length", value: String(region.count))
        try await writeHead(head)
        try await write(region)
        try await end()
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

    /// Whether the response takes no body (HEAD, 304), asked on the connection's loop; false once the exchange is
    /// over (the next write then throws).
    private func dropsBody() async -> Bool {
        let connection = self.connection
        let id = exchangeID
        if connection.loop.inEventLoop { return connection.value.dropsBody(exchangeID: id) }
        return (try? await connection.loop.submit { connection.value.dropsBody(exchangeID: id) }) ?? false
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
