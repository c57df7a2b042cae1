import FoundationEssentials
import Wire

/// What a stage of the transfer chain returns: the response head, its body (unread until the task or a stage reads
/// it), and the request it answers.
public struct StageResponse: Sendable {
    /// The response head.
    public var response: ClientResponse
    /// The body: unread as it comes from the network, or bytes a stage put there.
    public var body: ResponseBody
    /// The request this answers: after redirects, the last hop's.
    public var request: ClientRequest
    /// The exchange in Wire that gave the head; nil for a response that did not come from the network.
    package var exchangeMetrics: HTTPClientMetrics?

    /// A response a stage makes itself (a canned answer, a test double): no exchange took place.
    /// - Parameters:
    ///   - response: The head.
    ///   - body: The body; empty by default.
    ///   - request: The request it answers.
    public init(response: ClientResponse, body: ResponseBody = ResponseBody(), request: ClientRequest) {
        self.response = response
        self.body = body
        self.request = request
        exchangeMetrics = nil
    }

    /// A response that came from Wire.
    package init(response: ClientResponse, body: ResponseBody, request: ClientRequest, exchangeMetrics: HTTPClientMetrics?) {
        self.response = response
        self.body = body
        self.request = request
        self.exchangeMetrics = exchangeMetrics
    }
}

/// A response body on its way up the transfer chain. The network's is a stream read once: the task reads it after
/// the chain returns, unless a stage read it first. Reading it with `collect(upTo:)` keeps the bytes in the body,
/// so a stage may look at them and still return the body whole.
public struct ResponseBody: Sendable {
    /// What the body holds. Each case is one reference: a body is copied up through every stage, and a copy is
    /// then one retain.
    package enum Content: Sendable {
        /// Wire's stream, bytes as they came off the connection.
        case wire(HTTPBody)
        /// A stream a stage made from another (a decoder of the `Content-Encoding`).
        case source(any ResponseBodySource)
        /// Bytes in memory: a cache's, a stage's own, or a stream collected by `collect(upTo:)`.
        case bytes(Boxed<Data>)
        /// What the task received: its data or file, or why receiving failed.
        case received(Boxed<ReceivedBody>)
    }

    package var content: Content

    /// An empty body.
    public init() {
        content = .bytes(Boxed(Data()))
    }

    /// A body of these bytes.
    /// - Parameter data: The bytes.
    public init(_ data: Data) {
        content = .bytes(Boxed(data))
    }

    package init(_ content: Content) {
        self.content = content
    }

    /// A body the task received.
    package init(received: ReceivedBody) {
        content = .received(Boxed(received))
    }

    /// What the task received, once it has; nil before.
    package var received: ReceivedBody? {
        guard case .received(let box) = content else { return nil }
        return box.value
    }

    /// Reads the rest of the body into memory, keeps it in the body, and returns it.
    /// - Parameter limit: The most bytes read; a larger body fails with `.responseTooLarge`.
    /// - Returns: Every byte of the body.
    /// - Throws: `.responseTooLarge` past `limit`, the network's error mapped to `ClientError`, or, for a body the
    ///   task already wrote to a file, `.resourceUnavailable`.
    nonisolated(nonsending) public mutating func collect(upTo limit: Int) async throws(ClientError) -> Data {
        switch content {
        case .bytes(let box):
            guard box.value.count <= limit else { throw Self.tooLarge(limit) }
            return box.value
        case .received(let box):
            let received = box.value
            if let error = received.error { throw error }
            guard let data = received.data else {
                throw ClientError(.resourceUnavailable, failureReason: "the task wrote the body to a file")
            }
            guard data.count <= limit else { throw Self.tooLarge(limit) }
            return data
        case .wire, .source:
            // The task's own reader: Wire's stream and a stage's decoder read alike.
            var reader = ResponseBodyReader(self)
            var data = Data()
            do {
                while let chunk = try await reader.next() {
                    guard data.count + chunk.readableBytes <= limit else { throw Self.tooLarge(limit) }
                    data.append(chunk)
                }
            } catch let error as ClientError {
                throw error
            } catch {
                throw ClientError(.networkConnectionLost, underlying: error, failureReason: "the body failed: \(error)")
            }
            content = .bytes(Boxed(data))
            return data
        }
    }

    /// Reads up to `limit` bytes of a network body and drops them, so that its connection can be reused; a longer
    /// body is abandoned, which closes the connection. For a response the transfer goes past (a redirect's, a
    /// challenge's).
    nonisolated(nonsending) package func discard(upTo limit: Int = 64 * 1024) async {
        if case .wire(let body) = content { _ = try? await body.collect(upTo: limit) }
    }

    private static func tooLarge(_ limit: Int) -> ClientError {
        ClientError(.responseTooLarge, failureReason: "the body is larger than \(limit) bytes")
    }
}

/// A body made from another (a decoder of Wire's stream), not yet read: it makes its reader when the body is read.
package protocol ResponseBodySource: AnyObject, Sendable {
    /// The reader of the body, made once, by whoever reads it.
    func makeReader() -> any ResponseBodyChunks
}

/// A stream of body chunks, with the bytes read off the wire counted apart for progress.
package protocol ResponseBodyChunks {
    /// The next chunk; nil at the end. An empty chunk may carry wire bytes only.
    nonisolated(nonsending) mutating func next() async throws -> ByteBuffer?
    /// The bytes read off the wire since the last call.
    mutating func takeWireByteCount() -> Int
}

/// A body the task received: a data task's bytes, a download's temporary file, and why receiving stopped.
package struct ReceivedBody: Sendable {
    /// A data or upload task's body.
    package var data: Data?
    /// A download's temporary file, closed.
    package var temporaryFile: String?
    /// Why receiving failed (the body broke, was too large, the task was cancelled).
    package var error: ClientError?
    /// The task a data task became to receive the body (`ResponseDisposition.becomeDownload`): it completes.
    package var replacement: (any TransferContext)?

    package init(
        data: Data? = nil, temporaryFile: String? = nil, error: ClientError? = nil,
        replacement: (any TransferContext)? = nil
    ) {
        self.data = data
        self.temporaryFile = temporaryFile
        self.error = error
        self.replacement = replacement
    }
}
