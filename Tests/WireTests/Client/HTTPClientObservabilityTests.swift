import Glibc
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireTestSupport

extension IOSuite {
    /// Issue 30 §1 through the public API: the queue wait, Happy Eyeballs attempts and `TCP_INFO` in the metrics, the
    /// pool's waiter limit and acquire timeout, its snapshots, and the client's event listener.
    @Suite struct HTTPClientObservabilityTests {
        /// Collects a client's events.
        final class Recorder: Sendable {
            let events = Lock<[HTTPClientEvent]>([])
            var listener: HTTPClientEventListener { { event in self.events.withLock { $0.append(event) } } }
            var all: [HTTPClientEvent] { events.withLock { $0 } }

            /// The names of the events of `call` (and of the connections opened for it), in order.
            func names(call: Int) -> [String] {
                all.filter { $0.call == call }.map { String("\($0.kind)".prefix { $0 != "(" }) }
            }

            /// The number of the call whose `callStart` names `path`.
            func call(for path: String) -> Int? {
                all.first {
                    if case .callStart(_, let url) = $0.kind { return url.hasSuffix(path) }
                    return false
                }?.call
            }
        }

        /// A loopback socket bound to a port and never listening: a connect to it is refused (RST), every time, for
        /// as long as the socket stays open.
        final class RefusingPort: Sendable {
            let descriptor: CInt
            let port: Int

            init() throws {
                let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                self.descriptor = descriptor
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                let bound = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
                }
                _ = withUnsafeMutablePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
                }
                port = bound == 0 ? Int(UInt16(bigEndian: address.sin_port)) : 0
                try #require(port != 0)
            }

