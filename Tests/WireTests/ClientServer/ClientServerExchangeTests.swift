import Testing
import Wire

/// Answers with what the server received: `X-Method`, `X-Body` (`<length>:<fnv-1a hex>`),
/// `X-Authorization` (the field or `none`) and a body `"<METHOD> <length>:<hex>"`, so the client
/// can check both ends of every exchange without trusting either side's own report.
@Sendable func echoSummary(_ request: HTTPServerRequest, _ response: HTTPResponseWriter) async throws {
    var checksum = Checksum()
    for try await chunk in request.body { checksum.add(chunk) }
    let summary = "\(request.method) \(checksum.text)"
    let head = HTTPResponseHead(
        status: .ok,
        headers: [
            "X-Method": "\(request.method)",
            "X-Body": checksum.text,
            "X-Authorization": request.headers.first(name: "authorization") ?? "none",
            "X-Target": request.target,
        ])
    try await response.respond(head, body: ByteBuffer(string: summary))
}

extension IOSuite {
    /// Wire's client against Wire's server: methods, bodies, keep-alive, churn and redirects.
    @Suite struct ClientServerExchangeTests {
        /// 0 bytes, 1 byte and 1 MiB, the sizes where framing bugs hide (empty, shorter than any
        /// buffer, larger than every watermark).
        static let bodySizes = [0, 1, 1 << 20]

        @Test(arguments: [HTTPMethod.get, .head, .post, .put, .delete])
        func methodWithBodies(_ method: HTTPMethod) async throws {
            try await ClientServer.run(handler: echoSummary) { pair in
                for size in Self.bodySizes {
                    // Sizes not a multiple of the pattern's period, so each exchange differs.
                    let sent =
                        size == 0
                        ? ByteBuffer()
                        : Pattern.chunk(size, length: min(size, Pattern.blockSize))
                            .repeated(toLength: size)
                    let expected = Checksum.of(sent)
                    let response = try await pair.client.execute(
                        HTTPClientRequest(url: pair.url("/echo"), method: method, body: .bytes(sent)))
                    let body = try await response.body.collect(upTo: 1 << 16)
                    let summary = "\(method) \(expected.text)"
                    #expect(response.status == .ok, "\(method) \(size)")
                    #expect(response.headers.first(name: "x-method") == "\(method)", "\(method) \(size)")
                    #expect(response.headers.first(name: "x-body") == expected.text, "\(method) \(size)")
                    #expect(response.headers.first(name: "content-length") == String(summary.utf8.count), "\(method) \(size)")
                    if method == .head {
                        #expect(body.readableBytes == 0, "HEAD must get no body, got \(body.readableBytes) bytes")
                    } else {
                        #expect(body == ByteBuffer(string: summary), "\(method) \(size)")
                    }
                }
                // The same three exchanges ran over one connection: every framing above left
                // the connection in a state fit for the next request.
                let last = try await pair.client.execute(HTTPClientRequest(url: pair.url("/after"), method: method))
                _ = try await last.body.collect(upTo: 1 << 16)
                #expect(last.metrics.snapshot.isReusedConnection)
            }
        }

        @Test func aRequestWithoutBodyStillSendsItsMethod() async throws {
            try await ClientServer.run(handler: echoSummary) { pair in
                for method in [HTTPMethod.get, .head, .post, .put, .delete] {
                    let response = try await pair.client.execute(HTTPClientRequest(url: pair.url("/none"), method: method))
                    _ = try await response.body.collect(upTo: 1 << 16)
                    #expect(response.headers.first(name: "x-method") == "\(method)")
                    #expect(response.headers.first(name: "x-body") == Checksum().text)
                }
            }
        }

