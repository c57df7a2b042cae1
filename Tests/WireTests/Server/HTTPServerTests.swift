import Foundation
import Testing
import Wire
import WireTestSupport

extension IOSuite {
    /// The server over real sockets on 127.0.0.1, driven by a raw client that writes exact bytes.
    @Suite struct HTTPServerTests {
        @Test func methodsOnOneKeepAliveConnection() async throws {
            try await withTimeout {
                let harness = try await ServerHarness.start(handler: EchoTestHandler())
                let client = try await harness.connect()
                var methods: [HTTPMethod] = []
                for method in ["GET", "HEAD", "POST", "PUT", "DELETE"] {
                    let body = method == "POST" || method == "PUT" ? "data-\(method)" : ""
                    try await client.send("\(method) /m HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
                    methods.append(HTTPMethod(method))
                    let responses = try await client.readResponses(methods.count, methods: methods)
                    let response = try #require(responses.last)
                    #expect(response.status == 200)
                    let expected = "\(method) /m \(body)"
                    #expect(response.head.headers.first(name: "content-length") == String(expected.utf8.count))
                    #expect(response.bodyText == (method == "HEAD" ? "" : expected))
                    #expect(response.head.headers.first(name: "date") != nil)
                }
                #expect(await !client.isClosedByPeer())
                await client.close()
                await harness.stop()
            }
        }

        @Test func emptyAndOneMebibyteBodies() async throws {
            try await withTimeout(seconds: 20) {
                let harness = try await ServerHarness.start { request, response in
                    let body = try await request.body.collect(upTo: 2 << 20)
                    try await response.respond(HTTPResponseHead(status: .ok), body: body)
                }
                let client = try await harness.connect()
                let big = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
                try await client.send("POST /empty HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
                try await client.send(Array("POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: \(big.count)\r\n\r\n".utf8) + big)
                let responses = try await client.readResponses(2, methods: [.post, .post])
                #expect(responses.count == 2)
                #expect(responses[0].body.isEmpty)
                #expect(responses[1].body == big)
                await client.close()
                await harness.stop()
            }
        }

        @Test func pipelinedRequestsAnsweredInOrder() async throws {
            try await withTimeout {
                let harness = try await ServerHarness.start { request, response in
                    // The first request answers last if responses were not ordered.
                    if request.target == "/1" { await Task.yield() }
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: request.target))
                }
                let client = try await harness.connect()
                var batch = ""
                for index in 1...5 { batch += "GET /\(index) HTTP/1.1\r\nHost: x\r\n\r\n" }
                try await client.send(batch)
                let responses = try await client.readResponses(5)
                #expect(responses.map(\.bodyText) == ["/1", "/2", "/3", "/4", "/5"])
                await client.close()
                await harness.stop()
            }
        }

