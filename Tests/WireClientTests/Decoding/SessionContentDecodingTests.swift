import Foundation
import Testing
import Wire
import WireClient
import WireTestSupport

/// Sessions offer gzip and deflate, decode data and download bodies as they stream, count wire bytes for progress,
/// and fail a corrupt, truncated or exploding body with `.cannotDecodeContentData`.
@Suite(.sharedIO(minutes: 1))
struct SessionContentDecodingTests {
    /// The encoded bodies a test server sends, made once.
    struct Bodies: Sendable {
        let text = Compression.sampleText(bytes: 300_000)
        let gzip: Data
        let deflate: Data
        let bomb: Data

        init() throws {
            gzip = try Compression.compress(text, .gzip)
            deflate = try Compression.compress(text, .raw)
            bomb = try Compression.zeroBomb(megabytes: 50)
        }
    }

    /// `/gzip`, `/deflate` (raw), `/truncated`, `/bomb` with their Content-Encoding; `/plain` without one; `/head`
    /// and `/empty` (204) announce gzip with no body.
    static func handler(_ bodies: Bodies) -> @Sendable (LoopbackServer.Recorded, HTTPResponseWriter) async throws -> Void {
        { request, writer in
            var headers: HTTPHeaders = ["Content-Type": "text/plain", "Content-Encoding": "gzip"]
            let body: Data
            var status = 200
            switch request.target {
            case "/gzip": body = bodies.gzip
            case "/deflate":
                headers = ["Content-Type": "text/plain", "Content-Encoding": "deflate"]
                body = bodies.deflate
            case "/truncated": body = bodies.gzip.prefix(bodies.gzip.count / 2)
            case "/bomb": body = bodies.bomb
            case "/empty":
                status = 204
                body = Data()
            case "/head": body = Data()
            default:
                headers = ["Content-Type": "text/plain"]
                body = bodies.gzip
            }
            try await writer.respond(
                HTTPResponseHead(status: HTTPStatus(code: status), headers: headers), body: ByteBuffer(bytes: body))
        }
    }

    /// Runs `body` against the test server with a manager (configured by `configure`) that hands bodies back as
    /// `Data`, invalidated afterwards.
    static func withServer(
        _ configure: (inout SessionConfiguration) -> Void = { _ in },
        _ body: (Bodies, LoopbackServer, SessionManager) async throws -> Void
    ) async throws {
        let bodies = try Bodies()
        try await LoopbackServer.with(Self.handler(bodies)) { server in
            let manager = rawDataManager(configure)
            defer { manager.invalidateSession(cancelingTasks: true) }
            try await body(bodies, server, manager)
        }
    }