        @Test func keepAliveServesAHundredRequestsOnOneConnection() async throws {
            let peers = Shared<Set<Int>>([])
            try await ClientServer.run(handler: { request, response in
                // The client's port identifies its connection as the server saw it.
                peers.update { _ = $0.insert(request.remoteAddress?.port ?? -1) }
                try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: request.target))
            }) { pair in
                for index in 0..<100 {
                    let response = try await pair.client.execute(HTTPClientRequest(url: pair.url("/\(index)")))
                    #expect(try await response.body.collect(upTo: 100) == ByteBuffer(string: "/\(index)"))
                    #expect(response.metrics.snapshot.isReusedConnection == (index > 0), "request \(index)")
                }
                #expect(peers.value.count == 1, "the server accepted \(peers.value.count) connections for 100 requests")
                #expect(pair.server.connectionCount == 1)
            }
        }

        /// 10,000 requests from 8 concurrent tasks (so the pool runs several connections), every
        /// 100th asking for `Connection: close` (so connections also close and reopen, on both
        /// sides). The descriptor check is in `ClientServer.run`, after everything is shut down.
        @Test func tenThousandRequestsLeakNoDescriptor() async throws {
            let peers = Shared<Set<Int>>([])
            let handled = Shared(0)
            try await ClientServer.run(
                seconds: 110,
                handler: { request, response in
                    handled.update { $0 += 1 }
                    try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "ok"))
                }
            ) { pair in
                let workers = 8
                let perWorker = 10_000 / workers
                let started = ContinuousClock.now
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<workers {
                        group.addTask {
                            for index in 0..<perWorker {
                                var request = HTTPClientRequest(url: pair.url("/\(worker)/\(index)"))
                                if index % 100 == 99 { request.headers.add(name: "Connection", value: "close") }
                                let response = try await pair.client.execute(request)
                                #expect(try await response.body.collect(upTo: 10) == ByteBuffer(string: "ok"))
                                // Counted by the client's connection numbers, not the server's view of the client's
                                // ports: a port freed by a closed connection may be given to the next one.
                                let connection = response.metrics.snapshot.connection ?? -1
                                peers.update { _ = $0.insert(connection) }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let elapsed = ContinuousClock.now - started
                print("client-server: 10,000 requests in \(elapsed), \(peers.value.count) connections")
                #expect(handled.value == 10_000)
                // At least one connection per `Connection: close` (12 for each worker's 1,250 requests), and at most
                // that plus the pool's 8.
                let closes = workers * (perWorker / 100)
                #expect(peers.value.count >= closes)
                #expect(peers.value.count <= closes + workers)
            }
        }

        // MARK: Redirects

        /// Serves `/301`, `/307`, `/chain/<n>` and `/away?to=<url>` as redirects, everything else
        /// through `echoSummary`.
        @Sendable static func redirector(_ request: HTTPServerRequest, _ response: HTTPResponseWriter) async throws {
            func redirect(_ status: Int, to location: String) async throws {
                // Drain the body the client sent: a redirect is a complete answer, and the
                // connection stays usable only if the request was read to its end.
                try await request.body.drain()
                try await response.respond(HTTPResponseHead(status: HTTPStatus(code: status), headers: ["Location": location]))
            }
            let target = request.target
            if target == "/301" { return try await redirect(301, to: "/echo") }
            if target == "/307" { return try await redirect(307, to: "/echo") }
            if target.hasPrefix("/away?to=") { return try await redirect(307, to: String(target.dropFirst("/away?to=".count))) }
            if target.hasPrefix("/chain/"), let hops = Int(target.dropFirst("/chain/".count)) {
                // Alternate permanent and temporary redirects down to the echo.
                return try await redirect(hops % 2 == 0 ? 308 : 307, to: hops > 1 ? "/chain/\(hops - 1)" : "/echo")
            }
            try await echoSummary(request, response)
        }

        @Test func a301TurnsPostIntoGetWithoutBody() async throws {
            try await ClientServer.run(handler: Self.redirector) { pair in
                let response = try await pair.client.execute(
                    HTTPClientRequest(
                        url: pair.url("/301"), method: .post, headers: ["Content-Type": "text/plain"],
                        body: .bytes(ByteBuffer(string: "payload"))))
                _ = try await response.body.collect(upTo: 1 << 16)
                #expect(response.status == .ok)
                #expect(response.headers.first(name: "x-method") == "GET")
                #expect(response.headers.first(name: "x-body") == Checksum().text)
                #expect(response.headers.first(name: "x-target") == "/echo")
                #expect(response.metrics.snapshot.redirects == 1)
                #expect(response.url.target == "/echo")
            }
        }

        @Test func a307KeepsMethodAndBody() async throws {
            try await ClientServer.run(handler: Self.redirector) { pair in
                let payload = Pattern.chunk(7).repeated(toLength: 100_000)
                let response = try await pair.client.execute(
                    HTTPClientRequest(
                        url: pair.url("/307"), method: .post, headers: ["Authorization": "Bearer same-origin"],
                        body: .bytes(payload)))
                _ = try await response.body.collect(upTo: 1 << 16)
                #expect(response.headers.first(name: "x-method") == "POST")
                #expect(response.headers.first(name: "x-body") == Checksum.of(payload).text)
                // Same origin: the credentials were meant for this server and stay.
                #expect(response.headers.first(name: "x-authorization") == "Bearer same-origin")
                #expect(response.metrics.snapshot.redirects == 1)
            }
        }

        @Test func aChainOf307And308KeepsTheBodyThroughEveryHop() async throws {
            try await ClientServer.run(handler: Self.redirector) { pair in
                let response = try await pair.client.execute(
                    HTTPClientRequest(
                        url: pair.url("/chain/4"), method: .put, body: .bytes(ByteBuffer(string: "four hops"))))
                _ = try await response.body.collect(upTo: 1 << 16)
                #expect(response.headers.first(name: "x-method") == "PUT")
                #expect(response.headers.first(name: "x-body") == Checksum.of(ByteBuffer(string: "four hops")).text)
                #expect(response.metrics.snapshot.redirects == 4)
            }
        }

        @Test func authorizationIsDroppedWhenTheRedirectLeavesTheOrigin() async throws {
            // Two servers on two ports of 127.0.0.1: different origins (RFC 6454: the port is
            // part of the origin), so credentials for the first must not reach the second. The
            // second runs on the pair's group and is shut down inside the run, so the run's
            // descriptor count covers its sockets too (nested runs raced: the inner run counted
            // the outer server's side of the redirect's connection before that server closed it).
            try await ClientServer.run(handler: Self.redirector) { pair in
                let configuration = HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0))
                let other = HTTPServer(configuration: configuration, group: pair.group, handler: Self.redirector)
                let otherPort = try await other.start().port!
                let outcome: Result<HTTPClientResponse, any Error>
                do {
                    let response = try await pair.client.execute(
                        HTTPClientRequest(
                            url: pair.url("/away?to=http://127.0.0.1:\(otherPort)/echo"), method: .post,
                            headers: ["Authorization": "Bearer first-origin-only"], body: .bytes(ByteBuffer(string: "abc"))))
                    _ = try await response.body.collect(upTo: 1 << 16)
                    outcome = .success(response)
                } catch {
                    outcome = .failure(error)
                }
                await other.shutdown(gracePeriod: .seconds(2))
                let response = try outcome.get()
                #expect(response.status == .ok)
                #expect(response.url.port == otherPort)
                #expect(response.headers.first(name: "x-authorization") == "none")
                // 307 still keeps method and body across origins.
                #expect(response.headers.first(name: "x-method") == "POST")
                #expect(response.headers.first(name: "x-body") == Checksum.of(ByteBuffer(string: "abc")).text)
            }
        }
    }
}

extension ByteBuffer {
    /// This buffer's bytes repeated (and cut) to exactly `length` bytes.
    func repeated(toLength length: Int) -> ByteBuffer {
        var out = ByteBuffer(capacity: length)
        while out.readableBytes < length {
            out.writeBuffer(slice(at: 0, length: Swift.min(readableBytes, length - out.readableBytes)))
        }
        return out
    }
}
