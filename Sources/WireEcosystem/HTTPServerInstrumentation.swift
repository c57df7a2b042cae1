import CoreMetrics
import Logging
import Synchronization
import Tracing
@_spi(Locking) import Wire

/// Logs, metrics and a trace span for every request an `HTTPServer` answers, through swift-log, swift-metrics and
/// swift-distributed-tracing, named as OpenTelemetry's HTTP semantic conventions name them.
///
/// - **Traces:** a `.server` span per request named after its method, whose parent is the context the request's
///   fields carry (W3C `traceparent` with the usual instruments), ended when the response has been queued whole or
///   the exchange failed; the handler runs inside it, so that the spans of the calls it makes are its children.
/// - **Metrics:** `http.server.request.duration` (a timer, with `http.request.method`, `url.scheme`,
///   `http.response.status_code`, `network.protocol.version` and, on failure, `error.type`) and
///   `http.server.active_requests` (a meter, with the method and scheme).
/// - **Logs:** nothing unless a logger is given; then `trace` lines at each exchange's start and end and a `debug`
///   line for a failed one, each with a `wire.request.id` in its metadata. Nothing at `info` or above.
///
/// ```swift
/// let instrumentation = HTTPServerInstrumentation(logger: logger)
/// let server = HTTPServer(
///     configuration: configuration, group: loops, handler: handler, instrumentation: instrumentation)
/// ```
///
/// With none of the three systems bootstrapped, each call is a no-op of the library in question.
public final class HTTPServerInstrumentation: HTTPServerObserver {
    let tracer: any Tracer
    let metrics: any MetricsFactory
    let logger: Logger?
    private let nextRequestID = Atomic<UInt64>(0)

    /// Instruments a server.
    /// - Parameters:
    ///   - tracer: Where spans go; the default is the bootstrapped `InstrumentationSystem.tracer`.
    ///   - metricsFactory: Where metrics go; the default is the bootstrapped `MetricsSystem.factory`.
    ///   - logger: Where exchange logs go; nil logs nothing.
    public init(
        tracer: any Tracer = InstrumentationSystem.tracer,
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        logger: Logger? = nil
    ) {
        self.tracer = tracer
        self.metrics = metricsFactory
        self.logger = logger
    }

    /// Starts the exchange's span and counts it as active. Called by the server on the connection's loop.
    /// - Parameter exchange: The request head and addresses.
    /// - Returns: The exchange's record, which ends the span and records the duration.
    public func exchangeStarted(_ exchange: HTTPServerExchangeStart) -> (any HTTPServerExchangeObserver)? {
        ServerExchangeRecord(
            exchange, instrumentation: self, requestID: nextRequestID.add(1, ordering: .relaxed).newValue)
    }

    /// `handler` with each request handled inside its exchange's span (`ServiceContext.current` is the span's
    /// context while it runs).
    /// - Parameter handler: The handler to wrap.
    /// - Returns: The wrapped handler.
    public func instrumenting(_ handler: some HTTPHandler) -> some HTTPHandler {
        InstrumentedHTTPHandler(wrapped: handler)
    }
}

/// One exchange's span, timing and log metadata; told the response head and the end by the server.
final class ServerExchangeRecord: HTTPServerExchangeObserver {
    let span: any Span
    private let instrumentation: HTTPServerInstrumentation
    private let logger: Logger?
    private let start = ContinuousClock.now
    private let method: String
    private let scheme: String
    private let version: String
    private let active: Meter
    private let status = Lock<Int?>(nil)

