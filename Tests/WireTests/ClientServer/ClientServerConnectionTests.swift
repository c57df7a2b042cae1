import Testing
import Wire

/// The pattern verifier the large-transfer tests rely on: if it could not fail, they would prove
/// nothing. No sockets, so it sits outside `IOSuite`.
@Suite struct PatternVerifierTests {
    @Test func acceptsThePatternCutAnywhere() {
        var whole = ByteBuffer()
        for index in 0..<3 { whole.writeBuffer(Pattern.chunk(index)) }
        var verifier = Pattern.Verifier()
        // Odd cuts, crossing the 8-byte stamps and the block boundaries.
        var offset = 0
        for size in [3, 5, 65_530, 7, 1, 100_000, 31_062] {
            verifier.check(whole.slice(at: offset, length: size))
            offset += size
        }
        #expect(offset == whole.readableBytes)
        #expect(verifier.offset == whole.readableBytes)
        #expect(verifier.firstMismatch == nil)
    }

    @Test func findsAMissingBlock() {
        var verifier = Pattern.Verifier()
        verifier.check(Pattern.chunk(0))
        verifier.check(Pattern.chunk(2))  // block 1 lost: the stamp says 2 where 1 was due
        #expect(verifier.firstMismatch == Pattern.blockSize)
    }

    @Test func findsACorruptedByte() {
        var bytes = Pattern.chunk(0).readableBytesArray
        bytes[40_000] ^= 1
        var verifier = Pattern.Verifier()
        verifier.check(ByteBuffer(bytes: bytes))
        #expect(verifier.firstMismatch != nil)
    }
}

extension IOSuite {
    /// How a connection's life looks from both ends: abandoned bodies and uploads, HEAD on a
    /// streamed response, and the addresses each side reports.
    @Suite struct ClientServerConnectionTests {
        @Test func aHeadAnswerStreamedWithContentLengthHasNoBodyAndKeepsTheConnection() async throws {
            let length = 100_000
            try await ClientServer.run(handler: { _, response in
                // The handler streams as for GET; for HEAD the server must drop the bytes.
                try await response.writeHead(HTTPResponseHead(status: .ok, headers: ["Content-Length": String(length)]))
                try await response.write(Pattern.chunk(0))
                try await response.write(Pattern.chunk(1, length: length - Pattern.blockSize))
                try await response.end()
            }) { pair in
                let head = try await pair.client.execute(HTTPClientRequest(url: pair.url("/h"), method: .head))
                #expect(head.headers.first(name: "content-length") == String(length))
                #expect(try await head.body.collect(upTo: 1 << 20).readableBytes == 0)
                // Had any body byte been sent, it would be read as the start of this response.
                let get = try await pair.client.execute(HTTPClientRequest(url: pair.url("/h")))
                var verifier = Pattern.Verifier()
                for try await chunk in get.body { verifier.check(chunk) }
                #expect(verifier.offset == length)
                #expect(verifier.firstMismatch == nil)
                #expect(get.metrics.snapshot.isReusedConnection)
            }
        }

        @Test func theClientsLocalAddressIsTheServersRemoteAddress() async throws {
            let seen = Shared<(remote: SocketAddress?, local: SocketAddress?)>((nil, nil))
            try await ClientServer.run(handler: { request, response in
                seen.update { $0 = (request.remoteAddress, request.localAddress) }
                try await response.respond(HTTPResponseHead(status: .ok))
            }) { pair in
                let response = try await pair.client.execute(HTTPClientRequest(url: pair.url("/")))
                _ = try await response.body.collect(upTo: 10)
                let metrics = response.metrics.snapshot
                #expect(metrics.remoteAddress == (try SocketAddress(ipAddress: "127.0.0.1", port: pair.port)))
                #expect(seen.value.remote?.port != nil)
                // Documented as "the local address"; the two ends of one TCP connection must agree, each address
                // whole: the server learns the client's from accept4(2) and its own from the listener's.
                #expect(
                    metrics.localAddress == seen.value.remote,
                    "metrics.localAddress is \(String(describing: metrics.localAddress)), the server saw \(String(describing: seen.value.remote))"
                )
                #expect(seen.value.local == metrics.remoteAddress)
            }
        }

