import Foundation
import Testing
import Wire
import WireLoad
import WireTool
import WireTestSupport

/// Counts latencies; enough to check that every response was recorded once.
struct CountingRecorder: LatencyRecorder {
    var count = 0
    var intervalStart = 0
    init() {}
    mutating func record(nanoseconds: UInt64) { count += 1 }
    mutating func reset() {
        count = 0
        intervalStart = 0
    }
    func summary() -> Int { count }
    mutating func takeInterval() -> Int {
        defer { intervalStart = count }
        return count - intervalStart
    }
}

/// Runs a load plan on a thread of its own (the generator blocks its caller), bounded in time.
func runLoad(_ plan: LoadPlan, seconds: Double = 30) async throws -> LoadResult<Int> {
    try await withTimeout(seconds: seconds) {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<LoadResult<Int>, any Error>) in
            let thread = Thread {
                continuation.resume(
                    with: Result { () throws(LoadStartError) in
                        try LoadGenerator.run(plan, recorder: CountingRecorder.self)
                    })
            }
            thread.start()
        }
    }
}

/// A plan for `GET /` against a loopback port.
func loadPlan(port: Int, stop: LoadPlan.Stop, connections: Int = 4, loops: Int = 1) throws -> LoadPlan {
    let url = try HTTPURL("http://127.0.0.1:\(port)/")
    let request = try LoadPlan.serializeRequest(method: .get, url: url, headers: HTTPHeaders(), body: nil)
    var plan = LoadPlan(
        addresses: [try SocketAddress(ipAddress: "127.0.0.1", port: port)], host: "127.0.0.1", port: port, request: request)
    plan.stop = stop
    plan.connections = connections
    plan.loops = loops
    return plan
}

extension IOSuite {
    /// The load generator against Wire's own server and scripted servers: exact counts, pipelining,
    /// the constant-rate schedule, and each kind of error.
    @Suite(.exclusiveIO) struct LoadGeneratorTests {
        @Test func exactRequestCountAgainstTheServer() async throws {
            let baseline = await descriptorBaseline()
            let server = try await ServerHarness.start(handler: HTTPFixedResponseHandler.hello)
            let result = try await runLoad(try loadPlan(port: server.port, stop: .requests(1_000), connections: 8, loops: 2))
            await server.stop()
            #expect(result.statistics.responses == 1_000)
            #expect(result.latencies.reduce(0, +) == 1_000)
            #expect(result.statistics.errorCount == 0)
            #expect(result.connectionsOpened == 8)
            // "Hello, World!" plus a head: every byte read is counted.
            #expect(result.statistics.bytesRead > 1_000 * 13)
            #expect(result.loopCPU.total > .zero)
            #expect(baseline.newlyOpened() == [])
        }

        @Test func pipelinedRequestsGoOutTogether() async throws {
            let loop = try EventLoop(name: "scripted")
            let server = try await ScriptedServer.start(on: loop) { _, _, _ in .respond(ScriptedServer.ok("hi")) }
            var plan = try loadPlan(port: server.address.port!, stop: .requests(64), connections: 1)
            plan.pipeline = 8
            let result = try await runLoad(plan)
            let perRead = try await server.maxRequestsPerRead()
            try await server.close()
            await loop.shutdownGracefully()
            #expect(result.statistics.responses == 64)
            #expect(result.statistics.errorCount == 0)
            // One write of eight requests: the server sees more than one at a time, never more than eight.
            #expect(perRead > 1 && perRead <= 8)
        }

        @Test func unpipelinedRequestsGoOutOneAtATime() async throws {
            let loop = try EventLoop(name: "scripted")
            let server = try await ScriptedServer.start(on: loop) { _, _, _ in .respond(ScriptedServer.ok("hi")) }
            let result = try await runLoad(try loadPlan(port: server.address.port!, stop: .requests(50), connections: 1))
            let perRead = try await server.maxRequestsPerRead()
            try await server.close()
            await loop.shutdownGracefully()
            #expect(result.statistics.responses == 50)
            #expect(perRead == 1)
        }

        @Test func constantRateSendsExactlyTheRequestsAsked() async throws {
            let server = try await ServerHarness.start(handler: HTTPFixedResponseHandler.hello)
            var plan = try loadPlan(port: server.port, stop: .requests(200), connections: 4)
            plan.rate = 4_000
            let result = try await runLoad(plan)
            await server.stop()
            #expect(result.statistics.responses == 200)
            #expect(result.latencies.reduce(0, +) == 200)
            #expect(result.statistics.errorCount == 0)
        }

