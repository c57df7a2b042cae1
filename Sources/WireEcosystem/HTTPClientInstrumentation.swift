import CoreMetrics
import Logging
import Synchronization
import Tracing
@_spi(Locking) import Wire

/// Logs, metrics and a trace span for every request an `HTTPClient` makes, fed by the client's event listener and
/// named as OpenTelemetry's HTTP semantic conventions name them.
///
/// - **Traces:** a `.client` span per call (redirects and retries included), a child of `ServiceContext.current`
///   where the call began, ended when the response body has been read (not at the head) or the call failed; DNS,
///   connect attempts and TLS appear as its events. `HTTPClient.execute(_:timeout:instrumentation:)` also injects
///   the span's context into the request's fields through the tracer (W3C `traceparent` with an OpenTelemetry
///   instrument), so that the server's span continues the trace.
/// - **Metrics:** `http.client.request.duration` (with `http.request.method`, `server.address`, `server.port`,
///   `url.scheme`, `http.response.status_code`, `error.type`), `http.client.active_requests`,
///   `http.client.open_connections` (with `http.connection.state` `active` or `idle`) and
///   `http.client.connection.duration`.
/// - **Logs:** nothing unless a logger is given; then `trace` lines for each call's start and end and for each
///   connection's setup and closing, with the call's `wire.request.id` (or the connection's `wire.connection.id`)
///   in their metadata, and a `debug` line for a failed call. Nothing at `info` or above.
///
/// ```swift
/// let instrumentation = HTTPClientInstrumentation(logger: logger)
/// var configuration = HTTPClientConfiguration()
/// configuration.eventListener = instrumentation.eventListener
/// let client = try HTTPClient(configuration: configuration)
/// let response = try await client.execute(request, instrumentation: instrumentation)
/// ```
public final class HTTPClientInstrumentation: Sendable {
    let tracer: any Tracer
    let metrics: any MetricsFactory
    let logger: Logger?
    private let calls = Lock<[Int: ClientCallRecord]>([:])
    private let connections = Lock<[Int: ConnectionRecord]>([:])

    /// A span `execute(_:timeout:instrumentation:)` started and injected, for the call that begins under it.
    @TaskLocal static var injectedSpan: (any Span)?

    /// Instruments a client.
    /// - Parameters:
    ///   - tracer: Where spans go; the default is the bootstrapped `InstrumentationSystem.tracer`.
    ///   - metricsFactory: Where metrics go; the default is the bootstrapped `MetricsSystem.factory`.
    ///   - logger: Where call and connection logs go; nil logs nothing.
    public init(
        tracer: any Tracer = InstrumentationSystem.tracer,
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        logger: Logger? = nil
    ) {
        self.tracer = tracer
        self.metrics = metricsFactory
        self.logger = logger
    }

    /// The listener to set as `HTTPClientConfiguration.eventListener`.
    public var eventListener: HTTPClientEventListener {
        { [self] event in handle(event) }
    }

    /// Feeds one of the client's events to the logs, metrics and spans.
    /// - Parameter event: The event, as the client's listener receives it.
    public func handle(_ event: HTTPClientEvent) {
        switch event.kind {
        case .callStart(let method, let url):
            guard let call = event.call else { return }
            let record = ClientCallRecord(call: call, method: method, url: url, instrumentation: self)
            calls.withLock { $0[call] = record }
        case .callEnd:
            guard let call = event.call, let record = calls.withLock({ $0.removeValue(forKey: call) }) else { return }
            record.end(error: nil)
        case .callFailed(let error):
            guard let call = event.call, let record = calls.withLock({ $0.removeValue(forKey: call) }) else { return }
            record.end(error: error)
        case .responseHeadReceived(let head):
            record(of: event)?.responseHeadReceived(head)
        case .dnsStart(let host):
            record(of: event)?.span.addEvent(SpanEvent(name: "dns.start", attributes: ["server.address": .string(host)]))
        case .dnsEnd(let host, let result):
            var attributes: SpanAttributes = ["server.address": .string(host)]
            if case .failure(let error) = result { attributes["error.type"] = "\(error)" }
            record(of: event)?.span.addEvent(SpanEvent(name: "dns.end", attributes: attributes))
        case .connectStart(let address):
            record(of: event)?.span.addEvent(
                SpanEvent(name: "connect.start", attributes: ["network.peer.address": .string(address.host)]))
        case .connectEnd(let address, let error, let abandoned):
            var attributes: SpanAttributes = ["network.peer.address": .string(address.host)]
            if let error { attributes["error.type"] = "\(error)" }
            if abandoned { attributes["wire.connect.abandoned"] = true }
            record(of: event)?.span.addEvent(SpanEvent(name: "connect.end", attributes: attributes))
            if error == nil, !abandoned, let number = event.connection { connectionOpened(number, event: event) }
        case .tlsStart:
            record(of: event)?.span.addEvent("tls.start")
        case .tlsEnd(let result):
            var attributes: SpanAttributes = [:]
            if case .failure(let error) = result { attributes["error.type"] = "\(error.code)" }
            record(of: event)?.span.addEvent(SpanEvent(name: "tls.end", attributes: attributes))
        case .connectionAcquired(let reused):
            guard let number = event.connection else { return }
            // A connection through a proxy reports no connectEnd of its own: it is open once acquired.
            if !reused { connectionOpened(number, event: event) }
            moveConnection(number, to: .active)
            record(of: event)?.connectionAcquired(reused: reused)
        case .connectionReleased:
            guard let number = event.connection else { return }
            moveConnection(number, to: .idle)
        case .connectionClosed:
            guard let number = event.connection else { return }
            connectionClosed(number, at: event.time)
        case .requestHeadSent, .requestBodySent, .responseBodyReceived:
            break
        }
    }

