import Testing
import Wire
import WireTestSupport

extension IOSuite {
    /// The client against a scripted server that closes, resets, stalls or misframes.
    @Suite(.exclusiveIO) struct HTTPClientFaultTests {
        static func withServer(
            configuration: HTTPClientConfiguration = HTTPClientConfiguration(),
            address: SocketAddress = try! SocketAddress(ipAddress: "127.0.0.1", port: 0),
            script: @escaping ScriptedServer.Script,
            _ body: @escaping @Sendable (HTTPClient, ScriptedServer) async throws -> Void
        ) async throws {
            // Other suites' tests call this too: the descriptor comparison needs the process to itself.
            try await withExclusiveIO {
                let before = await descriptorBaseline()
                let group = try EventLoopGroup(loopCount: 1)
                let server = try await ScriptedServer.start(on: group.next(), address: address, script: script)
                let client = try HTTPClient(configuration: configuration, group: group)
                let outcome: Result<Void, any Error>
                do {
                    try await withTimeout(seconds: 90) { try await body(client, server) }
                    outcome = .success(())
                } catch {
                    outcome = .failure(error)
                }
                await client.shutdown()
                try await server.close()
                await group.shutdownGracefully()
                #expect(before.newlyOpened() == [], "descriptors leaked")
                try outcome.get()
            }
        }

        /// Requests in the churn test: enough that any per-request descriptor leak shows.
        static let manyRequests = 10_000

        static func url(_ server: ScriptedServer, _ path: String = "/") -> String {
            "http://\(server.address.host):\(server.address.port!)\(path)"
        }

        @Test func aPooledConnectionTheServerDroppedIsRetriedOnAFreshOne() async throws {
            // Connection 0 answers once, then closes without a word when reused: the race a
            // client meets when a server's idle timer fires just as it sends.
            try await Self.withServer(script: { connection, request, _ in
                connection == 0 && request == 1 ? .close : .respond(ScriptedServer.ok())
            }) { client, server in
                _ = try await client.execute(HTTPClientRequest(url: Self.url(server))).body.collect(upTo: 10)
                let second = try await client.execute(HTTPClientRequest(url: Self.url(server)))
                #expect(try await second.body.collect(upTo: 10) == ByteBuffer(string: "ok"))
                #expect(second.metrics.snapshot.retries == 1)
                #expect(try await server.connectionCount() == 2)
            }
        }

        @Test func aNonIdempotentRequestIsNotReplayedAndSaysSo() async throws {
            try await Self.withServer(script: { connection, request, _ in
                connection == 0 && request == 1 ? .close : .respond(ScriptedServer.ok())
            }) { client, server in
                _ = try await client.execute(HTTPClientRequest(url: Self.url(server))).body.collect(upTo: 10)
                let error = await #expect(throws: HTTPClientError.self) {
                    try await client.execute(
                        HTTPClientRequest(url: Self.url(server), method: .post, body: .bytes(ByteBuffer(string: "x"))))
                }
                #expect(error?.code == .emptyReply)
                #expect(error?.mayHaveBeenProcessed == true)
                #expect(error?.description.contains("may have been processed") == true)
            }
        }

        @Test func anIdempotencyKeyAllowsTheReplay() async throws {
            try await Self.withServer(script: { connection, request, _ in
                connection == 0 && request == 1 ? .close : .respond(ScriptedServer.ok())
            }) { client, server in
                _ = try await client.execute(HTTPClientRequest(url: Self.url(server))).body.collect(upTo: 10)
                let response = try await client.execute(
                    HTTPClientRequest(
                        url: Self.url(server), method: .post, headers: ["Idempotency-Key": "abc"],
                        body: .bytes(ByteBuffer(string: "x"))))
                #expect(response.metrics.snapshot.retries == 1)
            }
        }

        @Test func leftoverBytesAfterAResponseNeverReachTheNextRequest() async throws {
            // The first response carries 5 bytes more than its Content-Length says.
            try await Self.withServer(script: { connection, request, _ in
                connection == 0 && request == 0 ? .respond(ScriptedServer.ok() + "EVIL!") : .respond(ScriptedServer.ok("second"))
            }) { client, server in
                _ = try await client.execute(HTTPClientRequest(url: Self.url(server))).body.collect(upTo: 10)
                let second = try await client.execute(HTTPClientRequest(url: Self.url(server)))
                #expect(try await second.body.collect(upTo: 10) == ByteBuffer(string: "second"))
                #expect(second.metrics.snapshot.isReusedConnection == false)
            }
        }