        @Test func constantRateNeverRunsAheadOfItsSchedule() async throws {
            let server = try await ServerHarness.start(handler: HTTPFixedResponseHandler.hello)
            var plan = try loadPlan(port: server.port, stop: .after(.milliseconds(300)), connections: 4)
            plan.rate = 1_000
            let result = try await runLoad(plan)
            await server.stop()
            // Requests are due every millisecond from the start: at most one per due time, however fast
            // the server answers (the first of each connection may be due at the start).
            let seconds = Double(result.duration.components.seconds) + Double(result.duration.components.attoseconds) / 1e18
            #expect(result.statistics.responses <= Int(seconds * 1_000) + 4)
            #expect(result.statistics.responses > 0)
        }

        @Test func refusedConnectionsStopTheRun() async throws {
            // A port nothing listens on: bound and released.
            let socket = try Socket.makeStream(family: .ipv4)
            try socket.bind(to: SocketAddress(ipAddress: "127.0.0.1", port: 0))
            let port = try socket.localAddress().port!
            try socket.close()
            do {
                _ = try await runLoad(try loadPlan(port: port, stop: .requests(10)))
                Issue.record("the run started")
            } catch let error as LoadStartError {
                #expect(error.message.contains("could not connect to 127.0.0.1:\(port)"))
                #expect(error.message.contains("refused"))
            }
        }

        @Test func aServerClosingMidResponseIsAReadError() async throws {
            let loop = try EventLoop(name: "scripted")
            let server = try await ScriptedServer.start(on: loop) { _, _, _ in
                .respondAndClose("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part")
            }
            let result = try await runLoad(try loadPlan(port: server.address.port!, stop: .requests(6), connections: 2))
            try await server.close()
            await loop.shutdownGracefully()
            #expect(result.statistics.responses == 0)
            #expect(result.statistics.errors[.read] == 6)
            #expect(result.statistics.reasons[.read]?.keys.contains("the server closed the connection mid-response") == true)
        }