    private func record(of event: HTTPClientEvent) -> ClientCallRecord? {
        guard let call = event.call else { return nil }
        return calls.withLock { $0[call] }
    }

    // MARK: Connections

    /// What is kept of an open connection: when it opened, its state and the metrics' dimensions.
    struct ConnectionRecord {
        enum State: String { case idle, active }
        let opened: Deadline
        var state: State
        let dimensions: [(String, String)]
    }

    private func connectionOpened(_ number: Int, event: HTTPClientEvent) {
        let dimensions = calls.withLock { $0[event.call ?? -1]?.serverDimensions } ?? []
        let isNew = connections.withLock { table -> Bool in
            guard table[number] == nil else { return false }
            table[number] = ConnectionRecord(opened: event.time, state: .idle, dimensions: dimensions)
            return true
        }
        guard isNew else { return }
        openConnections(dimensions, .idle).increment()
        logger?.trace(
            "connection opened", metadata: ["wire.connection.id": "\(number)", "wire.request.id": "\(event.call ?? 0)"])
    }

    private func moveConnection(_ number: Int, to state: ConnectionRecord.State) {
        let moved = connections.withLock { table -> (from: ConnectionRecord.State, [(String, String)])? in
            guard let record = table[number], record.state != state else { return nil }
            table[number]?.state = state
            return (record.state, record.dimensions)
        }
        guard let (from, dimensions) = moved else { return }
        openConnections(dimensions, from).decrement()
        openConnections(dimensions, state).increment()
    }

    private func connectionClosed(_ number: Int, at time: Deadline) {
        guard let record = connections.withLock({ $0.removeValue(forKey: number) }) else { return }
        openConnections(record.dimensions, record.state).decrement()
        Timer(
            label: SemanticConventions.clientConnectionDuration, dimensions: record.dimensions,
            preferredDisplayUnit: .seconds, factory: metrics
        ).recordNanoseconds((time - record.opened).wholeNanoseconds)
        logger?.trace("connection closed", metadata: ["wire.connection.id": "\(number)"])
    }

    private func openConnections(_ dimensions: [(String, String)], _ state: ConnectionRecord.State) -> Meter {
        Meter(
            label: SemanticConventions.clientOpenConnections,
            dimensions: dimensions + [(SemanticConventions.connectionState, state.rawValue)], factory: metrics)
    }
}

/// One call's span, timing and log metadata.
final class ClientCallRecord: Sendable {
    let span: any Span
    let serverDimensions: [(String, String)]
    private let call: Int
    private let method: String
    private let start = ContinuousClock.now
    private let instrumentation: HTTPClientInstrumentation
    private let logger: Logger?
    private let status = Lock<Int?>(nil)
    private let active: Meter

