import Testing
import WireTestSupport
import Wire

extension IOSuite {
    /// Peers that stall mid-exchange: one that stops sending its body (`bodyReadTimeout`), one that stops reading the
    /// response (`sendTimeout`), and their slow-but-steady counterparts, which must be served to the end.
    @Suite(.exclusiveIO) struct HTTPServerStallTests {
        /// What a handler's body read or write came to: "completed", or the kind of the `HTTPServerError` it threw.
        private static func outcome(of operation: () async throws -> Void) async throws -> String {
            do {
                try await operation()
                return "completed"
            } catch let error as HTTPServerError {
                return error.kind.description
            }
        }

        @Test func aBodyThatStallsIsAnswered408AndItsReadFails() async throws {
            try await withTimeout {
                let before = await descriptorBaseline()
                let (outcomes, outcome) = AsyncStream.makeStream(of: String.self)
                let harness = try await ServerHarness.start(configure: { $0.bodyReadTimeout = .milliseconds(300) }) {
                    request, response in
                    outcome.yield(try await Self.outcome { _ = try await request.body.collect(upTo: 1 << 20) })
                }
                let client = try await harness.connect()
                let started = ContinuousClock.now
                try await client.send("POST /stall HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
                let bytes = await client.readUntilClosed()
                #expect(ContinuousClock.now - started >= .milliseconds(250))
                let response = try #require(try ParsedResponse.parseAll(bytes, methods: [.post]).first)
                #expect(response.status == 408)
                #expect(response.head.headers.first(name: "connection") == "close")
                var results = outcomes.makeAsyncIterator()
                #expect(await results.next() == HTTPServerError.Kind.bodyReadTimeout.description)
                await client.close()
                await harness.stop()
                #expect(await eventually { before.newlyOpened().isEmpty })
            }
        }

        @Test func aSlowButSteadyBodyIsReadToTheEnd() async throws {
            try await withTimeout {
                // The timeout grows with a sanitizer's slowdown (the body then outlasts it only in a plain build).
                let harness = try await ServerHarness.start(
                    configure: { $0.bodyReadTimeout = .milliseconds(300) * Sanitizer.timeScale }, handler: EchoTestHandler())
                let count = 10
                let digits = (0..<count).map { "\($0 % 10)" }
                let client = try await harness.connect()
                try await client.send("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: \(count)\r\n\r\n")
                // Ten bytes a tenth of a second apart: a whole second for the body, never 300 ms without a byte.
                for digit in digits {
                    try await Task.sleep(for: .milliseconds(100))
                    try await client.send(digit)
                }
                let response = try #require(try await client.readResponses(1, methods: [.post]).first)
                #expect(response.status == 200)
                #expect(response.bodyText == "POST /slow " + digits.joined())
                #expect(await !client.isClosedByPeer())
                await client.close()
                await harness.stop()
            }
        }

        @Test func aClientThatStopsReadingIsDisconnectedAndTheWriteFails() async throws {
            try await withTimeout(seconds: 20) {
                let before = await descriptorBaseline()
                let size = 64 << 20
                let (outcomes, outcome) = AsyncStream.makeStream(of: String.self)
                let harness = try await ServerHarness.start(configure: { $0.sendTimeout = .milliseconds(300) }) {
                    _, response in
                    let piece = ByteBuffer(bytes: [UInt8](repeating: 0x61, count: 1 << 20))
                    outcome.yield(
                        try await Self.outcome {
                            try await response.writeHead(HTTPResponseHead(status: .ok, headers: ["Content-Length": "\(size)"]))
                            for _ in 0..<(size >> 20) { try await response.write(piece) }
                            try await response.end()
                        })
                }
                let client = try await harness.connect(receiveBufferSize: 16 << 10)
                try await client.setReading(false)
                let started = ContinuousClock.now
                try await client.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
                var results = outcomes.makeAsyncIterator()
                #expect(await results.next() == HTTPServerError.Kind.sendTimeout.description)
                #expect(ContinuousClock.now - started >= .milliseconds(250))
                // What the kernels buffered still arrives, then the end: the server closed the connection.
                try await client.setReading(true)
                let received = await client.readUntilClosed().count
                #expect(received < size)
                #expect(await client.isClosedByPeer())
                await client.close()
                await harness.stop()
                #expect(await eventually { before.newlyOpened().isEmpty })
            }
        }

        /// A response handed over whole (`respond(_:body:)` does not wait for the drain) ends the exchange at once; the
        /// idle timer must wait until it has gone out, or a slow reader of a large response is cut off as "idle".
        @Test func aResponseQueuedWholeIsReadSlowlyPastTheIdleTimeout() async throws {
            try await withTimeout(seconds: 30) {
                let size = 8 << 20
                let harness = try await Self.wholeResponseServer(size: size) {
                    $0.idleTimeout = .milliseconds(300)
                    // Grows with a sanitizer's slowdown: only the idle timer is under test.
                    $0.sendTimeout = .seconds(1) * Sanitizer.timeScale
                }
                let client = try await harness.connect(receiveBufferSize: 64 << 10)
                try await client.setReading(false)
                try await client.send("GET /whole HTTP/1.1\r\nHost: x\r\n\r\n")
                try await Self.readSlowly(client, size: size)
                let response = try #require(try await client.readResponses(1).first)
                #expect(response.status == 200 && response.body.count == size)
                // Once it is all out, the idle timer runs as usual and closes the kept-alive connection.
                _ = await client.readUntilClosed()
                #expect(await client.isClosedByPeer())
                await client.close()
                await harness.stop()
            }
        }

        /// A server whose handler answers every request with `size` bytes in one `respond(_:body:)`: the whole
        /// response is queued at once and the exchange ends before it has gone out. `handled` hears of each request
        /// as its handler starts.
        private static func wholeResponseServer(
            size: Int, handled: AsyncStream<Void>.Continuation? = nil, configure: (inout HTTPServerConfiguration) -> Void
        ) async throws -> ServerHarness {
            let body = ByteBuffer(bytes: [UInt8](repeating: 0x61, count: size))
            return try await ServerHarness.start(configure: configure) { _, response in
                handled?.yield()
                try await response.respond(HTTPResponseHead(status: .ok, headers: ["Content-Length": "\(size)"]), body: body)
            }
        }

        /// Reads a response 256 KiB every 50 ms, reading paused in between; records an issue if the server ends the
        /// connection before `size` bytes came.
        private static func readSlowly(_ client: RawClient, size: Int) async throws {
            var target = 0
            while target < size {
                try await Task.sleep(for: .milliseconds(50))
                target += 256 << 10
                try await client.setReading(true)
                _ = await client.waitForReceivedCount(atLeast: target)
                try await client.setReading(false)
                let closed = await client.isClosedByPeer()
                // Counted after the close is known: the stream may read on, to the peer's FIN, before the pause lands.
                let count = await client.waitForReceivedCount(atLeast: 0)
                if closed && count >= size { break }
                guard !closed else {
                    let delegate = client.delegate
                    let why =
                        (try? await delegate.loop.submit {
                            "end \(delegate.value.reachedEnd) closed \(delegate.value.closed) error \(String(describing: delegate.value.closeError))"
                        }) ?? "?"
                    Issue.record("the server closed the connection after \(count) bytes: \(why)")
                    break
                }
            }
            try await client.setReading(true)
        }

        /// The connection closes after this response (`Connection: close`, or the client's half-close): the
        /// linger timer must wait until the response has gone out, and the send timer bounds it meanwhile.
        @Test(arguments: [false, true])
        func aClosingConnectionSendsItsLastResponseToASlowReader(halfClose: Bool) async throws {
            try await withTimeout(seconds: 30) {
                let size = 8 << 20
                let harness = try await Self.wholeResponseServer(size: size) {
                    $0.lingerTimeout = .milliseconds(300)
                    $0.idleTimeout = .milliseconds(300)
                    // Grows with a sanitizer's slowdown: the slow reader must not be cut by it.
                    $0.sendTimeout = .seconds(1) * Sanitizer.timeScale
                }
                let client = try await harness.connect(receiveBufferSize: 64 << 10)
                try await client.setReading(false)
                if halfClose {
                    try await client.send("GET /last HTTP/1.1\r\nHost: x\r\n\r\n")
                    try await client.shutdownWrite()
                } else {
                    try await client.send("GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                }
                if halfClose {
                    // The server read the end of stream with the response queued; the half-closed client now reads
                    // at full speed, because a paused SocketStream closes at the full hang-up the server's close
                    // brings and drops what it had not read yet (a client-side limit, noted).
                    try await client.setReading(true)
                } else {
                    try await Self.readSlowly(client, size: size)
                }
                let bytes = await client.readUntilClosed()
                let response = try #require(try ParsedResponse.parseAll(bytes, methods: [.get]).first)
                #expect(response.status == 200 && response.body.count == size)
                await client.close()
                await harness.stop()
            }
        }

        @Test func aClientThatNeverReadsAResponseQueuedWholeIsDisconnected() async throws {
            try await withTimeout(seconds: 20) {
                let before = await descriptorBaseline()
                let size = 64 << 20
                let (requests, handled) = AsyncStream.makeStream(of: Void.self)
                let harness = try await Self.wholeResponseServer(size: size, handled: handled) {
                    $0.idleTimeout = .seconds(60)
                    $0.sendTimeout = .milliseconds(300)
                }
                let client = try await harness.connect(receiveBufferSize: 16 << 10)
                try await client.setReading(false)
                let started = ContinuousClock.now
                try await client.send("GET /never HTTP/1.1\r\nHost: x\r\n\r\n")
                // The handler ran, so the connection was counted: evidence the send timer cannot undo, as it can a
                // count of 1 seen late.
                for await _ in requests { break }
                // Bounded by the send timer, not the minute of the idle one.
                #expect(await eventually(within: .seconds(10)) { harness.server.connectionCount == 0 })
                #expect(ContinuousClock.now - started >= .milliseconds(250))
                try await client.setReading(true)
                #expect(await client.readUntilClosed().count < size)
                await client.close()
                await harness.stop()
                #expect(await eventually { before.newlyOpened().isEmpty })
            }
        }

        /// A peer that reads nothing but keeps sending requests must not keep the connection alive: while a response
        /// is still queued the server reads no further request, so nothing re-arms the send timer.
        @Test func aPeerThatNeverReadsButKeepsAskingIsStillCut() async throws {
            try await withTimeout(seconds: 20) {
                let size = 8 << 20
                let (requests, handled) = AsyncStream.makeStream(of: Void.self)
                let harness = try await Self.wholeResponseServer(size: size, handled: handled) {
                    $0.idleTimeout = .seconds(60)
                    $0.sendTimeout = .milliseconds(300)
                }
                let client = try await harness.connect(receiveBufferSize: 16 << 10)
                try await client.setReading(false)
                try await client.send("GET /1 HTTP/1.1\r\nHost: x\r\n\r\n")
                // The first request was handled, so the connection was counted (a count of 1 could already be gone).
                for await _ in requests { break }
                var sent = 1
                // A request every 100 ms, as a peer pacing its asks would: the connection still ends.
                while harness.server.connectionCount > 0 && sent < 60 {
                    try await Task.sleep(for: .milliseconds(100))
                    try? await client.send("GET /\(sent) HTTP/1.1\r\nHost: x\r\n\r\n")
                    sent += 1
                }
                #expect(harness.server.connectionCount == 0, "still open after \(sent) requests")
                await client.close()
                await harness.stop()
            }
        }

        @Test func aClientReadingSlowlyButSteadilyGetsTheWholeResponse() async throws {
            try await withTimeout(seconds: 30) {
                let size = 8 << 20
                let (outcomes, outcome) = AsyncStream.makeStream(of: String.self)
                // Grows with a sanitizer's slowdown (the read then outlasts it only in a plain build).
                let harness = try await ServerHarness.start(configure: { $0.sendTimeout = .seconds(1) * Sanitizer.timeScale }) {
                    _, response in
                    // One write, so one wait for the drain that lasts far longer than the send timeout: only the
                    // progress made meanwhile keeps it going.
                    let body = ByteBuffer(bytes: [UInt8](repeating: 0x62, count: size))
                    outcome.yield(
                        try await Self.outcome {
                            try await response.writeHead(HTTPResponseHead(status: .ok, headers: ["Content-Length": "\(size)"]))
                            try await response.write(body)
                            try await response.end()
                        })
                }
                let client = try await harness.connect(receiveBufferSize: 64 << 10)
                try await client.setReading(false)
                try await client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
                // 256 KiB every 50 ms: about 1.6 s for the body, beyond the 1 s timeout, with progress in every second
                // (a 1 s timeout leaves room for the kernel, which reports a full send buffer writable only once a
                // third of it is free).
                try await Self.readSlowly(client, size: size)
                let response = try #require(try await client.readResponses(1).first)
                #expect(response.status == 200)
                #expect(response.body.count == size)
                var results = outcomes.makeAsyncIterator()
                #expect(await results.next() == "completed")
                #expect(await !client.isClosedByPeer())
                await client.close()
                await harness.stop()
            }
        }
    }
}
