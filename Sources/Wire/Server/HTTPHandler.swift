/// Answers the requests of an `HTTPServer`.
///
/// `handle` runs once per request in a task whose executor preference is the connection's event loop, so its
/// awaits, and the writer's writes, stay on that loop's thread. Requests on one connection are handled one after
/// another; responses go out in request order.
///
/// ```swift
/// struct Hello: HTTPHandler {
///     func handle(_ request: HTTPServerRequest, response: HTTPResponseWriter) async throws {
///         let body = try await request.body.collect(upTo: 1 << 20)
///         try await response.respond(HTTPResponseHead(status: .ok), body: body)
///     }
/// }
/// ```
///
/// If `handle` returns without ending its response, the server ends it (a missing head becomes
/// `500 Internal Server Error`). If it throws after part of the response went out, the connection is closed, since
/// the client could not tell a truncated response from a complete one otherwise.
public protocol HTTPHandler: Sendable {
    /// Handles one request.
    /// - Parameters:
    ///   - request: The head and the body stream.
    ///   - response: Where the response goes.
    /// - Throws: Anything; the server answers 500 if no head was written yet.
    func handle(_ request: HTTPServerRequest, response: HTTPResponseWriter) async throws

    /// A response known from the head alone, written on the loop without starting a task; nil (the default) defers
    /// to `handle`. The request's body, if any, is read and dropped. This is the fast path for fixed answers.
    /// - Parameter head: The request head.
    /// - Returns: The whole response, or nil.
    func immediateResponse(to head: HTTPRequestHead) -> HTTPServerResponse?
}

extension HTTPHandler {
    /// No immediate responses: every request goes to `handle`.
    public func immediateResponse(to head: HTTPRequestHead) -> HTTPServerResponse? { nil }
}

/// A whole response in memory: a head and a body.
public struct HTTPServerResponse: Sendable, Hashable {
    /// The status line and fields. A `Content-Length` is added from `body`; `Connection`, `Date` and `Server` as
    /// the server decides.
    public var head: HTTPResponseHead
    /// The body bytes (not sent for HEAD requests, which still get the `Content-Length`).
    public var body: ByteBuffer

    /// Creates a response.
    /// - Parameters:
    ///   - head: The head.
    ///   - body: The body.
    public init(head: HTTPResponseHead, body: ByteBuffer = ByteBuffer()) {
        self.head = head
        self.body = body
    }
}

/// An `HTTPHandler` made from a closure.
public struct HTTPClosureHandler: HTTPHandler {
    private let body: @Sendable (HTTPServerRequest, HTTPResponseWriter) async throws -> Void

    /// Wraps `body`.
    /// - Parameter body: Called once per request.
    public init(_ body: @escaping @Sendable (HTTPServerRequest, HTTPResponseWriter) async throws -> Void) {
        self.body = body
    }

    /// Calls the closure.
    /// - Parameters:
    ///   - request: The request.
    ///   - response: The writer.
    /// - Throws: What the closure throws.
    public func handle(_ request: HTTPServerRequest, response: HTTPResponseWriter) async throws {
        try await body(request, response)
    }
}

/// An `HTTPHandler` that answers every request with the same response, on the loop from the head alone (no task
/// per request): health checks, fixed pages, and the `Hello, World!` of benchmarks.
///
/// ```swift
/// let server = HTTPServer(configuration: configuration, group: group, handler: HTTPFixedResponseHandler.hello)
/// ```
public struct HTTPFixedResponseHandler: HTTPHandler {
    /// The response every request gets.
    public let response: HTTPServerResponse

    /// Answers every request with `response`.
    /// - Parameter response: The head and body to send.
    public init(_ response: HTTPServerResponse) {
        self.response = response
    }

    /// `200 OK`, `Content-Type: text/plain`, `Hello, World!`: what `wire serve --hello` answers.
    public static let hello = HTTPFixedResponseHandler(
        HTTPServerResponse(
            head: HTTPResponseHead(status: .ok, headers: ["Content-Type": "text/plain"]),
            body: ByteBuffer(string: "Hello, World!")))

    /// The fixed response, whatever the request.
    /// - Parameter head: Not looked at.
    /// - Returns: `response`.
    public func immediateResponse(to head: HTTPRequestHead) -> HTTPServerResponse? { response }

    /// Writes the fixed response (reached only if a caller bypasses `immediateResponse`).
    /// - Parameters:
    ///   - request: Not looked at.
    ///   - writer: Where the response goes.
    /// - Throws: What writing throws.
    public func handle(_ request: HTTPServerRequest, response writer: HTTPResponseWriter) async throws {
        try await writer.respond(response.head, body: response.body)
    }
}
