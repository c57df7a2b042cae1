import InMemoryLogging
import InMemoryTracing
import Logging
import MetricsTestKit
import ServiceContextModule
import Testing
import Tracing
import Wire
import WireEcosystem
import WireTestSupport

/// The server's spans, metrics and logs, read back from the libraries' own test backends (no global bootstrap: each
/// test gives its instrumentation its own tracer, metrics factory and logger).
@Suite(.exclusiveIO(minutes: 1))
struct ServerInstrumentationTests {
    /// A server with `instrumentation`, a client, and a way to stop both.
    struct Running {
        let server: HTTPServer
        let group: EventLoopGroup
        let client: HTTPClient
        let base: String

        static func start(
            instrumentation: HTTPServerInstrumentation,
            handler: @escaping @Sendable (HTTPServerRequest, HTTPResponseWriter) async throws -> Void
        ) async throws -> Running {
            let group = try EventLoopGroup(loopCount: 1, namePrefix: "ecosystem-server")
            let server = HTTPServer(
                configuration: HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0)),
                group: group, handler: HTTPClosureHandler(handler), instrumentation: instrumentation)
            let address = try await server.start()
            return Running(
                server: server, group: group, client: try HTTPClient(group: group), base: "http://127.0.0.1:\(address.port ?? 0)")
        }

        func get(_ path: String, headers: HTTPHeaders = HTTPHeaders()) async throws -> (Int, String) {
            let response = try await client.execute(HTTPClientRequest(url: base + path, headers: headers))
            let body = try await response.body.collect(upTo: 1 << 20)
            return (response.status.code, String(decoding: body.readableBytesArray, as: UTF8.self))
        }

        func stop() async {
            await client.shutdown()
            await server.shutdown(gracePeriod: .seconds(2))
            await group.shutdownGracefully()
        }
    }

    @Test func aServerSpanContinuesTheTraceTheRequestCarriesAndTheHandlerRunsInsideIt() async throws {
        let tracer = InMemoryTracer()
        let running = try await Running.start(instrumentation: HTTPServerInstrumentation(tracer: tracer)) { request, response in
            // A span the handler starts is a child of the request's span.
            let child = tracer.startSpan("lookup", context: ServiceContext.current ?? .topLevel)
            child.end()
            try await response.respond(HTTPResponseHead(status: .created), body: ByteBuffer(string: "made"))
        }
        // The caller's trace, as the in-memory instrument writes it into fields.
        let caller = tracer.startSpan("caller", context: .topLevel, ofKind: .client)
        var headers = HTTPHeaders()
        headers.add(name: InMemoryTracer.traceIDKey, value: caller.context.inMemorySpanContext?.traceID ?? "")
        headers.add(name: InMemoryTracer.spanIDKey, value: caller.context.inMemorySpanContext?.spanID ?? "")
        let (status, body) = try await running.get("/things?x=1", headers: headers)
        caller.end()
        await running.stop()

        #expect(status == 201 && body == "made")
        let spans = tracer.finishedSpans
        let server = try #require(spans.first { $0.kind == .server })
        #expect(server.operationName == "GET")
        #expect(server.traceID == caller.context.inMemorySpanContext?.traceID)
        #expect(server.parentSpanID == caller.context.inMemorySpanContext?.spanID)
        #expect(server.attributes["http.request.method"]?.toSpanAttribute() == "GET")
        #expect(server.attributes["url.path"]?.toSpanAttribute() == "/things")
        #expect(server.attributes["url.query"]?.toSpanAttribute() == "x=1")
        #expect(server.attributes["http.response.status_code"]?.toSpanAttribute() == 201)
        #expect(server.status == nil, "a 201 is not an error")
        let child = try #require(spans.first { $0.operationName == "lookup" })
        #expect(child.parentSpanID == server.spanID)
        #expect(child.traceID == server.traceID)
    }

    @Test func metricsCountExactlyTheRequestsSentUnderLoad() async throws {
        let metrics = TestMetrics()
        let running = try await Running.start(instrumentation: HTTPServerInstrumentation(metricsFactory: metrics)) {
            request, response in
            if request.target == "/fail" { throw CancellationError() }
            try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "ok"))
        }
        let sent = 200
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<sent {
                group.addTask { _ = try await running.get("/item/\(index)") }
                if index % 16 == 15 { try await group.next() }
            }
            try await group.waitForAll()
        }
        let (failedStatus, _) = try await running.get("/fail")
        await running.stop()

        #expect(failedStatus == 500)
        let ok = metrics.timers(
            label: "http.server.request.duration",
            dimensions: [
                ("http.request.method", "GET"), ("url.scheme", "http"), ("network.protocol.version", "1.1"),
                ("http.response.status_code", "200"),
            ])
        #expect(ok.count == 1)
        #expect(ok.first?.values.count == sent)
        #expect(ok.first?.values.allSatisfy { $0 > 0 } == true)
        let failed = metrics.timers(label: "http.server.request.duration").filter {
            $0.dimensions.contains { $0 == ("http.response.status_code", "500") }
        }
        #expect(failed.first?.values.count == 1)
        #expect(failed.first?.dimensions.contains { $0 == ("error.type", "500") } == true)
        let active = try metrics.expectMeter(
            "http.server.active_requests", [("http.request.method", "GET"), ("url.scheme", "http")])
        #expect(active.lastValue == 0, "every request that became active ended")
    }

    @Test func logsAreTraceLevelWithARequestIdentifierAndNothingAtInfoOrAbove() async throws {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "test") { _ in handler }
        logger.logLevel = .trace
        let running = try await Running.start(instrumentation: HTTPServerInstrumentation(logger: logger)) { _, response in
            try await response.respond(HTTPResponseHead(status: .ok))
        }
        _ = try await running.get("/a")
        _ = try await running.get("/b")
        await running.stop()

        let entries = handler.entries
        #expect(entries.count == 4)
        #expect(entries.allSatisfy { $0.level < .info })
        let identifiers = Set(entries.compactMap { $0.metadata["wire.request.id"]?.description })
        #expect(identifiers.count == 2, "one identifier per request, the same on its start and end")
    }

    @Test func withoutAnObserverTheHandlerSeesNone() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "ecosystem-plain")
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0)), group: group
        ) { request, response in
            try await response.respond(HTTPResponseHead(status: request.exchangeObserver == nil ? .ok : .conflict))
        }
        let address = try await server.start()
        let client = try HTTPClient(group: group)
        let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(address.port ?? 0)/"))
        _ = try await response.body.collect(upTo: 1024)
        await client.shutdown()
        await server.shutdown()
        await group.shutdownGracefully()
        #expect(response.status.code == 200)
    }
}