        @Test func chunkedRequestBodyAndStreamedResponse() async throws {
            try await withTimeout {
                let harness = try await ServerHarness.start { request, response in
                    try await response.writeHead(HTTPResponseHead(status: .ok))
                    for try await chunk in request.body { try await response.write(chunk) }
                    try await response.end()
                }
                let client = try await harness.connect()
                try await client.send("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
                try await client.send("6\r\n world\r\n0\r\n\r\n")
                let response = try #require(try await client.readResponses(1, methods: [.post]).first)
                #expect(response.head.headers.first(name: "transfer-encoding") == "chunked")
                #expect(response.bodyText == "hello world")
                await client.close()
                await harness.stop()
            }
        }

        @Test func expectContinueSentWhenTheHandlerReads() async throws {
            try await withTimeout {
                let harness = try await ServerHarness.start(handler: EchoTestHandler())
                let client = try await harness.connect()
                try await client.send("PUT /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
                let interim = try await client.readResponses(1, methods: [.put])
                #expect(interim.first?.status == 100)
                try await client.send("body")
                let responses = try await client.readResponses(2, methods: [.put])
                #expect(responses.last?.bodyText == "PUT /e body")
                await client.close()
                await harness.stop()
            }
        }

        @Test func noContinueWhenTheHandlerAnswersWithoutReading() async throws {
            try await withTimeout {
                let harness = try await ServerHarness.start { _, response in
                    try await response.respond(HTTPResponseHead(status: HTTPStatus(code: 401)))
                }
                let client = try await harness.connect()
                try await client.send("PUT /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
                let bytes = await client.readUntilClosed()
                let responses = try ParsedResponse.parseAll(bytes, methods: [.put])
                #expect(responses.map(\.status) == [401])
                #expect(responses.first?.head.headers.first(name: "connection") == "close")
                await harness.stop()
            }
        }

        @Test func aHundredFieldsAreAdmittedByDefaultAndTheCountStaysConfigurable() async throws {
            try await withTimeout {
                let fields = (0..<100).map { "X-Field-\($0): value \($0)\r\n" }.joined()
                let harness = try await ServerHarness.start(handler: EchoTestHandler())
                let client = try await harness.connect()
                try await client.send("GET /many HTTP/1.1\r\nHost: x\r\n\(fields)\r\n")
                #expect(try await client.readResponses(1).map(\.bodyText) == ["GET /many "])
                await client.close()
                await harness.stop()

                let strict = try await ServerHarness.start(
                    configure: { $0.parser.maxHeaderCount = 50 },
                    handler: EchoTestHandler())
                let refused = try await strict.connect()
                try await refused.send("GET /many HTTP/1.1\r\nHost: x\r\n\(fields)\r\n")
                let bytes = await refused.readUntilClosed()
                #expect(try ParsedResponse.parseAll(bytes, methods: [.get]).first?.status == 431)
                await refused.close()
                await strict.stop()
            }
        }

        @Test func slowlorisIsDisconnectedAfterTheHeaderTimeout() async throws {
            try await withTimeout {
                // Grows with a sanitizer's slowdown, as does the bound below.
                let headerReadTimeout = Duration.milliseconds(300) * Sanitizer.timeScale
                let harness = try await ServerHarness.start(
                    configure: { $0.headerReadTimeout = headerReadTimeout }, handler: EchoTestHandler())
                // Taken before the connect: the head is due within the timeout of the accept.
                let started = ContinuousClock.now
                let client = try await harness.connect()
                try await client.send("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                let bytes = await client.readUntilClosed()
                let elapsed = ContinuousClock.now - started
                #expect(elapsed >= headerReadTimeout && elapsed < .seconds(5) * Sanitizer.timeScale)
                #expect(try ParsedResponse.parseAll(bytes, methods: [.get]).first?.status == 408)
                await client.close()
                await harness.stop()
            }
        }

        @Test func aConnectionThatNeverSpeaksIsClosedAfterTheHeaderTimeoutNotTheIdleOne() async throws {
            try await withTimeout(seconds: 10) {
                let harness = try await ServerHarness.start(
                    configure: {
                        $0.headerReadTimeout = .milliseconds(200)
                        $0.idleTimeout = .seconds(30)
                    },
                    handler: EchoTestHandler())
                let started = ContinuousClock.now
                let client = try await harness.connect()
                // Nothing is sent: the first head is due from the accept, and none came.
                let bytes = await client.readUntilClosed()
                let elapsed = ContinuousClock.now - started
                #expect(elapsed >= .milliseconds(200) && elapsed < .seconds(5))
                // Nothing was asked, so nothing is answered.
                #expect(bytes.isEmpty)
                #expect(await client.isClosedByPeer())
                await client.close()
                await harness.stop()
            }
        }

        @Test(.disabled(if: Sanitizer.current != nil, Sanitizer.distortsMeasurements))
        func theFirstHeadIsDueWithinTheHeaderTimeoutOfTheAccept() async throws {
            try await withTimeout(seconds: 10) {
                let harness = try await ServerHarness.start(
                    configure: {
                        $0.headerReadTimeout = .milliseconds(500)
                        $0.idleTimeout = .seconds(30)
                    },
                    handler: EchoTestHandler())
                let client = try await harness.connect()
                let started = ContinuousClock.now
                // The first byte comes late and the rest never: the head's time ran from the accept, not from that
                // byte (which would close at 400 + 500 ms at the earliest).
                try await Task.sleep(for: .milliseconds(400))
                let sent = ContinuousClock.now
                try await client.send("G")
                let bytes = await client.readUntilClosed()
                let closed = ContinuousClock.now
                // Timed from the byte, the close could come no sooner than 500 ms after it; a machine slow enough to
                // send it after the timeout sees the close at once.
                #expect(closed - sent < .milliseconds(500), "closed \(closed - started) after the accept")
                // A 408 when the byte came in time, nothing when the loaded machine sent it after the timeout.
                #expect(try bytes.isEmpty || ParsedResponse.parseAll(bytes, methods: [.get]).first?.status == 408)
                await client.close()
                await harness.stop()
            }
        }

        @Test func idleKeepAliveConnectionIsClosed() async throws {
            try await withTimeout {
                let harness = try await ServerHarness.start(
                    configure: { $0.idleTimeout = .milliseconds(200) }, handler: EchoTestHandler())
                let client = try await harness.connect()
                try await client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                _ = try await client.readResponses(1)
                _ = await client.readUntilClosed()
                #expect(await client.isClosedByPeer())
                await client.close()
                await harness.stop()
            }
        }

        @Test(arguments: [
            ("GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 2000))\r\n\r\n", 431),
            ("GET /\(String(repeating: "a", count: 1000)) HTTP/1.1\r\nHost: x\r\n\r\n", 414),
            ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n", 413),
            ("GET / HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            // RFC 9112 §6.1: a transfer coding the server does not decode (any but chunked) is 501, then close.
            ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
            ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 501),
            ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: deflate, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 501),
            ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\nhello", 501),
            // A coding after chunked leaves the length unknown: 400.
            ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400),
            // RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 is faulty framing, with or without Content-Length.
            ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 400),
            ("POST / HTTP/1.0\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nhello", 400),
            // RFC 9110 §4.2.4: userinfo in the target is an error.
            ("GET http://user:pw@x/ HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("CONNECT user:pw@x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n", 400),
            // RFC 9112 §5.2: a server MUST refuse obs-fold in a request (the client unfolds it in responses).
            ("GET / HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n", 400),
        ])
        func refusedRequestsAreAnsweredAndClosed(request: String, status: Int) async throws {
            try await withTimeout {
                let harness = try await ServerHarness.start(
                    configure: {
                        $0.parser = HTTP1ParserConfiguration(
                            maxStartLineLength: 512, maxHeaderSectionSize: 1024, maxBodySize: 1000)
                    },
                    handler: EchoTestHandler())
                // A healthy connection opened first must not notice.
                let bystander = try await harness.connect()
                try await bystander.send("GET /before HTTP/1.1\r\nHost: x\r\n\r\n")
                _ = try await bystander.readResponses(1)

                let client = try await harness.connect()
                try await client.send(request)
                let bytes = await client.readUntilClosed()
                let response = try #require(try ParsedResponse.parseAll(bytes, methods: [.get]).first)
                #expect(response.status == status)
                #expect(response.head.headers.first(name: "connection") == "close")

                try await bystander.send("GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
                let responses = try await bystander.readResponses(2)
                #expect(responses.map(\.bodyText) == ["GET /before ", "GET /after "])
                await bystander.close()
                await client.close()
                await harness.stop()
            }
        }

        @Test func bodyTooLargeMidStreamIsAnswered413() async throws {
            try await withTimeout {
                let harness = try await ServerHarness.start(
                    configure: { $0.parser.maxBodySize = 10 }, handler: EchoTestHandler())
                let client = try await harness.connect()
                try await client.send(
                    "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n12345678\r\n")
                let bytes = await client.readUntilClosed()
                #expect(try ParsedResponse.parseAll(bytes, methods: [.post]).first?.status == 413)
                await client.close()
                await harness.stop()
            }
        }

        @Test func handlerErrorBecomes500AndConnectionStays() async throws {
            struct Failure: Error {}
            try await withTimeout {
                let harness = try await ServerHarness.start { request, response in
                    if request.target == "/fail" { throw Failure() }
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "ok"))
                }
                let client = try await harness.connect()
                try await client.send("GET /fail HTTP/1.1\r\nHost: x\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
                let responses = try await client.readResponses(2)
                #expect(responses.map(\.status) == [500, 200])
                await client.close()
                await harness.stop()
            }
        }

        @Test func http10ClientGetsCloseDelimitedStream() async throws {
            try await withTimeout {
                let harness = try await ServerHarness.start { _, response in
                    try await response.writeHead(HTTPResponseHead(status: .ok))
                    try await response.write(ByteBuffer(string: "abc"))
                    try await response.end()
                }
                let client = try await harness.connect()
                try await client.send("GET / HTTP/1.0\r\n\r\n")
                let bytes = await client.readUntilClosed()
                let text = String(decoding: bytes, as: UTF8.self)
                #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
                #expect(text.contains("Connection: close\r\n"))
                #expect(text.hasSuffix("\r\n\r\nabc"))
                await client.close()
                await harness.stop()
            }
        }

        @Test func gracefulShutdownFinishesInFlightRequest() async throws {
            try await withTimeout {
                let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
                let (release, releaseContinuation) = AsyncStream.makeStream(of: Void.self)
                let harness = try await ServerHarness.start { _, response in
                    startedContinuation.yield()
                    for await _ in release { break }
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "done"))
                }
                let client = try await harness.connect()
                let idle = try await harness.connect()
                try await client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                for await _ in started { break }
                // The grace grows with a sanitizer's slowdown.
                async let shutdown: Void = harness.server.shutdown(gracePeriod: .seconds(5) * Sanitizer.timeScale)
                // The idle connection is closed at once; the busy one waits for its response.
                _ = await idle.readUntilClosed()
                #expect(await !client.isClosedByPeer())
                releaseContinuation.yield()
                let bytes = await client.readUntilClosed()
                await client.close()
                await idle.close()
                await shutdown
                let response = try #require(try ParsedResponse.parseAll(bytes, methods: [.get]).first)
                #expect(response.bodyText == "done")
                #expect(response.head.headers.first(name: "connection") == "close")
                #expect(harness.server.connectionCount == 0)
                await harness.group.shutdownGracefully()
                await harness.clientLoop.shutdownGracefully()
            }
        }