        @Test func silenceIsAReadTimeout() async throws {
            var configuration = HTTPClientConfiguration()
            configuration.readTimeout = .milliseconds(200)
            try await Self.withServer(configuration: configuration, script: { _, _, _ in .silence }) { client, server in
                let error = await #expect(throws: HTTPClientError.self) {
                    try await client.execute(HTTPClientRequest(url: Self.url(server)))
                }
                #expect(error?.code == .readTimeout)
            }
        }

        @Test func silenceAfterAnAnsweredRequestIsAReadTimeoutCountedFromTheNextRequest() async throws {
            // The connection's read timer is re-armed lazily: the first request's timer is still running when the
            // later ones start on the reused connection; when it fires, about 150 ms before the third request has
            // waited its 300, it must re-arm for that request, counted from when it started, and then time it out.
            // The timeout, the gap and the bounds grow together with a sanitizer's slowdown, keeping their relations.
            let scale = Sanitizer.timeScale
            var configuration = HTTPClientConfiguration()
            configuration.readTimeout = .milliseconds(300) * scale
            try await Self.withServer(
                configuration: configuration,
                script: { _, request, _ in
                    request < 2 ? .respond(ScriptedServer.ok("fast")) : .silence
                }
            ) { client, server in
                _ = try await client.execute(HTTPClientRequest(url: Self.url(server))).body.collect(upTo: 10)
                let second = try await client.execute(HTTPClientRequest(url: Self.url(server)))
                #expect(second.metrics.snapshot.isReusedConnection)
                _ = try await second.body.collect(upTo: 10)
                // A gap in the scenario, not synchronisation: the first timer, due 300 ms after the first request,
                // must fire while the third request has waited only about half its timeout.
                try await Task.sleep(for: .milliseconds(150) * scale)
                let started = Deadline.now()
                let error = await #expect(throws: HTTPClientError.self) {
                    try await client.execute(HTTPClientRequest(url: Self.url(server)))
                }
                #expect(error?.code == .readTimeout)
                let waited = Deadline.now() - started
                #expect(waited >= .milliseconds(300) * scale && waited < .seconds(5) * scale, "timed out after \(waited)")
            }
        }

        @Test func theTotalDeadlineCoversTheWholeRequest() async throws {
            try await Self.withServer(script: { _, _, _ in .silence }) { client, server in
                let started = Deadline.now()
                let error = await #expect(throws: HTTPClientError.self) {
                    try await client.execute(HTTPClientRequest(url: Self.url(server)), timeout: .milliseconds(300))
                }
                #expect(error?.code == .deadlineExceeded)
                // Grows with a sanitizer's slowdown.
                #expect(Deadline.now() - started < .seconds(3) * Sanitizer.timeScale)
            }
        }

        /// `HTTPClientRequest.abortHandle` ends a request from outside its task wherever it is: before it is sent
        /// (nothing goes out), while it waits for the response head, and while its body is read.
        @Test func anAbortHandleEndsTheRequestWhereverItIs() async throws {
            let (arrived, arrival) = AsyncStream<Void>.makeStream()
            try await Self.withServer(script: { _, _, head in
                if head.hasPrefix("GET /silent ") {
                    arrival.yield()
                    return .silence
                }
                // A head and part of a 100-byte body, the rest never sent.
                return .respond("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
            }) { client, server in
                let early = HTTPClientAbortHandle()
                early.abort()
                var never = HTTPClientRequest(url: Self.url(server, "/never"))
                never.abortHandle = early
                let before = await #expect(throws: HTTPClientError.self) { try await client.execute(never) }
                #expect(before?.code == .cancelled)
                #expect(try await server.connectionCount() == 0, "an aborted request must not be sent")

                let waiting = HTTPClientAbortHandle()
                var silent = HTTPClientRequest(url: Self.url(server, "/silent"))
                silent.abortHandle = waiting
                let task = Task { try await client.execute(silent) }
                var arrivals = arrived.makeAsyncIterator()
                _ = await arrivals.next()
                #expect(!waiting.isAborted)
                waiting.abort(reason: "the test stopped waiting")
                let head = await #expect(throws: HTTPClientError.self) { try await task.value }
                #expect(head?.code == .cancelled)
                #expect(head?.detail == "the test stopped waiting")
                #expect(waiting.isAborted)

                let reading = HTTPClientAbortHandle()
                var partial = HTTPClientRequest(url: Self.url(server, "/partial"))
                partial.abortHandle = reading
                let response = try await client.execute(partial)
                reading.abort()
                let body = await #expect(throws: HTTPClientError.self) { try await response.body.collect(upTo: 1000) }
                #expect(body?.code == .cancelled)
            }
        }

        /// A task cancelled before it calls `execute` gets `.cancelled` at once and sends nothing (the cancellation
        /// handler `execute` registers runs as it is registered); the client serves the next task as usual.
        @Test func aTaskCancelledBeforeItAsksSendsNothing() async throws {
            try await Self.withServer(script: { _, _, _ in .respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") }) {
                client, server in
                let cancelled = Task {
                    withUnsafeCurrentTask { $0?.cancel() }
                    return try await client.execute(HTTPClientRequest(url: Self.url(server, "/never")))
                }
                let error = await #expect(throws: HTTPClientError.self) { try await cancelled.value }
                #expect(error?.code == .cancelled)
                #expect(try await server.connectionCount() == 0, "a cancelled task's request must not be sent")
                let response = try await client.execute(HTTPClientRequest(url: Self.url(server, "/after")))
                #expect(response.status == .ok)
                #expect(try await response.body.collect(upTo: 100) == ByteBuffer(string: "ok"))
            }
        }

        @Test func aTruncatedBodyIsItsOwnError() async throws {
            let truncated = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"
            try await Self.withServer(script: { _, _, _ in .respondAndClose(truncated) }) { client, server in
                let response = try await client.execute(HTTPClientRequest(url: Self.url(server)))
                let error = await #expect(throws: HTTPClientError.self) { try await response.body.collect(upTo: 100) }
                #expect(error?.code == .bodyTruncated)
            }
        }

        @Test func anEmptyReplyIsItsOwnError() async throws {
            try await Self.withServer(script: { _, _, _ in .close }) { client, server in
                let error = await #expect(throws: HTTPClientError.self) {
                    try await client.execute(HTTPClientRequest(url: Self.url(server)))
                }
                #expect(error?.code == .emptyReply)
            }
        }

        @Test func aMalformedResponseNamesTheParseError() async throws {
            try await Self.withServer(script: { _, _, _ in
                .respond("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab")
            }) { client, server in
                let error = await #expect(throws: HTTPClientError.self) {
                    try await client.execute(HTTPClientRequest(url: Self.url(server)))
                }
                #expect(error?.code == .malformedResponse)
                #expect(error?.parseError != nil)
            }
        }

        @Test func transferEncodingInAnHTTP10ResponseFailsAndClosesTheConnection() async throws {
            // RFC 9112 §6.1: faulty framing. Read as chunked, the first exchange would "succeed" with "hello"
            // and the connection would go back to the pool; instead it fails, and the next request dials anew.
            try await Self.withServer(script: { connection, _, _ in
                connection == 0
                    ? .respond(
                        "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
                    : .respond(ScriptedServer.ok("fresh"))
            }) { client, server in
                let error = await #expect(throws: HTTPClientError.self) {
                    let response = try await client.execute(HTTPClientRequest(url: Self.url(server)))
                    _ = try await response.body.collect(upTo: 100)
                }
                #expect(error?.code == .malformedResponse)
                #expect(error?.parseError?.kind == .transferEncodingInHTTP10)
                let response = try await client.execute(HTTPClientRequest(url: Self.url(server)))
                #expect(try await response.body.collect(upTo: 100).readableBytesArray == Array("fresh".utf8))
                #expect(try await server.connectionCount() == 2)
            }
        }

        @Test func obsFoldInAResponseIsUnfoldedToOneSpace() async throws {
            // RFC 9112 §5.2: a user agent MUST replace each obs-fold with SP before using the value.
            try await Self.withServer(script: { _, _, _ in
                .respond("HTTP/1.1 200 OK\r\nX-Folded: one \r\n \ttwo\r\n three\r\nContent-Length: 2\r\n\r\nok")
            }) { client, server in
                let response = try await client.execute(HTTPClientRequest(url: Self.url(server)))
                #expect(response.head.headers.first(name: "x-folded") == "one two three")
                #expect(response.head.repairs.map(\.description) == ["obsolete_line_folding@33"])
                #expect(try await response.body.collect(upTo: 100).readableBytesArray == Array("ok".utf8))
            }
        }

        @Test func aResponseStreamEndingAfter100ContinueIsATruncatedResponse() async throws {
            // The 100 is not the response: the final one never came, so the request fails (and, having been
            // answered in part, is not retried), and the next request dials anew.
            try await Self.withServer(script: { connection, _, _ in
                connection == 0 ? .respondAndClose("HTTP/1.1 100 Continue\r\n\r\n") : .respond(ScriptedServer.ok("fresh"))
            }) { client, server in
                let error = await #expect(throws: HTTPClientError.self) {
                    _ = try await client.execute(HTTPClientRequest(url: Self.url(server)))
                }
                #expect(error?.code == .connectionClosed)
                #expect(error?.failedBeforeResponse == false)
                let response = try await client.execute(HTTPClientRequest(url: Self.url(server)))
                #expect(try await response.body.collect(upTo: 100).readableBytesArray == Array("fresh".utf8))
                #expect(try await server.connectionCount() == 2)
            }
        }

        @Test func aResponseWithAHundredFieldsIsReadAndTheCountStaysConfigurable() async throws {
            let fields = (0..<100).map { "X-Field-\($0): value \($0)\r\n" }.joined()
            let reply = "HTTP/1.1 200 OK\r\n\(fields)Content-Length: 2\r\n\r\nok"
            try await Self.withServer(script: { _, _, _ in .respond(reply) }) { client, server in
                let response = try await client.execute(HTTPClientRequest(url: Self.url(server)))
                #expect(response.headers.count == 101)
                #expect(response.headers.first(name: "x-field-99") == "value 99")
                #expect(try await response.body.collect(upTo: 100).readableBytesArray == Array("ok".utf8))
            }
            var configuration = HTTPClientConfiguration()
            configuration.parserConfiguration.maxHeaderCount = 50
            try await Self.withServer(configuration: configuration, script: { _, _, _ in .respond(reply) }) { client, server in
                let error = await #expect(throws: HTTPClientError.self) {
                    _ = try await client.execute(HTTPClientRequest(url: Self.url(server)))
                }
                #expect(error?.code == .malformedResponse)
                #expect(error?.parseError?.kind == .tooManyHeaders)
                #expect(error?.description.contains("HTTP1ParserConfiguration.maxHeaderCount") == true)
            }
        }

        @Test func requestsOverAUnixSocket() async throws {
            let path = "/tmp/wire-client-\(UInt32.random(in: 0...UInt32.max)).sock"
            try await Self.withServer(
                address: try SocketAddress(unixPath: path),
                script: { _, _, head in
                    .respond(ScriptedServer.ok(String(head.split(separator: "\r\n")[0])))
                }
            ) { client, _ in
                let encoded = path.replacingOccurrences(of: "/", with: "%2F")
                let response = try await client.execute(HTTPClientRequest(url: "http+unix://\(encoded)/v1/info?x=1"))
                #expect(try await response.body.collect(upTo: 100) == ByteBuffer(string: "GET /v1/info?x=1 HTTP/1.1"))
            }
        }

        @Test func tenThousandRequestsLeakNoDescriptor() async throws {
            try await Self.withServer(script: { _, request, _ in
                // Every 100th response closes, so connections churn as well as get reused.
                request % 100 == 99
                    ? .respondAndClose(ScriptedServer.ok(extraHeaders: "Connection: close\r\n")) : .respond(ScriptedServer.ok())
            }) { client, server in
                for _ in 0..<Self.manyRequests {
                    let response = try await client.execute(HTTPClientRequest(url: Self.url(server)))
                    _ = try await response.body.collect(upTo: 10)
                }
                #expect(try await server.connectionCount() >= Self.manyRequests / 100)
            }
        }
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

