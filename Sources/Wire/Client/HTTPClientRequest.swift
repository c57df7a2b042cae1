/// A request for `HTTPClient`: method, URL, header fields and an optional body.
///
/// ```swift
/// var request = HTTPClientRequest(url: "http://localhost:8080/upload", method: .post)
/// request.headers.add(name: "Content-Type", value: "application/json")
/// request.body = .bytes(ByteBuffer(string: #"{"name":"wire"}"#))
/// ```
public struct HTTPClientRequest: Sendable {
    /// The method.
    public var method: HTTPMethod
    /// The absolute URL (`http`, `https` or `http+unix`). For a request made from an `HTTPURL`, its text
    /// (`HTTPURL.description`); setting it replaces the parsed URL.
    public var url: String {
        get {
            switch location {
            case .text(let text): text
            case .parsed(let url): url.description
            }
        }
        set { location = .text(newValue) }
    }
    /// The URL as given: text, parsed when the request is sent, or already parsed.
    private var location: Location
    /// Header fields to send. `Host`, and `Content-Length` or `Transfer-Encoding` for the body,
    /// are added when absent.
    public var headers: HTTPHeaders
    /// The body, if any.
    public var body: Body? {
        get { bodyBox?.body }
        set { bodyBox = newValue.map(BodyBox.init) }
    }
    /// The body behind one reference. `Body` holds an `AsyncThrowingStream`, whose layout the compiler does not know
    /// outside the standard library: every copy of a `Body?`, and of a request holding one, would go through the
    /// runtime's value witnesses, and every one in an async frame would be allocated on the task; a reference is
    /// copied with a retain, and a request without a body has none.
    package private(set) var bodyBox: BodyBox?
    /// Connect to this Unix domain socket whatever the URL's host, for this request and every
    /// redirect it follows (curl's `--unix-socket`). The URL still gives the target and `Host`.
    public var unixSocketPath: String? {
        get { options?.fields.unixSocketPath }
        set { changeOptions { $0.unixSocketPath = newValue } }
    }

    /// Told, on a client thread and in order, of the request's progress: body bytes sent, the response head, each
    /// redirect followed, each retry; with the request's metrics. Keep it short: it runs on the request's path.
    public var observer: (@Sendable (HTTPClientRequestEvent, HTTPClientMetrics) -> Void)? {
        get { options?.fields.observer }
        set { changeOptions { $0.observer = newValue } }
    }
    /// Whether `observer` is also told of every byte written and read for the request (`.bytesWritten`,
    /// `.bytesRead`), in plaintext, as a trace (curl's `--trace`) needs them. Off by default: then the connection
    /// does nothing for it. A file body is then read through memory instead of sent by the kernel from the file.
    public var observesBytes: Bool {
        get { options?.fields.observesBytes ?? false }
        set { changeOptions { $0.observesBytes = newValue } }
    }
    /// The redirect policy for this request; nil follows the client's `configuration.redirects`. The scheme rules
    /// hold whatever the policy.
    public var redirects: HTTPClientConfiguration.RedirectPolicy? {
        get { options?.fields.redirects }
        set { changeOptions { $0.redirects = newValue } }
    }
    /// What the connection carrying the request (and every redirect it follows) must be: a traffic class set
    /// before connecting, an admission check after. Requests with other requirements never share its connections.
    package var connectionRequirements: ConnectionRequirements {
        get { options?.fields.connectionRequirements ?? ConnectionRequirements() }
        set { changeOptions { $0.connectionRequirements = newValue } }
    }
    /// The proxy for this request and every redirect it follows; nil uses the client's `configuration.proxy`.
    /// `.none` sends it straight to its origin whatever the client's setting.
    public var proxy: ProxyConfiguration? {
        get { options?.fields.proxy }
        set { changeOptions { $0.proxy = newValue } }
    }
    /// Whether the request may join a pipeline when the client pipelines (`configuration.pipelining`); false sends it
    /// only on a connection with nothing else in flight. Default true; without pipelining in the client it changes
    /// nothing.
    public var allowsPipelining = true
    /// Ends the request from outside its task when `abort()` is called on it (see `HTTPClientAbortHandle`); nil for
    /// none. The calling task's cancellation and `execute`'s deadline end it as before.
    public var abortHandle: HTTPClientAbortHandle? {
        get { options?.fields.abortHandle }
        set { changeOptions { $0.abortHandle = newValue } }
    }

    /// The options most requests leave unset, behind one reference; nil while all are unset. A request is made,
    /// copied into `execute` and destroyed for every call, and these (a proxy configuration alone is a hundred bytes)
    /// made it five cache lines, written and read again after the response came: with a thousand requests in flight,
    /// each such line is a miss on both sides of the wait.
    private var options: Options?