        @Test func aResponseDroppedUnreadGivesItsConnectionBack() async throws {
            // One connection per origin, and a body far above the client's 256 KiB body
            // watermark: the connection stops reading with the response half-read. The docs
            // (`HTTPClientResponse.body`, `HTTPBody`) promise that dropping the response tells
            // the connection, which closes, so the pool's one slot frees up.
            var configuration = HTTPClientConfiguration()
            configuration.maxConnectionsPerHost = 1
            let total = 8 << 20
            try await ClientServer.run(
                seconds: 30, client: configuration,
                handler: { request, response in
                    guard request.target == "/big" else {
                        return try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "ok"))
                    }
                    try await response.writeHead(HTTPResponseHead(status: .ok, headers: ["Content-Length": String(total)]))
                    for index in 0..<(total / Pattern.blockSize) { try await response.write(Pattern.chunk(index)) }
                    try await response.end()
                }
            ) { pair in
                do {
                    let dropped = try await pair.client.execute(HTTPClientRequest(url: pair.url("/big")))
                    #expect(dropped.status == .ok)
                }  // `dropped` goes out of scope unread here.
                // Bounded: if the slot never frees, this waits for a lease until the timeout.
                let next = try await withTimeout(seconds: 5) {
                    let response = try await pair.client.execute(HTTPClientRequest(url: pair.url("/small")))
                    return try await response.body.collect(upTo: 10)
                }
                #expect(next == ByteBuffer(string: "ok"))
            }
        }

        @Test func cancellingAStreamedUploadEndsTheServersBodyWithAnError() async throws {
            let serverOutcome = AsyncStreamBox<String>()
            let uploading = AsyncStreamBox<Void>()
            let peers = Shared<[Int]>([])
            try await ClientServer.run(
                seconds: 60,
                handler: { request, response in
                    peers.update { $0.append(request.remoteAddress?.port ?? -1) }
                    guard request.target == "/upload" else {
                        return try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "ok"))
                    }
                    var received = 0
                    do {
                        for try await chunk in request.body {
                            received += chunk.readableBytes
                            if received >= 1 << 20 && received - chunk.readableBytes < 1 << 20 { uploading.yield(()) }
                        }
                        serverOutcome.yield("completed after \(received) bytes")
                    } catch {
                        serverOutcome.yield("body failed: \(error)")
                        throw error
                    }
                    try await response.respond(HTTPResponseHead(status: .ok))
                }
            ) { pair in
                let total = 1 << 30
                let uploader = Task {
                    try await pair.client.execute(
                        HTTPClientRequest(
                            url: pair.url("/upload"), method: .put, body: .stream(length: total, Pattern.stream(total: total))))
                }
                try await uploading.next()
                uploader.cancel()
                let result = await uploader.result
                switch result {
                case .success(let response):
                    Issue.record("the cancelled upload got a response: \(response.status)")
                case .failure(let error):
                    #expect((error as? HTTPClientError)?.code == .cancelled, "ended with \(error)")
                }
                // A Content-Length body cut short is an error for the server, never a complete request.
                let outcome = try await serverOutcome.next()
                #expect(outcome.hasPrefix("body failed"), "server handler: \(outcome)")
                let next = try await pair.client.execute(HTTPClientRequest(url: pair.url("/after")))
                #expect(try await next.body.collect(upTo: 10) == ByteBuffer(string: "ok"))
                #expect(next.metrics.snapshot.isReusedConnection == false)
                #expect(Set(peers.value).count == 2, "server saw client ports \(peers.value)")
            }
        }
    }
}