        @Test func statusesOtherThan2xxAnd3xxAreCountedAsErrors() async throws {
            let loop = try EventLoop(name: "scripted")
            let server = try await ScriptedServer.start(on: loop) { _, request, _ in
                request % 2 == 0
                    ? .respond("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                    : .respond("HTTP/1.1 301 Moved\r\nContent-Length: 0\r\nLocation: /\r\n\r\n")
            }
            let result = try await runLoad(try loadPlan(port: server.address.port!, stop: .requests(20), connections: 1))
            try await server.close()
            await loop.shutdownGracefully()
            #expect(result.statistics.responses == 20)
            #expect(result.statistics.errors[.status] == 10)
            #expect(result.statistics.unexpectedStatuses == [404: 10])
        }

        @Test func malformedResponsesAreParseErrorsWithTheirReason() async throws {
            let loop = try EventLoop(name: "scripted")
            let server = try await ScriptedServer.start(on: loop) { _, _, _ in .respond("HTTP/1.1 2x0 OK\r\n\r\n") }
            let result = try await runLoad(try loadPlan(port: server.address.port!, stop: .requests(3), connections: 1))
            try await server.close()
            await loop.shutdownGracefully()
            #expect(result.statistics.errors[.parse] == 3)
            #expect(result.statistics.reasons[.parse]?.keys.first?.contains("status") == true)
        }

        @Test func unansweredRequestsTimeOut() async throws {
            let loop = try EventLoop(name: "scripted")
            let server = try await ScriptedServer.start(on: loop) { _, _, _ in .silence }
            var plan = try loadPlan(port: server.address.port!, stop: .requests(2), connections: 1)
            plan.timeout = .milliseconds(100)
            let result = try await runLoad(plan)
            try await server.close()
            await loop.shutdownGracefully()
            #expect(result.statistics.errors[.timeout] == 2)
            #expect(result.statistics.responses == 0)
        }

        @Test func connectionCloseResponsesReconnectWithoutErrors() async throws {
            let loop = try EventLoop(name: "scripted")
            let server = try await ScriptedServer.start(on: loop) { _, _, _ in
                .respondAndClose(ScriptedServer.ok("bye", extraHeaders: "Connection: close\r\n"))
            }
            let result = try await runLoad(try loadPlan(port: server.address.port!, stop: .requests(10), connections: 2))
            let connections = try await server.connectionCount()
            try await server.close()
            await loop.shutdownGracefully()
            #expect(result.statistics.responses == 10)
            #expect(result.statistics.errorCount == 0)
            #expect(connections >= 10)
        }

        @Test func aKeptAliveConnectionClosedUnannouncedResendsItsRequests() async throws {
            let loop = try EventLoop(name: "scripted")
            // As tinyproxy forwards: a keep-alive answer, then the connection closes without saying so. The request
            // already sent on it was never processed: sent again, not an error. A connection that closes before its
            // first answer still fails its request.
            let server = try await ScriptedServer.start(on: loop) { connection, _, _ in
                connection == 0 ? .close : .respondAndClose(ScriptedServer.ok("hi"))
            }
            let result = try await runLoad(try loadPlan(port: server.address.port!, stop: .requests(10), connections: 1))
            try await server.close()
            await loop.shutdownGracefully()
            #expect(result.statistics.responses == 9, "\(result.statistics.reasons)")
            #expect(result.statistics.errorCount == 1, "\(result.statistics.reasons)")
            #expect(result.statistics.reasons[.read]?.keys.first == "the server closed the connection before responding")
        }

        @Test func pipelinedRequestsBehindAConnectionCloseAreSentAgain() async throws {
            let loop = try EventLoop(name: "scripted")
            // Each connection answers three requests, the third with Connection: close; the fourth
            // of the pipelined batch is never answered there.
            let server = try await ScriptedServer.start(on: loop) { _, request, _ in
                request < 2
                    ? .respond(ScriptedServer.ok("hi"))
                    : request == 2 ? .respondAndClose(ScriptedServer.ok("bye", extraHeaders: "Connection: close\r\n")) : .silence
            }
            var plan = try loadPlan(port: server.address.port!, stop: .requests(12), connections: 1)
            plan.pipeline = 4
            let result = try await runLoad(plan)
            try await server.close()
            await loop.shutdownGracefully()
            #expect(result.statistics.responses == 12)
            #expect(result.statistics.errorCount == 0, "\(result.statistics.reasons)")
            // Batches of 4, 4, 4 and 3: the first three each lose their fourth request to the close.
            #expect(result.statistics.resentRequests == 3)
        }

        @Test func headRequestsExpectNoBody() async throws {
            let loop = try EventLoop(name: "scripted")
            // Content-Length describes the body a GET would get; after HEAD none follows.
            let server = try await ScriptedServer.start(on: loop) { _, _, _ in
                .respond("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n")
            }
            var plan = try loadPlan(port: server.address.port!, stop: .requests(5), connections: 1)
            plan.request = try LoadPlan.serializeRequest(
                method: .head, url: HTTPURL("http://127.0.0.1/"), headers: HTTPHeaders(), body: nil)
            plan.isHeadRequest = true
            plan.timeout = .seconds(5)
            let result = try await runLoad(plan)
            try await server.close()
            await loop.shutdownGracefully()
            #expect(result.statistics.responses == 5)
            #expect(result.statistics.errorCount == 0)
        }
    }
}

/// The serialized request: Host from the URL, the body with its length, fields as given.
struct LoadPlanRequestTests {
    @Test func requestBytes() throws {
        let url = try HTTPURL("http://example.com:8080/path?q=1")
        var headers = HTTPHeaders()
        headers.add(name: "Accept", value: "*/*")
        let bytes = try LoadPlan.serializeRequest(method: .post, url: url, headers: headers, body: Array("hello".utf8))
        #expect(
            String(decoding: bytes.readableBytesArray, as: UTF8.self)
                == "POST /path?q=1 HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\nContent-Length: 5\r\n\r\nhello")
    }

    @Test func aGivenHostIsKept() throws {
        var headers = HTTPHeaders()
        headers.add(name: "host", value: "other")
        let bytes = try LoadPlan.serializeRequest(method: .get, url: HTTPURL("http://example.com/"), headers: headers, body: nil)
        #expect(String(decoding: bytes.readableBytesArray, as: UTF8.self) == "GET / HTTP/1.1\r\nhost: other\r\n\r\n")
    }
}