        @Test func shutdownDeadlineClosesStuckRequests() async throws {
            try await withTimeout {
                let harness = try await ServerHarness.start { request, response in
                    // Never answers: reads a body that never comes, until the connection is closed under it.
                    _ = try await request.body.collect(upTo: 1 << 20)
                }
                let client = try await harness.connect()
                try await client.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n")
                let started = ContinuousClock.now
                await harness.server.shutdown(gracePeriod: .milliseconds(200))
                // Grows with a sanitizer's slowdown.
                #expect(ContinuousClock.now - started < .seconds(3) * Sanitizer.timeScale)
                _ = await client.readUntilClosed()
                await harness.group.shutdownGracefully()
                await harness.clientLoop.shutdownGracefully()
            }
        }

        @Test func connectionLimitClosesExtraConnections() async throws {
            try await withTimeout {
                let harness = try await ServerHarness.start(
                    configure: { $0.maxConnections = 1 }, handler: EchoTestHandler())
                let first = try await harness.connect()
                try await first.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                _ = try await first.readResponses(1)
                let second = try await harness.connect()
                let bytes = await second.readUntilClosed()
                #expect(bytes.isEmpty)
                try await first.send("GET /again HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try await first.readResponses(2).count == 2)
                await first.close()
                await second.close()
                await harness.stop()
            }
        }

        @Test func severalLoopsShareOnePort() async throws {
            try await withTimeout {
                let harness = try await ServerHarness.start(loops: 2, handler: EchoTestHandler())
                for _ in 0..<8 {
                    let client = try await harness.connect()
                    try await client.send("GET /r HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    let bytes = await client.readUntilClosed()
                    #expect(try ParsedResponse.parseAll(bytes, methods: [.get]).first?.bodyText == "GET /r ")
                    await client.close()
                }
                await harness.stop()
            }
        }

        @Test(.exclusiveIO) func tenThousandRequestsLeakNoDescriptor() async throws {
            try await withTimeout(seconds: 90) {
                let before = openDescriptors()
                let harness = try await ServerHarness.start(handler: EchoTestHandler())
                var batch = ""
                for index in 0..<99 { batch += "GET /\(index) HTTP/1.1\r\nHost: x\r\n\r\n" }
                batch += "GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                var answered = 0
                for _ in 0..<100 {
                    let client = try await harness.connect()
                    try await client.send(batch)
                    let bytes = await client.readUntilClosed()
                    answered += try ParsedResponse.parseAll(bytes, methods: Array(repeating: .get, count: 100)).count
                    await client.close()
                }
                #expect(answered >= 10_000)
                await harness.stop()
                #expect(before.newlyOpened() == [])
            }
        }
    }
}