    init(call: Int, method: HTTPMethod, url: String, instrumentation: HTTPClientInstrumentation) {
        self.call = call
        self.instrumentation = instrumentation
        self.method = SemanticConventions.method(method)
        let parsed = try? HTTPURL(url)
        var server: [(String, String)] = []
        if let parsed {
            server.append((SemanticConventions.serverAddress, parsed.host))
            server.append((SemanticConventions.serverPort, String(parsed.port ?? (parsed.isTLS ? 443 : 80))))
            server.append((SemanticConventions.urlScheme, parsed.scheme))
        }
        serverDimensions = server
        let started = HTTPClientInstrumentation.injectedSpan
        span =
            started
            ?? instrumentation.tracer.startSpan(
                self.method == "_OTHER" ? "HTTP" : self.method, context: ServiceContext.current ?? .topLevel,
                ofKind: .client)
        if span.isRecording {
            span.attributes[SemanticConventions.requestMethod] = self.method
            // The parsed URL has no user information: credentials never reach a span.
            if let parsed { span.attributes[SemanticConventions.urlFull] = parsed.description }
            for (name, value) in server where name != SemanticConventions.serverPort {
                span.attributes[name] = value
            }
            if let port = parsed?.port { span.attributes[SemanticConventions.serverPort] = port }
        }
        active = Meter(
            label: SemanticConventions.clientActiveRequests,
            dimensions: [(SemanticConventions.requestMethod, self.method)] + server, factory: instrumentation.metrics)
        active.increment()
        if var logger = instrumentation.logger {
            logger[metadataKey: "wire.request.id"] = "\(call)"
            logger.trace("request started", metadata: ["http.request.method": "\(self.method)"])
            self.logger = logger
        } else {
            logger = nil
        }
    }

    func responseHeadReceived(_ head: HTTPResponseHead) {
        status.withLock { $0 = head.status.code }
        if span.isRecording { span.attributes[SemanticConventions.responseStatusCode] = head.status.code }
    }

    func connectionAcquired(reused: Bool) {
        logger?.trace("connection acquired", metadata: ["reused": "\(reused)"])
    }

    func end(error: HTTPClientError?) {
        let elapsed = ContinuousClock.now - start
        let code = status.withLock { $0 }
        var dimensions = [(SemanticConventions.requestMethod, method)] + serverDimensions
        if let code { dimensions.append((SemanticConventions.responseStatusCode, String(code))) }
        if let error {
            let type = "\(error.code)"
            dimensions.append((SemanticConventions.errorType, type))
            span.attributes[SemanticConventions.errorType] = type
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error, message: error.description))
            logger?.debug("request failed", metadata: ["error": "\(error)"])
        } else {
            // A client span is an error for a 4xx as well as a 5xx: the call did not get what it asked for.
            if let code, code >= 400 {
                dimensions.append((SemanticConventions.errorType, String(code)))
                span.setStatus(SpanStatus(code: .error))
            }
            logger?.trace("request ended", metadata: ["http.response.status_code": "\(code.map(String.init) ?? "-")"])
        }
        Timer(
            label: SemanticConventions.clientRequestDuration, dimensions: dimensions, preferredDisplayUnit: .seconds,
            factory: instrumentation.metrics
        ).recordNanoseconds(elapsed.wholeNanoseconds)
        active.decrement()
        span.end()
    }
}

extension HTTPClient {
    /// Sends `request` inside a client span whose context is injected into the request's fields (W3C
    /// `traceparent` with an OpenTelemetry tracer), so that the server continues the trace. The client's
    /// `eventListener` must be `instrumentation.eventListener`: it ends the span when the response body has been
    /// read, or when the call fails.
    /// - Parameters:
    ///   - request: What to send.
    ///   - timeout: A total deadline for the request, body included; nil for none.
    ///   - instrumentation: The instrumentation the client's listener feeds.
    /// - Returns: The response, once its head has arrived.
    /// - Throws: `HTTPClientError`.
    public func execute(
        _ request: HTTPClientRequest, timeout: Duration? = nil, instrumentation: HTTPClientInstrumentation
    ) async throws(HTTPClientError) -> HTTPClientResponse {
        let method = SemanticConventions.method(request.method)
        let span = instrumentation.tracer.startSpan(
            method == "_OTHER" ? "HTTP" : method, context: ServiceContext.current ?? .topLevel, ofKind: .client)
        var request = request
        instrumentation.tracer.inject(span.context, into: &request.headers, using: HTTPHeadersInjector())
        let sending = request
        // `withValue` is not typed-throws: the error comes out in a Result.
        let result = await HTTPClientInstrumentation.$injectedSpan.withValue(span) {
            do throws(HTTPClientError) {
                return Result<HTTPClientResponse, HTTPClientError>.success(try await execute(sending, timeout: timeout))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

extension Duration {
    /// Whole nanoseconds, saturating.
    var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return product.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
