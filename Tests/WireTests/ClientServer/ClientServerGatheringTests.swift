import Synchronization
import Testing
import Wire

extension IOSuite {
    /// The connections tell their streams what is still due, and a body's end arrives by the receive watermark alone:
    /// with the streams' checks pushed an hour out, a watermark above what is due would hang the exchange until the
    /// test's timeout. Downloads with a Content-Length and chunked, an upload, then a small exchange on the same
    /// keep-alive connection (the watermark must be back to 1 byte for its head).
    @Suite struct ClientServerGatheringTests {
        /// Not a multiple of a read, so the last watermark is below a read's worth.
        static let size = 16 * 1024 * 1024 + 12_345

        /// Runs `body` with the checks of streams made meanwhile an hour apart.
        static func withoutChecks(_ body: () async throws -> Void) async throws {
            let previous = SocketStream.initialGatheringCheckNanoseconds.exchange(3_600_000_000_000, ordering: .relaxed)
            defer { SocketStream.initialGatheringCheckNanoseconds.store(previous, ordering: .relaxed) }
            try await body()
        }

        @Test func bodiesEndByTheWatermarkAloneOnAKeptAliveConnection() async throws {
            try await Self.withoutChecks {
                try await ClientServer.run(
                    seconds: 90,
                    handler: { request, response in
                        switch request.head.target {
                        case "/length":
                            try await response.writeHead(
                                HTTPResponseHead(status: .ok, headers: ["Content-Length": String(Self.size)]))
                            try await Self.writePattern(Self.size, to: response)
                        case "/chunked":
                            try await response.writeHead(HTTPResponseHead(status: .ok, headers: ["Transfer-Encoding": "chunked"]))
                            try await Self.writePattern(Self.size, to: response)
                        case "/upload":
                            var verifier = Pattern.Verifier()
                            for try await chunk in request.body { verifier.check(chunk) }
                            let verdict = verifier.firstMismatch == nil ? String(verifier.offset) : "mismatch"
                            try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: verdict))
                        default:
                            try await response.respond(HTTPResponseHead(status: .ok), body: ByteBuffer(string: "small"))
                        }
                    }
                ) { pair in
                    for path in ["/length", "/chunked"] {
                        let response = try await pair.client.execute(HTTPClientRequest(url: pair.url(path)))
                        var verifier = Pattern.Verifier()
                        for try await chunk in response.body { verifier.check(chunk) }
                        #expect(verifier.offset == Self.size, "\(path)")
                        #expect(verifier.firstMismatch == nil, "\(path): first wrong byte at \(verifier.firstMismatch ?? -1)")
                    }
                    let upload = try await pair.client.execute(
                        HTTPClientRequest(
                            url: pair.url("/upload"), method: .put,
                            body: .stream(length: Self.size, Pattern.stream(total: Self.size))))
                    #expect(try await upload.body.collect(upTo: 100) == ByteBuffer(string: String(Self.size)))
                    let small = try await pair.client.execute(HTTPClientRequest(url: pair.url("/small")))
                    #expect(try await small.body.collect(upTo: 100) == ByteBuffer(string: "small"))
                }
            }
        }

        private static func writePattern(_ total: Int, to response: HTTPResponseWriter) async throws {
            var index = 0
            while index * Pattern.blockSize < total {
                try await response.write(Pattern.chunk(index, length: min(Pattern.blockSize, total - index * Pattern.blockSize)))
                index += 1
            }
            try await response.end()
        }
    }
}
