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

/// The client's spans, metrics and logs, fed by its event listener, read back from the libraries' test backends.
@Suite(.exclusiveIO(minutes: 1))
struct ClientInstrumentationTests {
    /// A server on loopback and a client whose listener feeds `client`.
    struct Pair {
        let server: HTTPServer
        let group: EventLoopGroup
        let client: HTTPClient
        let base: String

        static func start(
            client instrumentation: HTTPClientInstrumentation, server serverInstrumentation: HTTPServerInstrumentation? = nil,
            maxConnections: Int = 8,
            handler: @escaping @Sendable (HTTPServerRequest, HTTPResponseWriter) async throws -> Void
        ) async throws -> Pair {
            let group = try EventLoopGroup(loopCount: 1, namePrefix: "ecosystem-pair")
            let configuration = HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0))
            let server =
                if let serverInstrumentation {
                    HTTPServer(
                        configuration: configuration, group: group, handler: HTTPClosureHandler(handler),
                        instrumentation: serverInstrumentation)
                } else {
                    HTTPServer(configuration: configuration, group: group, handler: handler)
                }
            let address = try await server.start()
            var clientConfiguration = HTTPClientConfiguration()
            clientConfiguration.eventListener = instrumentation.eventListener
            clientConfiguration.maxConnectionsPerHost = maxConnections
            return Pair(
                server: server, group: group, client: try HTTPClient(configuration: clientConfiguration, group: group),
                base: "http://127.0.0.1:\(address.port ?? 0)")
        }

        func stop() async {
            await client.shutdown()
            await server.shutdown(gracePeriod: .seconds(2))
            await group.shutdownGracefully()
        }
    }

    @Test func aTraceGoesFromAWireClientToAWireServer() async throws {
        let tracer = InMemoryTracer()
        let instrumentation = HTTPClientInstrumentation(tracer: tracer)
        let pair = try await Pair.start(client: instrumentation, server: HTTPServerInstrumentation(tracer: tracer)) {
            _, response in
            try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "traced"))
        }
        let work = tracer.startSpan("work", context: .topLevel)
        let body = try await ServiceContext.withValue(work.context) {
            let response = try await pair.client.execute(
                HTTPClientRequest(url: pair.base + "/traced"), instrumentation: instrumentation)
            return try await response.body.collect(upTo: 1024)
        }
        work.end()
        #expect(String(decoding: body.readableBytesArray, as: UTF8.self) == "traced")
        #expect(await eventually { tracer.finishedSpans.contains { $0.kind == .client } })
        await pair.stop()

        let spans = tracer.finishedSpans
        let client = try #require(spans.first { $0.kind == .client })
        let server = try #require(spans.first { $0.kind == .server })
        #expect(client.parentSpanID == work.context.inMemorySpanContext?.spanID)
        #expect(server.parentSpanID == client.spanID, "the server continues the client's span")
        #expect(Set([client.traceID, server.traceID, work.context.inMemorySpanContext?.traceID ?? ""]).count == 1)
        #expect(client.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(client.attributes["url.full"]?.toSpanAttribute() == "\(pair.base)/traced".toSpanAttribute())
        #expect(client.events.map(\.name).contains("connect.end"))
    }

    @Test func theClientSpanEndsWithTheBodyNotTheHead() async throws {
        let tracer = InMemoryTracer()
        let instrumentation = HTTPClientInstrumentation(tracer: tracer)
        let (bodyMayGo, release) = AsyncStream<Void>.makeStream()
        let pair = try await Pair.start(client: instrumentation) { _, response in
            try await response.writeHead(HTTPResponseHead(status: .ok))
            for await _ in bodyMayGo { break }
            try await response.write(ByteBuffer(string: "late"))
            try await response.end()
        }
        let response = try await pair.client.execute(
            HTTPClientRequest(url: pair.base + "/slow"), instrumentation: instrumentation)
        #expect(response.status.code == 200)
        #expect(!tracer.finishedSpans.contains { $0.kind == .client }, "the head alone does not end the span")
        release.yield()
        _ = try await response.body.collect(upTo: 1024)
        #expect(await eventually { tracer.finishedSpans.contains { $0.kind == .client } })
        await pair.stop()
    }

    @Test func metricsCountEveryRequestAndEveryConnection() async throws {
        let metrics = TestMetrics()
        let instrumentation = HTTPClientInstrumentation(metricsFactory: metrics)
        let pair = try await Pair.start(client: instrumentation, maxConnections: 4) { request, response in
            try await response.respond(
                HTTPResponseHead(status: request.target == "/missing" ? .notFound : .ok), body: ByteBuffer(string: "x"))
        }
        let sent = 100
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<sent {
                group.addTask {
                    let response = try await pair.client.execute(HTTPClientRequest(url: pair.base + "/n\(index)"))
                    _ = try await response.body.collect(upTo: 1024)
                }
                if index % 8 == 7 { try await group.next() }
            }
            try await group.waitForAll()
        }
        let missing = try await pair.client.execute(HTTPClientRequest(url: pair.base + "/missing"))
        _ = try await missing.body.collect(upTo: 1024)
        let port = String(pair.base.split(separator: ":").last ?? "")
        let server = [("server.address", "127.0.0.1"), ("server.port", port), ("url.scheme", "http")]
        #expect(
            await eventually {
                metrics.timers(label: "http.client.request.duration").reduce(0) { $0 + $1.values.count } == sent + 1
            })
        let ok = metrics.timers(
            label: "http.client.request.duration",
            dimensions: [("http.request.method", "GET")] + server + [("http.response.status_code", "200")])
        #expect(ok.first?.values.count == sent)
        let notFound = metrics.timers(label: "http.client.request.duration").first {
            $0.dimensions.contains { $0 == ("http.response.status_code", "404") }
        }
        #expect(notFound?.dimensions.contains { $0 == ("error.type", "404") } == true)
        let active = try metrics.expectMeter("http.client.active_requests", [("http.request.method", "GET")] + server)
        #expect(active.lastValue == 0)

        await pair.client.shutdown()
        // Every connection opened was closed at shutdown: none is counted open, each has its duration.
        let idle = try metrics.expectMeter("http.client.open_connections", server + [("http.connection.state", "idle")])
        #expect(await eventually { idle.lastValue == 0 })
        let opened = metrics.timers(label: "http.client.connection.duration").reduce(0) { $0 + $1.values.count }
        #expect(opened >= 1 && opened <= 4)
        if let activeConnections = try? metrics.expectMeter(
            "http.client.open_connections", server + [("http.connection.state", "active")])
        {
            #expect(activeConnections.lastValue == 0)
        }
        await pair.server.shutdown(gracePeriod: .seconds(2))
        await pair.group.shutdownGracefully()
    }

    @Test func logsAreBelowInfoWithTheCallsIdentifier() async throws {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "client") { _ in handler }
        logger.logLevel = .trace
        let instrumentation = HTTPClientInstrumentation(logger: logger)
        let pair = try await Pair.start(client: instrumentation) { _, response in
            try await response.respond(HTTPResponseHead(status: .ok))
        }
        for _ in 0..<2 {
            let response = try await pair.client.execute(HTTPClientRequest(url: pair.base + "/"))
            _ = try await response.body.collect(upTo: 1024)
        }
        #expect(await eventually { handler.entries.filter { $0.message.description == "request ended" }.count == 2 })
        await pair.stop()
        let entries = handler.entries
        #expect(entries.allSatisfy { $0.level < .info })
        let calls = Set(
            entries.filter { $0.message.description.hasPrefix("request") }.compactMap {
                $0.metadata["wire.request.id"]?.description
            })
        #expect(calls.count == 2)
        #expect(entries.contains { $0.message.description == "connection opened" })
        #expect(entries.contains { $0.message.description == "connection closed" })
    }
}