            deinit { close(descriptor) }
        }

        /// A resolver that answers every name with the addresses it is set to.
        final class FixedResolver: Resolver {
            let addresses: Lock<[SocketAddress]>
            init(_ addresses: [SocketAddress]) { self.addresses = Lock(addresses) }
            func resolve(host: String, port: Int) async throws -> [SocketAddress] { addresses.withLock { $0 } }
        }

        /// Waits, without a timed sleep, until `condition` holds on `client`'s only pool.
        static func waitForPool(_ client: HTTPClient, _ condition: (HTTPClientPoolSnapshot) -> Bool) async throws
            -> HTTPClientPoolSnapshot
        {
            while true {
                if let pool = client.poolSnapshots().first, condition(pool) { return pool }
                try Task.checkCancellation()
                await Task.yield()
            }
        }

        static func withServer(
            configuration: HTTPClientConfiguration = HTTPClientConfiguration(), script: @escaping ScriptedServer.Script,
            _ body: @escaping @Sendable (HTTPClient, ScriptedServer) async throws -> Void
        ) async throws {
            try await HTTPClientFaultTests.withServer(configuration: configuration, script: script, body)
        }

        static func url(_ server: ScriptedServer, _ path: String = "/") -> String { HTTPClientFaultTests.url(server, path) }

        // MARK: Metrics

        @Test func aRequestThatWaitsForTheFullPoolReportsItsQueueTime() async throws {
            var configuration = HTTPClientConfiguration()
            configuration.maxConnectionsPerHost = 1
            // The first request's answer is held back until the second waits for the one connection.
            try await Self.withServer(
                configuration: configuration,
                script: { _, request, _ in request == 0 ? .queue(ScriptedServer.ok("first")) : .respond(ScriptedServer.ok()) }
            ) { client, server in
                let first = Task { try await client.execute(HTTPClientRequest(url: Self.url(server, "/1"))) }
                _ = try await Self.waitForPool(client) { $0.leased == 1 }
                let second = Task { try await client.execute(HTTPClientRequest(url: Self.url(server, "/2"))) }
                let during = try await Self.waitForPool(client) { $0.waiters == 1 }
                #expect(during.open == 1 && during.leased == 1 && during.idle == 0 && during.connecting == 0)
                #expect(during.oldestWaiterAge != nil)
                // A leased request may not have reached the server yet: flush once its answer is held, or nothing goes out.
                #expect(await eventually { (try? await server.queuedCount()) == 1 })
                try await server.flushQueued()
                let firstResponse = try await first.value
                #expect(try await firstResponse.body.collect(upTo: 100) == ByteBuffer(string: "first"))
                let secondResponse = try await second.value
                _ = try await secondResponse.body.collect(upTo: 100)
                let metrics = secondResponse.metrics.snapshot
                // The first waited only for its connection to begin opening; the second for the first's answer.
                #expect(metrics.queued > .zero)
                #expect(metrics.queued > firstResponse.metrics.snapshot.queued)
                #expect(!firstResponse.metrics.snapshot.isReusedConnection)
                #expect(metrics.isReusedConnection)
                #expect(metrics.connectAttempts.isEmpty)
                let after = try #require(client.poolSnapshots().first)
                #expect(after.open == 1 && after.idle == 1 && after.leased == 0 && after.waiters == 0)
                #expect(after.oldestWaiterAge == nil && after.connectionsOpened == 1 && after.connectionsClosed == 0)
            }
        }

        @Test func everyHappyEyeballsAttemptIsListedWithTheRefusedOneFirst() async throws {
            let refusing = try RefusingPort()
            let resolver = FixedResolver([])
            var configuration = HTTPClientConfiguration()
            configuration.resolver = resolver
            try await Self.withServer(configuration: configuration, script: { _, _, _ in .respond(ScriptedServer.ok()) }) {
                client, server in
                let refused = try SocketAddress(ipAddress: "127.0.0.1", port: refusing.port)
                resolver.addresses.withLock { $0 = [refused, server.address] }
                let response = try await client.execute(
                    HTTPClientRequest(url: "http://two.test:\(server.address.port!)/"))
                _ = try await response.body.collect(upTo: 100)
                let metrics = response.metrics.snapshot
                #expect(metrics.connectAttempts.count == 2)
                let (first, second) = (metrics.connectAttempts[0], metrics.connectAttempts[1])
                #expect(first.address == refused)
                #expect(first.error?.errno == .connectionRefused)
                let firstEnd = try #require(first.end)
                #expect(first.start <= firstEnd)
                #expect(second.address == server.address)
                #expect(second.error == nil)
                // The second starts when the first fails (RFC 8305 §5), and ends connected.
                #expect(second.start >= firstEnd)
                #expect(try #require(second.end) <= metrics.timings.connected!)
            }
        }

        @Test func aTCPInfoSampleIsTakenOnlyWhenAskedFor() async throws {
            for samples in [false, true] {
                var configuration = HTTPClientConfiguration()
                configuration.samplesTCPInfo = samples
                try await Self.withServer(configuration: configuration, script: { _, _, _ in .respond(ScriptedServer.ok()) }) {
                    client, server in
                    let response = try await client.execute(HTTPClientRequest(url: Self.url(server)))
                    _ = try await response.body.collect(upTo: 100)
                    let info = response.metrics.snapshot.tcpInfo
                    if samples {
                        let info = try #require(info)
                        #expect(info.smoothedRTT > .zero)
                        #expect(info.congestionWindow > 0 && info.sendMSS > 0)
                        #expect(info.totalRetransmits == 0)
                        // The request head went out and was acknowledged.
                        #expect(try #require(info.bytesAcked) > 0)
                        #expect(info.deliveryRate != nil)
                    } else {
                        #expect(info == nil)
                    }
                }
            }
        }

        // MARK: Backpressure

        @Test func aRequestOverTheWaiterLimitFailsAtOnceWithThePoolsState() async throws {
            var configuration = HTTPClientConfiguration()
            configuration.maxConnectionsPerHost = 1
            configuration.maxWaitersPerHost = 1
            try await Self.withServer(
                configuration: configuration,
                script: { _, request, _ in request == 0 ? .queue(ScriptedServer.ok()) : .respond(ScriptedServer.ok()) }
            ) { client, server in
                let first = Task { try await client.execute(HTTPClientRequest(url: Self.url(server))) }
                _ = try await Self.waitForPool(client) { $0.leased == 1 }
                let second = Task { try await client.execute(HTTPClientRequest(url: Self.url(server))) }
                _ = try await Self.waitForPool(client) { $0.waiters == 1 }
                let error = await #expect(throws: HTTPClientError.self) {
                    try await client.execute(HTTPClientRequest(url: Self.url(server)))
                }
                #expect(error?.code == .poolWaiterLimit)
                #expect(error?.mayHaveBeenProcessed == false)
                let state = try #require(error?.poolSnapshot)
                #expect(state.open == 1 && state.leased == 1 && state.idle == 0 && state.connecting == 0 && state.waiters == 1)
                // A leased request may not have reached the server yet: flush once its answer is held, or nothing goes out.
                #expect(await eventually { (try? await server.queuedCount()) == 1 })
                try await server.flushQueued()
                _ = try await first.value.body.collect(upTo: 100)
                _ = try await second.value.body.collect(upTo: 100)
                #expect(try await server.connectionCount() == 1)
            }
        }

        @Test func aWaitLongerThanTheAcquireTimeoutFailsWithThePoolsState() async throws {
            var configuration = HTTPClientConfiguration()
            configuration.maxConnectionsPerHost = 1
            configuration.connectionAcquireTimeout = .milliseconds(100)
            try await Self.withServer(
                configuration: configuration,
                script: { _, request, _ in request == 0 ? .queue(ScriptedServer.ok()) : .respond(ScriptedServer.ok()) }
            ) { client, server in
                let first = Task { try await client.execute(HTTPClientRequest(url: Self.url(server))) }
                _ = try await Self.waitForPool(client) { $0.leased == 1 }
                let error = await #expect(throws: HTTPClientError.self) {
                    try await client.execute(HTTPClientRequest(url: Self.url(server)))
                }
                #expect(error?.code == .connectionAcquireTimeout)
                let state = try #require(error?.poolSnapshot)
                #expect(state.open == 1 && state.leased == 1 && state.connecting == 0 && state.waiters == 1)
                #expect(try #require(state.oldestWaiterAge) >= .milliseconds(100))
                // The timed-out waiter left the pool: the held answer frees the connection for the next request.
                #expect(client.poolSnapshots().first?.waiters == 0)
                // A leased request may not have reached the server yet: flush once its answer is held, or nothing goes out.
                #expect(await eventually { (try? await server.queuedCount()) == 1 })
                try await server.flushQueued()
                _ = try await first.value.body.collect(upTo: 100)
                let next = try await client.execute(HTTPClientRequest(url: Self.url(server)))
                #expect(try await next.body.collect(upTo: 100) == ByteBuffer(string: "ok"))
                #expect(next.metrics.snapshot.isReusedConnection)
            }
        }

        @Test func aNegativeWaiterLimitOrAZeroAcquireTimeoutIsRefused() {
            var configuration = HTTPClientConfiguration()
            configuration.maxWaitersPerHost = -1
            #expect(throws: HTTPClientError.self) { try configuration.validate() }
            configuration.maxWaitersPerHost = 0
            configuration.connectionAcquireTimeout = .zero
            #expect(throws: HTTPClientError.self) { try configuration.validate() }
        }

        /// A burst of connect timeouts (a listener whose accept queue is full drops further SYNs), then of read
        /// timeouts, on one origin; after it the pool serves as before, with nothing left over: no connection being
        /// opened or leased, no waiter, and (checked by the harness after shutdown) no descriptor.
        @Test func thePoolRecoversFullyAfterABurstOfConnectAndReadTimeouts() async throws {
            // backlog 0: the kernel queues one connection and then drops SYNs (nobody accepts).
            let full = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(full) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(full, $0, length) }
            }
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(full, $0, &length) }
            }
            try #require(listen(full, 0) == 0)
            let fullAddress = try SocketAddress(ipAddress: "127.0.0.1", port: Int(UInt16(bigEndian: address.sin_port)))
            // Fill the accept queue (blocking connects: each completes once queued, or not at all).
            var fillers: [CInt] = []
            defer { for filler in fillers { close(filler) } }
            for _ in 0..<2 {
                let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue), 0)
                _ = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) }
                }
                fillers.append(filler)
            }

            let resolver = FixedResolver([fullAddress])
            var configuration = HTTPClientConfiguration()
            configuration.resolver = resolver
            configuration.maxConnectionsPerHost = 4
            // Both grow with a sanitizer's slowdown: dropped SYNs and silence still never complete, and the answered
            // requests after the bursts must not time out.
            configuration.connectTimeout = .milliseconds(200) * Sanitizer.timeScale
            configuration.readTimeout = .milliseconds(200) * Sanitizer.timeScale
            let silentRequests = Atomic<Int>(0)
            try await Self.withServer(
                configuration: configuration,
                script: { _, _, head in
                    // The read-timeout burst: the first eight requests to /silent get no answer.
                    if head.hasPrefix("GET /silent "), silentRequests.add(1, ordering: .relaxed).newValue <= 8 { return .silence }
                    return .respond(ScriptedServer.ok())
                }
            ) { client, server in
                let url = "http://flaky.test:\(server.address.port!)"
                // Connect timeouts: eight requests at once against the full backlog.
                let connectErrors = await withTaskGroup(of: HTTPClientError.Code?.self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            do {
                                _ = try await client.execute(HTTPClientRequest(url: url + "/"))
                                return nil
                            } catch { return (error as? HTTPClientError)?.code }
                        }
                    }
                    return await group.reduce(into: [HTTPClientError.Code?]()) { $0.append($1) }
                }
                #expect(connectErrors.allSatisfy { $0 == .connectTimeout }, "\(connectErrors)")
                let afterConnects = try #require(client.poolSnapshots().first)
                #expect(afterConnects.open == 0 && afterConnects.connecting == 0 && afterConnects.waiters == 0)

                // Read timeouts: the origin now resolves to a server that ignores the next eight requests.
                resolver.addresses.withLock { $0 = [server.address] }
                let readErrors = await withTaskGroup(of: HTTPClientError.Code?.self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            do {
                                _ = try await client.execute(HTTPClientRequest(url: url + "/silent"))
                                return nil
                            } catch { return (error as? HTTPClientError)?.code }
                        }
                    }
                    return await group.reduce(into: [HTTPClientError.Code?]()) { $0.append($1) }
                }
                #expect(readErrors.allSatisfy { $0 == .readTimeout }, "\(readErrors)")
                // The timed-out connections are closed on their loops after the errors reach the callers: the pool
                // settles a moment later.
                #expect(
                    await eventually {
                        guard let state = client.poolSnapshots().first else { return false }
                        return state.leased == 0 && state.connecting == 0 && state.waiters == 0 && state.open == state.idle
                    }, "\(client.poolSnapshots())")

                // Normal service: 32 requests, 8 in flight at a time, all answered within the per-host limit.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for round in 0..<4 {
                        for _ in 0..<8 {
                            group.addTask {
                                let response = try await client.execute(HTTPClientRequest(url: url + "/after\(round)"))
                                #expect(try await response.body.collect(upTo: 100) == ByteBuffer(string: "ok"))
                            }
                        }
                        try await group.waitForAll()
                    }
                }
                // A connection goes back to the pool on its loop just after its body's end reaches the caller: the
                // pool settles a moment after the last request returns, as after the timeouts above.
                #expect(
                    await eventually {
                        guard let state = client.poolSnapshots().first else { return false }
                        return state.leased == 0 && state.connecting == 0 && state.waiters == 0 && state.open == state.idle
                    }, "\(client.poolSnapshots())")
                let after = try #require(client.poolSnapshots().first)
                #expect(after.leased == 0 && after.connecting == 0 && after.waiters == 0 && after.oldestWaiterAge == nil)
                #expect(after.open == after.idle && after.open <= 4)
                #expect(after.connectionsOpened - after.connectionsClosed == after.open)
            }
        }

        // MARK: Events

        static func names(_ events: [HTTPClientEvent]) -> [String] {
            events.map { String("\($0.kind)".prefix { $0 != "(" }) }
        }

        @Test func thePlainRequestsEventsComeInOrder() async throws {
            let recorder = Recorder()
            var configuration = HTTPClientConfiguration()
            configuration.eventListener = recorder.listener
            try await Self.withServer(configuration: configuration, script: { _, _, _ in .respond(ScriptedServer.ok()) }) {
                client, server in
                let response = try await client.execute(
                    HTTPClientRequest(
                        url: "http://localhost:\(server.address.port!)/plain", method: .post,
                        body: .bytes(ByteBuffer(string: "hello"))))
                _ = try await response.body.collect(upTo: 100)
                let call = try #require(recorder.call(for: "/plain"))
                let names = recorder.names(call: call)
                let expectedConnect = names.filter { $0 == "connectStart" }.count
                #expect(expectedConnect >= 1)
                // localhost may resolve to ::1 and 127.0.0.1: each attempt starts and ends before the connection is acquired.
                #expect(names.filter { $0 == "connectEnd" }.count == expectedConnect)
                #expect(
                    names.filter { !$0.hasPrefix("connect") || $0.hasPrefix("connection") } == [
                        "callStart", "dnsStart", "dnsEnd", "connectionAcquired", "requestHeadSent", "requestBodySent",
                        "responseHeadReceived", "responseBodyReceived", "connectionReleased", "callEnd",
                    ])
                #expect(names.firstIndex(of: "dnsEnd")! < names.firstIndex(of: "connectStart")!)
                #expect(names.lastIndex(of: "connectEnd")! < names.firstIndex(of: "connectionAcquired")!)
                let events = recorder.all.filter { $0.call == call }
                #expect(events.map(\.time) == events.map(\.time).sorted())
                // Every event after the setup names the connection the metrics name.
                let connection = try #require(response.metrics.snapshot.connection)
                #expect(events.dropFirst().allSatisfy { $0.connection == connection })
                #expect(events.first?.connection == nil)
                if case .requestBodySent(let bytes) = events.first(where: { "\($0.kind)".hasPrefix("requestBodySent") })?.kind {
                    #expect(bytes == 5)
                }
                if case .connectionAcquired(let reused) = events.first(where: { "\($0.kind)".hasPrefix("connectionAcquired") })?
                    .kind
                {
                    #expect(!reused)
                }
            }
        }

        @Test func aReusedConnectionsCallHasNoSetupEvents() async throws {
            let recorder = Recorder()
            var configuration = HTTPClientConfiguration()
            configuration.eventListener = recorder.listener
            try await Self.withServer(configuration: configuration, script: { _, _, _ in .respond(ScriptedServer.ok()) }) {
                client, server in
                _ = try await client.execute(HTTPClientRequest(url: Self.url(server, "/one"))).body.collect(upTo: 100)
                let second = try await client.execute(HTTPClientRequest(url: Self.url(server, "/two")))
                _ = try await second.body.collect(upTo: 100)
                let call = try #require(recorder.call(for: "/two"))
                #expect(
                    recorder.names(call: call) == [
                        "callStart", "connectionAcquired", "requestHeadSent", "responseHeadReceived", "responseBodyReceived",
                        "connectionReleased", "callEnd",
                    ])
                let acquired = recorder.all.first { $0.call == call && "\($0.kind)".hasPrefix("connectionAcquired") }
                if case .connectionAcquired(let reused)? = acquired?.kind { #expect(reused) }
                let first = try #require(recorder.call(for: "/one"))
                #expect(acquired?.connection == recorder.all.first { $0.call == first && $0.connection != nil }?.connection)
            }
        }

        @Test func aFailedCallEndsWithCallFailed() async throws {
            let refusing = try RefusingPort()
            let recorder = Recorder()
            var configuration = HTTPClientConfiguration()
            configuration.eventListener = recorder.listener
            let client = try HTTPClient(configuration: configuration)
            let error = await #expect(throws: HTTPClientError.self) {
                try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(refusing.port)/refused"))
            }
            #expect(error?.code == .connectFailed)
            await client.shutdown()
            let call = try #require(recorder.call(for: "/refused"))
            #expect(
                recorder.names(call: call) == ["callStart", "dnsStart", "dnsEnd", "connectStart", "connectEnd", "callFailed"])
            let ended = recorder.all.first { $0.call == call && "\($0.kind)".hasPrefix("connectEnd") }
            if case .connectEnd(_, let ioError, let abandoned)? = ended?.kind {
                #expect(ioError?.errno == .connectionRefused && !abandoned)
            }
            if case .callFailed(let failure)? = recorder.all.last(where: { $0.call == call })?.kind {
                #expect(failure.code == .connectFailed)
            }
        }

        @Test func aReadTimeoutInTheBodyEndsWithCallFailed() async throws {
            let recorder = Recorder()
            var configuration = HTTPClientConfiguration()
            configuration.eventListener = recorder.listener
            // Grows with a sanitizer's slowdown, so the head still comes in time.
            configuration.readTimeout = .milliseconds(100) * Sanitizer.timeScale
            // A head announcing ten bytes, then silence.
            try await Self.withServer(
                configuration: configuration,
                script: { _, _, _ in .respond("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc") }
            ) { client, server in
                let response = try await client.execute(HTTPClientRequest(url: Self.url(server, "/short")))
                await #expect(throws: (any Error).self) { _ = try await response.body.collect(upTo: 100) }
                let call = try #require(recorder.call(for: "/short"))
                let names = recorder.names(call: call)
                #expect(names.last == "callFailed")
                #expect(!names.contains("callEnd") && !names.contains("responseBodyReceived"))
                #expect(names.contains("responseHeadReceived") && names.contains("connectionReleased"))
            }
        }
    }
}
