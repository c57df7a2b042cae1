extension HTTPServerConnection {
    /// A piece of a response, as a writer hands it to the connection.
    enum ResponsePart: Sendable {
        /// A head and a whole body, sent in one write.
        case whole(HTTPResponseHead, ByteBuffer)
        /// A head; the body follows in `.body` parts.
        case head(HTTPResponseHead)
        /// Body bytes.
        case body(ByteBuffer)
        /// Body bytes from a file, for a stream that sends files itself (`FileRegionStream`).
        case file(FileRegion)
        /// The end of the body, with trailers for a chunked one.
        case end(HTTPHeaders?)
    }

    /// Bodies up to this size are copied behind the head so head and body leave in one buffer; larger ones are
    /// gathered into the same `sendmsg(2)` without a copy.
    static let coalescingLimit = 16 * 1024

    /// Writes a part of the response of exchange `id`.
    /// - Returns: Whether the writer should wait for the socket to drain before writing more.
    /// - Throws: `HTTPServerError` for a write out of order, a body that does not match its length, an unsafe head,
    ///   or an exchange that is over.
    func writeResponsePart(_ part: ResponsePart, exchangeID id: UInt64) throws(HTTPServerError) -> Bool {
        guard let current = parserSlot?.exchange, current.id == id, stream.isOpen else {
            throw HTTPServerError(.connectionClosed, detail: "the exchange is over")
        }
        switch part {
        case .whole(let head, let body):
            try writeWhole(head, body: body, exchange: current)
        case .head(let head):
            try writeHead(head, exchange: current)
        case .body(let chunk):
            try writeBody(chunk, exchange: current)
        case .file(let region):
            try writeFile(region, exchange: current)
        case .end(let trailers):
            try writeEnd(trailers: trailers, exchange: current)
        }
        return stream.pendingWriteBytes > Self.writeHighWatermark
    }

    /// Whether exchange `id`'s response takes no body (a HEAD request's, a 304's), so that body bytes written to it
    /// are dropped: a writer that would have to produce them (by reading a file) need not.
    func dropsBody(exchangeID id: UInt64) -> Bool {
        guard let current = parserSlot?.exchange, current.id == id else { return false }
        return current.framing == .bodyless
    }

    /// Writes a handler's immediate response to exchange `id`: `writeResponsePart(.whole(...))` without wrapping
    /// the response in a part, which would copy its head.
    func writeImmediateResponse(_ response: HTTPServerResponse, exchangeID id: UInt64) throws(HTTPServerError) {
        guard let current = parserSlot?.exchange, current.id == id, stream.isOpen else {
            throw HTTPServerError(.connectionClosed, detail: "the exchange is over")
        }
        try writeWhole(response.head, body: response.body, exchange: current)
    }

    private func writeWhole(_ head: HTTPResponseHead, body: ByteBuffer, exchange: ExchangeContext) throws(HTTPServerError) {
        guard exchange.framing == .notStarted else { throw Self.orderError(exchange.framing) }
        let bodyless = exchange.isHeadRequest || head.status.forbidsContent
        let declared = try Self.declaredLength(head)
        let framing: HTTP1Serializer.BodyFraming
        if head.status.forbidsContent {
            framing = .asInHeaders
        } else if exchange.isHeadRequest && declared != nil {
            // A HEAD response announces the length a GET would have (RFC 9110 §9.3.2) and sends nothing.
            framing = .asInHeaders
        } else {
            if let declared, declared != body.readableBytes {
                throw HTTPServerError(.bodyLengthMismatch, detail: "Content-Length \(declared), body \(body.readableBytes)")
            }
            framing = .contentLength(body.readableBytes)
        }
        try encodeHead(head, framing: framing, allowsKeepAlive: true)
        exchange.observer?.responseHeadWritten(head)
        if bodyless || body.readableBytes == 0 {
            writeScratch()
        } else if body.readableBytes <= Self.coalescingLimit {
            context.scratch.writeBuffer(body)
            writeScratch()
        } else {
            // Too big to copy behind the head: both go out in one gathering write.
            stream.write([context.scratch, body])
        }
        self.parserSlot?.exchange?.framing = .ended
        tellObserverCompleted()
        perform(machine.responseEnded())
    }

    private func writeHead(_ head: HTTPResponseHead, exchange: ExchangeContext) throws(HTTPServerError) {
        guard exchange.framing == .notStarted else { throw Self.orderError(exchange.framing) }
        let declared = try Self.declaredLength(head)
        let framing: ResponseFraming
        let serialization: HTTP1Serializer.BodyFraming
        if exchange.isHeadRequest || head.status.forbidsContent {
            framing = .bodyless
            serialization = .asInHeaders
        } else if let declared {
            framing = .length(remaining: declared)
            serialization = .contentLength(declared)
        } else if exchange.requestVersion >= .http1_1 {
            framing = .chunked
            serialization = .chunked
        } else {
            // An HTTP/1.0 client cannot read chunked: the body ends with the connection (RFC 9112 §6.3 rule 8).
            framing = .untilClose
            serialization = .asInHeaders
        }
        try encodeHead(head, framing: serialization, allowsKeepAlive: framing != .untilClose)
        exchange.observer?.responseHeadWritten(head)
        writeScratch()
        self.parserSlot?.exchange?.framing = framing
    }

    /// How body bytes go out under the exchange's framing: not at all (a bodyless response), as they are, or as one
    /// chunk.
    private enum BodyWrite { case skip, raw, chunk }

    /// Checks that `count` body bytes may be written now, counts them against a declared length, and says how they
    /// go out; shared by byte and file bodies so that both follow one set of framing rules.
    private func admitBody(count: Int, exchange: ExchangeContext) throws(HTTPServerError) -> BodyWrite {
        switch exchange.framing {
        case .notStarted:
            throw HTTPServerError(.responseNotStarted, detail: "body bytes written before the head")
        case .ended:
            throw HTTPServerError(.responseAlreadyEnded, detail: "body bytes written after the end")
        case .bodyless:
            return .skip
        case .length(let remaining):
            guard count <= remaining else {
                throw HTTPServerError(.bodyLengthMismatch, detail: "\(count) bytes written with \(remaining) due")
            }
            self.parserSlot?.exchange?.framing = .length(remaining: remaining - count)
            return count > 0 ? .raw : .skip
        case .untilClose:
            return count > 0 ? .raw : .skip
        case .chunked:
            return count > 0 ? .chunk : .skip
        }
    }

    private func writeBody(_ chunk: ByteBuffer, exchange: ExchangeContext) throws(HTTPServerError) {
        let count = chunk.readableBytes
        switch try admitBody(count: count, exchange: exchange) {
        case .skip:
            return
        case .raw:
            stream.write([chunk])
        case .chunk:
            context.scratch.clear()
            HTTP1Serializer.appendChunkHead(size: count, to: &context.scratch)
            if count <= Self.coalescingLimit {
                context.scratch.writeBuffer(chunk)
                context.scratch.writeLiteral("\r\n")
                writeScratch()
            } else {
                stream.write([context.scratch, chunk, Self.crlf])
            }
        }
    }

    private func writeFile(_ region: FileRegion, exchange: ExchangeContext) throws(HTTPServerError) {
        guard let fileStream = stream.fileRegions else {
            throw HTTPServerError(.invalidResponse, detail: "a file region on a stream that cannot send files")
        }
        switch try admitBody(count: region.count, exchange: exchange) {
        case .skip:
            return
        case .raw:
            fileStream.write(region)
        case .chunk:
            context.scratch.clear()
            HTTP1Serializer.appendChunkHead(size: region.count, to: &context.scratch)
            writeScratch()
            fileStream.write(region)
            stream.write([Self.crlf])
        }
    }

    private func writeEnd(trailers: HTTPHeaders?, exchange: ExchangeContext) throws(HTTPServerError) {
        switch exchange.framing {
        case .notStarted:
            throw HTTPServerError(.responseNotStarted, detail: "end written before the head")
        case .ended:
            throw HTTPServerError(.responseAlreadyEnded, detail: "end written twice")
        case .length(let remaining) where remaining > 0:
            throw HTTPServerError(.bodyLengthMismatch, detail: "the body ended \(remaining) bytes short")
        case .bodyless, .length, .untilClose:
            break
        case .chunked:
            context.scratch.clear()
            do {
                var lastChunk: [UInt8] = []
                try HTTP1Serializer.writeLastChunk(trailers: trailers, into: &lastChunk)
                context.scratch.writeBytes(lastChunk)
            } catch {
                throw HTTPServerError(.invalidResponse, detail: "trailers", underlying: error)
            }
            writeScratch()
        }
        self.parserSlot?.exchange?.framing = .ended
        tellObserverCompleted()
        perform(machine.responseEnded())
    }

    /// Tells the exchange's observer, if any, that the response was queued whole (once: the observer is taken).
    private func tellObserverCompleted() {
        guard let observer = parserSlot?.exchange?.observer else { return }
        parserSlot?.exchange?.observer = nil
        observer.exchangeEnded(.completed)
    }

    /// Serializes `head` into `context.scratch` with the connection's own fields added, and tells the state machine.
    private func encodeHead(
        _ head: HTTPResponseHead,
        framing: HTTP1Serializer.BodyFraming,
        allowsKeepAlive: Bool
    ) throws(HTTPServerError) {
        guard head.status.code >= 200 else {
            // 1xx are the server's own (100 Continue); 101 would need a protocol switch the server does not do.
            throw HTTPServerError(.invalidResponse, detail: "status \(head.status.code) cannot be a final response")
        }
        context.scratch.clear()
        do {
            // RFC 9110 §2.5: a server sends its own highest version, whatever the client's.
            try HTTP1Serializer.writeResponseHeadLines(head, version: .http1_1, framing: framing, into: &context.scratch)
        } catch {
            throw HTTPServerError(.invalidResponse, detail: "response head", underlying: error)
        }
        let asksClose = head.headers.containsToken(literal: "close", inFieldsNamed: "connection")
        let keepAlive = machine.responseHeadSent(allowsKeepAlive: allowsKeepAlive && !asksClose)
        if !keepAlive && !asksClose {
            context.scratch.writeLiteral("Connection: close\r\n")
        } else if keepAlive && parserSlot?.exchange?.requestVersion == .http1_0 {
            // HTTP/1.0 keeps a connection only when both sides say so (RFC 9112 §9.3).
            context.scratch.writeLiteral("Connection: keep-alive\r\n")
        }
        appendServerFields(to: &context.scratch, head: head)
        context.scratch.writeLiteral("\r\n")
    }

    /// Writes what `context.scratch` holds; the stream copies only what the kernel does not take at once.
    func writeScratch() {
        context.scratch.withUnsafeReadableBytes { stream.write(copying: $0) }
    }

    /// The head's `Content-Length`, if it has one.
    private static func declaredLength(_ head: HTTPResponseHead) throws(HTTPServerError) -> Int? {
        guard let value = head.headers.first(name: "content-length") else { return nil }
        guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let length = Int(value) else {
            throw HTTPServerError(.invalidResponse, detail: "Content-Length \"\(value)\"")
        }
        return length
    }

    private static func orderError(_ framing: ResponseFraming) -> HTTPServerError {
        framing == .ended
            ? HTTPServerError(.responseAlreadyEnded, detail: "a head written after the end")
            : HTTPServerError(.responseAlreadyStarted, detail: "a second response head")
    }

    private static let crlf = ByteBuffer(string: "\r\n")

    // MARK: The handler's end

    /// The handler of exchange `id` returned (or threw): end what it left open.
    func handlerFinished(exchangeID id: UInt64, error: (any Error)?) {
        context.handlerEnded()
        guard let current = parserSlot?.exchange, current.id == id else { return }
        parserSlot?.exchange?.task = nil
        switch current.framing {
        case .ended:
            return
        case .notStarted:
            respondWithInternalError(exchangeID: id)
        case .bodyless, .length, .chunked, .untilClose:
            if error == nil, (try? writeResponsePart(.end(nil), exchangeID: id)) != nil { return }
            // Part of the response is out and it cannot be completed: only closing tells the client.
            perform(machine.responseAborted())
        }
    }

    /// Answers exchange `id` with an empty 500 (the handler failed before writing a head).
    func respondWithInternalError(exchangeID id: UInt64) {
        let head = HTTPResponseHead(status: .internalServerError, headers: ["Content-Length": "0"])
        do {
            _ = try writeResponsePart(.whole(head, ByteBuffer()), exchangeID: id)
        } catch {
            perform(machine.responseAborted())
        }
    }
}