extension IOSuite.HTTPClientFaultTests {
    @Test func largeUploadsAskForContinueAndStopWhenRefused() async throws {
        // The server answers 413 to the head alone: the client must not send the 2 MiB body,
        // and must not reuse a connection whose request stream it left unfinished.
        try await Self.withServer(script: { _, _, head in
            head.lowercased().contains("expect: 100-continue")
                ? .respond("HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\n\r\n")
                : .respond(ScriptedServer.ok("no expect"))
        }) { client, server in
            let big = ByteBuffer(bytes: Array(repeating: 7, count: 2 << 20))
            let refused = try await client.execute(HTTPClientRequest(url: Self.url(server), method: .put, body: .bytes(big)))
            #expect(refused.status.code == 413)
            let small = try await client.execute(
                HTTPClientRequest(url: Self.url(server), method: .put, body: .bytes(ByteBuffer(string: "x"))))
            #expect(try await small.body.collect(upTo: 100) == ByteBuffer(string: "no expect"))
            #expect(small.metrics.snapshot.isReusedConnection == false)
        }
    }
}

extension IOSuite.HTTPClientFaultTests {
    @Test func anEarlyContinueIsNotMissed() async throws {
        // Wire's server says 100 as soon as its handler reads, often before the uploading task
        // starts waiting for it. With a 30 s continue timeout, missing that 100 would stall the
        // upload past this test's 10 s bound (both grow with a sanitizer's slowdown, in proportion).
        let received = try await withLoopbackRig { rig in
            let port = try await rig.server { request, response in
                let body = try await request.body.collect(upTo: 4 << 20)
                try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "\(body.readableBytes)"))
            }
            var configuration = HTTPClientConfiguration()
            configuration.expectContinueTimeout = .seconds(30) * Sanitizer.timeScale
            let client = try rig.client(configuration)
            let upload = ByteBuffer(bytes: Array(repeating: 1, count: 2 << 20))
            let response = try await client.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(port)/", method: .put, body: .bytes(upload)))
            return try await response.body.collect(upTo: 100)
        }
        #expect(received == ByteBuffer(string: "\(2 << 20)"))
    }
}