    /// Changes the seldom-set options through a new box (the box is shared by copies of the request, never changed).
    private mutating func changeOptions(_ change: (inout OptionFields) -> Void) {
        var fields = options?.fields ?? OptionFields()
        change(&fields)
        options = fields.isDefault ? nil : Options(fields)
    }

    /// The seldom-set part of a request.
    private struct OptionFields: Sendable {
        var unixSocketPath: String?
        var observer: (@Sendable (HTTPClientRequestEvent, HTTPClientMetrics) -> Void)?
        var observesBytes = false
        var redirects: HTTPClientConfiguration.RedirectPolicy?
        var connectionRequirements = ConnectionRequirements()
        var proxy: ProxyConfiguration?
        var abortHandle: HTTPClientAbortHandle?

        /// Whether every option has its default, so the request needs no box.
        var isDefault: Bool {
            if unixSocketPath != nil || observer != nil || observesBytes || abortHandle != nil { return false }
            if case .some = redirects { return false }
            if case .some = proxy { return false }
            return connectionRequirements.isEmpty
        }
    }

    /// `OptionFields` behind a reference; never changed once made.
    private final class Options: Sendable {
        let fields: OptionFields

        init(_ fields: OptionFields) { self.fields = fields }
    }

    /// Creates a request without a body.
    // Its own initializer, chosen over the one below when no body is named (Swift prefers the candidate with fewer
    // defaulted parameters): the body's optional enum (a stream, whose layout only its metadata knows) was made,
    // copied and destroyed through value witnesses for every request, about 170 instructions.
    public init(url: String, method: HTTPMethod = .get, headers: HTTPHeaders = HTTPHeaders()) {
        location = .text(url)
        self.method = method
        self.headers = headers
    }

    /// Creates a request.
    public init(url: String, method: HTTPMethod = .get, headers: HTTPHeaders = HTTPHeaders(), body: Body? = nil) {
        location = .text(url)
        self.method = method
        self.headers = headers
        self.body = body
    }

    /// Creates a request without a body for a URL parsed already (see `init(url:method:headers:body:)`).
    public init(url: HTTPURL, method: HTTPMethod = .get, headers: HTTPHeaders = HTTPHeaders()) {
        location = .parsed(url)
        self.method = method
        self.headers = headers
    }

    /// Creates a request for a URL parsed already: a caller that sends to the same URL again and again (a session
    /// layer remembering its paths) parses it once instead of once per request.
    public init(url: HTTPURL, method: HTTPMethod = .get, headers: HTTPHeaders = HTTPHeaders(), body: Body? = nil) {
        location = .parsed(url)
        self.method = method
        self.headers = headers
        self.body = body
    }

    /// The URL's text, when the request was made from text (nil when from an `HTTPURL`).
    var urlText: String? {
        if case .text(let text) = location { return text }
        return nil
    }

    /// The URL parsed: as given, or from its text.
    /// - Throws: `HTTPClientError` `.invalidURL` for text that is not an absolute `http`, `https` or `http+unix` URL.
    func parsedURL() throws(HTTPClientError) -> HTTPURL {
        switch location {
        case .text(let text): try HTTPURL(text)
        case .parsed(let url): url
        }
    }

    /// A body behind a reference (`bodyBox`).
    ///
    /// What the client asks of every request's body is read here, worked out once: `Body` holds an
    /// `AsyncThrowingStream`, whose size the compiler does not know, so each `Body` value an async function touches
    /// costs it a runtime metadata lookup and an allocation on the task, made on entry whether or not there is a body.
    package final class BodyBox: Sendable {
        package let body: Body
        /// The declared length of a streamed body, if any.
        package let streamLength: Int?
        /// Whether the body can be sent again (for a retry or a 307/308 redirect).
        package let isReplayable: Bool
        /// The byte count of a body given as bytes; nil for a file, a stream or segments.
        package let inlineByteCount: Int?

        package init(_ body: Body) {
            self.body = body
            streamLength = body.streamLength
            isReplayable = body.isReplayable
            inlineByteCount = if case .bytes(let bytes) = body { bytes.readableBytes } else { nil }
        }
    }

    /// How a request holds its URL.
    private enum Location: Sendable {
        case text(String)
        case parsed(HTTPURL)
    }

    /// A request body.
    public enum Body: Sendable {
        /// Bytes in memory, sent with a Content-Length.
        case bytes(ByteBuffer)
        /// A file's contents, read in chunks as the socket takes them, sent with a Content-Length.
        case file(path: String)
        /// Chunks from an async sequence: with a Content-Length when `length` is given, chunked otherwise.
        case stream(length: Int?, AsyncThrowingStream<ByteBuffer, any Error>)