    init(_ exchange: HTTPServerExchangeStart, instrumentation: HTTPServerInstrumentation, requestID: UInt64) {
        self.instrumentation = instrumentation
        let head = exchange.head
        method = SemanticConventions.method(head.method)
        scheme = exchange.isSecure ? "https" : "http"
        version = SemanticConventions.protocolVersion(head.version)

        var parent = ServiceContext.topLevel
        instrumentation.tracer.extract(head.headers, into: &parent, using: HTTPHeadersExtractor())
        span = instrumentation.tracer.startSpan(method == "_OTHER" ? "HTTP" : method, context: parent, ofKind: .server)
        if span.isRecording {
            let target = head.target
            let question = target.firstIndex(of: "?")
            span.attributes[SemanticConventions.requestMethod] = method
            span.attributes[SemanticConventions.urlScheme] = scheme
            span.attributes[SemanticConventions.urlPath] = String(target[..<(question ?? target.endIndex)])
            if let question { span.attributes[SemanticConventions.urlQuery] = String(target[target.index(after: question)...]) }
            span.attributes[SemanticConventions.networkProtocolVersion] = version
            if let host = head.headers.first(name: "host") { span.attributes[SemanticConventions.serverAddress] = host }
            if let agent = head.headers.first(name: "user-agent") { span.attributes[SemanticConventions.userAgent] = agent }
            if let peer = exchange.remoteAddress {
                span.attributes[SemanticConventions.networkPeerAddress] = peer.host
                if let port = peer.port { span.attributes[SemanticConventions.networkPeerPort] = port }
            }
        }

        active = Meter(
            label: SemanticConventions.serverActiveRequests,
            dimensions: [(SemanticConventions.requestMethod, method), (SemanticConventions.urlScheme, scheme)],
            factory: instrumentation.metrics)
        active.increment()

        if var logger = instrumentation.logger {
            logger[metadataKey: "wire.request.id"] = "\(requestID)"
            logger.trace(
                "request started",
                metadata: ["http.request.method": "\(method)", "url.path": "\(head.target)"])
            self.logger = logger
        } else {
            logger = nil
        }
    }

    func responseHeadWritten(_ head: HTTPResponseHead) {
        status.withLock { $0 = head.status.code }
        if span.isRecording { span.attributes[SemanticConventions.responseStatusCode] = head.status.code }
    }

    func exchangeEnded(_ outcome: HTTPServerExchangeOutcome) {
        let elapsed = ContinuousClock.now - start
        let code = status.withLock { $0 }
        var dimensions = [
            (SemanticConventions.requestMethod, method), (SemanticConventions.urlScheme, scheme),
            (SemanticConventions.networkProtocolVersion, version),
        ]
        if let code { dimensions.append((SemanticConventions.responseStatusCode, String(code))) }
        switch outcome {
        case .completed:
            // RFC: a server span is an error for a 5xx only (a 4xx is the client's).
            if let code, code >= 500 {
                dimensions.append((SemanticConventions.errorType, String(code)))
                span.setStatus(SpanStatus(code: .error))
            }
            logger?.trace("request ended", metadata: ["http.response.status_code": "\(code.map(String.init) ?? "-")"])
        case .failed(let error):
            let type = "\(error.kind)"
            dimensions.append((SemanticConventions.errorType, type))
            span.attributes[SemanticConventions.errorType] = type
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error, message: error.description))
            logger?.debug("request failed", metadata: ["error": "\(error)"])
        }
        Timer(
            label: SemanticConventions.serverRequestDuration, dimensions: dimensions, preferredDisplayUnit: .seconds,
            factory: instrumentation.metrics
        ).recordNanoseconds(elapsed.wholeNanoseconds)
        active.decrement()
        span.end()
    }
}

/// Runs a handler inside its exchange's span.
struct InstrumentedHTTPHandler<Wrapped: HTTPHandler>: HTTPHandler {
    let wrapped: Wrapped

    func handle(_ request: HTTPServerRequest, response: HTTPResponseWriter) async throws {
        guard let record = request.exchangeObserver as? ServerExchangeRecord else {
            try await wrapped.handle(request, response: response)
            return
        }
        try await ServiceContext.withValue(record.span.context) {
            try await wrapped.handle(request, response: response)
        }
    }

    func immediateResponse(to head: HTTPRequestHead) -> HTTPServerResponse? {
        wrapped.immediateResponse(to: head)
    }
}

extension HTTPServer {
    /// Creates a server whose exchanges `instrumentation` traces, measures and logs: it becomes the configuration's
    /// observer and wraps `handler`.
    /// - Parameters:
    ///   - configuration: Address, limits and timeouts (its `observer` is replaced).
    ///   - group: The loops to serve on.
    ///   - handler: Answers requests, inside each request's span.
    ///   - instrumentation: The logs, metrics and traces.
    public convenience init(
        configuration: HTTPServerConfiguration, group: EventLoopGroup, handler: some HTTPHandler,
        instrumentation: HTTPServerInstrumentation
    ) {
        var configuration = configuration
        configuration.observer = instrumentation
        self.init(configuration: configuration, group: group, handler: instrumentation.instrumenting(handler))
    }
}