    @Test func dataAndDownloadTasksDecodeAndCountWireBytes() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await Self.withServer { bodies, server, manager in
            let tasks = Recorder<SessionTask>()
            let pieces = Recorder<Data>()
            manager.dataTaskDidReceiveData = { task, data in
                tasks.record(task)
                pieces.record(data)
            }
            let result = try await manager.data(for: ClientRequest(url: server.url("/gzip")))
            #expect(mismatch(result.data, bodies.text) == nil)
            #expect(mismatch(pieces.all.reduce(Data(), +), bodies.text) == nil)
            #expect(pieces.all.allSatisfy { !$0.isEmpty && $0.count <= 65_536 })
            #expect(result.response?.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
            #expect(result.response?.expectedContentLength == Int64(bodies.gzip.count))
            #expect(tasks.all.last?.countOfBytesReceived == Int64(bodies.gzip.count))
            #expect(tasks.all.last?.countOfBytesExpectedToReceive == Int64(bodies.gzip.count))
            #expect(server.requests.last?.headers.first(name: "Accept-Encoding") == "gzip, deflate")

            let raw = try await manager.data(for: ClientRequest(url: server.url("/deflate")))
            #expect(mismatch(raw.data, bodies.text) == nil)

            let written = Recorder<[Int64]>()
            manager.downloadTaskDidWriteData = { _, bytes, total, expected in written.record([bytes, total, expected]) }
            let destination = folder + "/text"
            _ = try await manager.download(for: ClientRequest(url: server.url("/gzip"))) { _, _ in destination }
            #expect(mismatch(try Data(contentsOf: URL(fileURLWithPath: destination)), bodies.text) == nil)
            #expect(written.all.last?[1] == Int64(bodies.gzip.count))
            #expect(written.all.last?[2] == Int64(bodies.gzip.count))
        }
    }

    @Test func aCallersAcceptEncodingIsLeftAloneAndASessionMayOptOut() async throws {
        try await Self.withServer { bodies, server, manager in
            var request = ClientRequest(url: server.url("/plain"))
            request.headers = ["Accept-Encoding": "identity"]
            let plain = try await manager.data(for: request)
            #expect(server.requests.last?.headers["Accept-Encoding"] == ["identity"])
            #expect(mismatch(plain.data, bodies.gzip) == nil)

            var configuration = SessionConfiguration.default
            configuration.decodesContent = false
            let optedOut = SessionManager(configuration: configuration)
            optedOut.responseSerializer = HTTPResponseSerializer()
            defer { optedOut.invalidateSession(cancelingTasks: true) }
            let encoded = try await optedOut.data(for: ClientRequest(url: server.url("/gzip")))
            #expect(server.requests.last?.headers.contains(name: "Accept-Encoding") == false)
            #expect(mismatch(encoded.data, bodies.gzip) == nil)
        }
    }

    /// The session's fields (additional headers, `Accept-Encoding`) go over each request's own, whatever request went
    /// before: one with the same fields, with other ones, or many at once.
    @Test func theSessionsFieldsGoOverEachRequestsOwn() async throws {
        try await Self.withServer({ $0.httpAdditionalHeaders = ["X-Session": "s", "Accept": "session/type"] }) {
            _, server, manager in
            func send(_ fields: HTTPHeaders) async throws -> HTTPHeaders? {
                var request = ClientRequest(url: server.url("/plain"))
                request.headers = fields
                _ = try await manager.data(for: request)
                return server.requests.last?.headers
            }
            let own: HTTPHeaders = ["Accept": "a/b"]
            for _ in 0..<2 {
                let first = try await send(own)
                #expect(first?["Accept"] == ["a/b"] && first?["X-Session"] == ["s"])
                #expect(first?["Accept-Encoding"] == ["gzip, deflate"])
                let bare = try await send(HTTPHeaders())
                #expect(bare?["Accept"] == ["session/type"] && bare?["X-Session"] == ["s"])
                let chosen = try await send(["Accept-Encoding": "identity", "X-Session": "mine"])
                #expect(chosen?["Accept-Encoding"] == ["identity"] && chosen?["X-Session"] == ["mine"])
                #expect(chosen?["Accept"] == ["session/type"])
            }
            let before = server.requests.count
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<20 {
                    // Equal fields built apart for each request, two kinds taking turns.
                    let fields: HTTPHeaders = ["Accept": "a/\(index % 2)"]
                    group.addTask {
                        _ = try await manager.data(
                            for: {
                                var r = ClientRequest(url: server.url("/plain")); r.headers = fields; return r
                            }())
                    }
                }
                try await group.waitForAll()
            }
            let batch = server.requests.dropFirst(before).map(\.headers)
            #expect(batch.count == 20)
            #expect(batch.filter { $0["Accept"] == ["a/0"] }.count == 10 && batch.filter { $0["Accept"] == ["a/1"] }.count == 10)
            #expect(batch.allSatisfy { $0["X-Session"] == ["s"] && $0["Accept-Encoding"] == ["gzip, deflate"] })
        }
    }

    /// The `ContentDecodingError` under a task's `.cannotDecodeContentData`, or nil when it did not fail so.
    static func decodingFailure(_ run: () async throws(ClientError) -> DataResult) async -> ContentDecodingError? {
        do {
            _ = try await run()
            return nil
        } catch {
            guard error.code == .cannotDecodeContentData, error.code.urlErrorCode == -1016 else {
                Issue.record("failed with \(error)")
                return nil
            }
            #expect(error.response?.statusCode == 200)
            return error.underlying as? ContentDecodingError
        }
    }

    @Test func aTruncatedStreamAndABombAreTypedErrors() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await Self.withServer { bodies, server, manager in
            let truncated = await Self.decodingFailure { () throws(ClientError) in
                try await manager.data(for: ClientRequest(url: server.url("/truncated")))
            }
            #expect(truncated == .truncated(.gzip, encodedBytes: Int64(bodies.gzip.count / 2)))
            let bomb = await Self.decodingFailure { () throws(ClientError) in
                try await manager.data(for: ClientRequest(url: server.url("/bomb")))
            }
            guard case .ratioExceeded(let decoded, _, 1000) = bomb else {
                Issue.record("the bomb was not refused: \(String(describing: bomb))")
                return
            }
            #expect(decoded < 4 << 20)
            let downloadedBomb = await Self.decodingFailure { () throws(ClientError) in
                try await manager.download(for: ClientRequest(url: server.url("/bomb"))) { _, _ in folder + "/bomb" }
            }
            guard case .ratioExceeded = downloadedBomb else {
                Issue.record("the downloaded bomb was not refused: \(String(describing: downloadedBomb))")
                return
            }
            #expect(!FileManager.default.fileExists(atPath: folder + "/bomb"))
        }
    }

    @Test func responsesWithoutABodyAreNotDecodedAndTheBufferLimitCountsDecodedBytes() async throws {
        try await Self.withServer({ $0.maximumBufferedResponseSize = 100_000 }) { bodies, server, manager in
            var head = ClientRequest(url: server.url("/head"))
            head.method = "HEAD"
            let headResult = try await manager.data(for: head)
            #expect(headResult.response?.statusCode == 200)
            let empty = try await manager.data(for: ClientRequest(url: server.url("/empty")))
            #expect(empty.response?.statusCode == 204)
            // 300 kB of text arrive as much less gzip: the limit sees the 300 kB.
            #expect(bodies.gzip.count < 100_000)
            await #expect(throws: ClientError(.responseTooLarge)) {
                try await manager.data(for: ClientRequest(url: server.url("/gzip")))
            }
        }
    }
}