        /// Chunks from a sequence made anew for each attempt, with a Content-Length when `length` is given and
        /// chunked otherwise. Unlike `.stream`, it can be sent again: a 307/308 redirect or a retry on a fresh
        /// connection calls `makeChunks` once more (multipart parts read from their files, a counting wrapper for
        /// upload progress).
        case replayable(length: Int?, makeChunks: @Sendable () -> AsyncThrowingStream<ByteBuffer, any Error>)

        /// Bytes in memory and whole files, sent one after another with a `Content-Length` of their total (a
        /// multipart form whose parts are data and files). On a plain connection the kernel sends the files from the
        /// page cache (`sendfile(2)`), a region of up to 4 MiB at a time; on a TLS connection they are read and
        /// encrypted. Each attempt opens the files anew, so the body is replayable. `pause`, when given, is awaited
        /// before each piece goes out: a caller holds an upload there while it is suspended.
        case segments([BodySegment], pause: (@Sendable () async -> Void)? = nil)

        /// A replayable body from any async sequence of chunks, made anew by `makeChunks` for each attempt.
        public static func replayable<S: AsyncSequence & Sendable>(length: Int? = nil, _ makeChunks: @escaping @Sendable () -> S)
            -> Body
        where S.Element == ByteBuffer {
            .replayable(length: length, makeChunks: { stream(from: makeChunks()) })
        }

        /// A body streamed from any async sequence of chunks.
        public static func sequence<S: AsyncSequence & Sendable>(_ chunks: S, length: Int? = nil) -> Body
        where S.Element == ByteBuffer {
            .stream(length: length, stream(from: chunks))
        }

        /// An `AsyncThrowingStream` that iterates `chunks` on a task of its own, cancelled when the stream ends.
        private static func stream<S: AsyncSequence & Sendable>(from chunks: S) -> AsyncThrowingStream<ByteBuffer, any Error>
        where S.Element == ByteBuffer {
            AsyncThrowingStream<ByteBuffer, any Error> { continuation in
                let task = Task {
                    do {
                        for try await chunk in chunks { continuation.yield(chunk) }
                        continuation.finish()
                    } catch {
                        continuation.finish(throwing: error)
                    }
                }
                continuation.onTermination = { _ in task.cancel() }
            }
        }

        /// The declared length of a streamed body, if any.
        var streamLength: Int? {
            switch self {
            case .stream(let length, _), .replayable(let length, _): length
            case .bytes, .file, .segments: nil
            }
        }

        /// Whether the body can be sent again (for a retry or a 307/308 redirect).
        var isReplayable: Bool {
            switch self {
            case .bytes, .file, .replayable, .segments: true
            case .stream: false
            }
        }
    }
}

/// One piece of a `.segments` body.
public enum BodySegment: Sendable {
    /// Bytes in memory.
    case bytes(ByteBuffer)
    /// The whole file at `path`, which must hold exactly `size` bytes when the attempt opens it: a file that changed
    /// since the body was made fails the request instead of sending another length than the one declared.
    case file(path: String, size: Int)

    /// The segment's length in bytes.
    public var count: Int {
        switch self {
        case .bytes(let bytes): bytes.readableBytes
        case .file(_, let size): size
        }
    }
}

/// A response from `HTTPClient`: the head at once, the body as it arrives.
public struct HTTPClientResponse: Sendable {
    /// The status line and header fields.
    public let head: HTTPResponseHead
    /// The body, to iterate or `collect(upTo:)`. Read it to the end (or drop the response) so
    /// the connection returns to the pool.
    public let body: HTTPBody
    /// Timings and connection facts for this request, completed when the body ends.
    public let metrics: HTTPClientMetrics
    /// The URL that produced this response (after redirects).
    public let url: HTTPURL

    /// The status code.
    public var status: HTTPStatus { head.status }
    /// The header fields.
    public var headers: HTTPHeaders { head.headers }

    /// A response made without the network: by a cache, a retrying layer or a test double.
    /// - Parameters:
    ///   - head: The status line and header fields.
    ///   - body: The body (`HTTPBody(_:)` from bytes in memory or from an async sequence of chunks).
    ///   - url: The URL the response answers.
    ///   - metrics: The metrics to report; nil starts a fresh, empty record now.
    public init(head: HTTPResponseHead, body: HTTPBody = .empty, url: HTTPURL, metrics: HTTPClientMetrics? = nil) {
        self.head = head
        self.body = body
        self.url = url
        self.metrics = metrics ?? HTTPClientMetrics(start: .now())
    }
}
