import Dispatch
import Foundation
import Testing
import WireTestSupport
import Wire
import WireClient

/// The buffer limit, additional headers, file uploads, lost connections, the completion queue and the per-host limit.
@Suite(.sharedIO(minutes: 1))
struct SessionConfigurationTests {
    static let handler: @Sendable (LoopbackServer.Recorded, HTTPResponseWriter) async throws -> Void = { request, writer in
        switch request.target {
        case "/big":
            // Larger than the socket buffers: the client abandons it mid-body.
            try await writer.reply(200, String(repeating: "x", count: 16 << 20))
        case "/medium":
            try await writer.reply(200, String(repeating: "x", count: 200_000))
        case "/cut":
            try await writer.writeHead(HTTPResponseHead(status: .ok, headers: ["Content-Length": "1000"]))
            try await writer.write(ByteBuffer(string: "only ten.."))
            throw CancellationError()  // the server drops the connection mid-body
        default:
            let echoed = request.headers.first(name: "X-Session") ?? "-"
            try await writer.reply(200, "\(echoed) \(request.headers.first(name: "Accept") ?? "-") \(request.body.count)")
        }
    }

    @Test func aBodyOverTheBufferLimitFailsAndClosesTheConnection() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            var configuration = SessionConfiguration()
            configuration.maximumBufferedResponseSize = 1 << 20
            let manager = SessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            do throws(ClientError) {
                _ = try await manager.data(for: ClientRequest(url: server.url("/big")))
                Issue.record("a 16 MiB body passed a 1 MiB limit")
            } catch {
                #expect(error.code == .responseTooLarge && error.urlErrorCode == -1103)
            }
            #expect(await eventually(within: .seconds(10)) { server.openConnections == 0 })
            withExtendedLifetime(manager) {}
            // Exactly at the limit is fine.
            configuration.maximumBufferedResponseSize = 200_000
            let exact = SessionManager(configuration: configuration)
            exact.responseSerializer = HTTPResponseSerializer()
            let atLimit = try await exact.data(for: ClientRequest(url: server.url("/medium")))
            #expect(atLimit.data?.count == 200_000)
        }
    }

    @Test func additionalHeadersAreAddedOnlyWhenTheRequestLacksThem() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            var configuration = SessionConfiguration()
            configuration.httpAdditionalHeaders = ["X-Session": "session", "Accept": "text/session"]
            let manager = SessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            var request = ClientRequest(url: server.url("/h"))
            request.setValue("text/own", forHTTPHeaderField: "accept")
            let result = try await manager.data(for: request)
            #expect(String(decoding: result.data ?? Data(), as: UTF8.self) == "session text/own 0")
        }
    }

    @Test func uploadsFromAFileAndAMissingFileIsNotReachable() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("wireclient-upload-\(UUID().uuidString)").path
        try Data(repeating: 9, count: 300_000).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await LoopbackServer.with(Self.handler) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let progress = Recorder<TaskProgress>()
            let finished = Recorder<String>()
            let task = manager.uploadTask(
                with: ClientRequest(url: server.url("/f"), method: "PUT"), fromFile: path,
                progress: { progress.record($0) }
            ) { _, value, error in
                finished.record((value as? Data).map { String(decoding: $0, as: UTF8.self) } ?? "\(String(describing: error))")
            }
            task.resume()
            #expect(await eventually(within: .seconds(10)) { !finished.all.isEmpty })
            #expect(finished.all == ["- - 300000"])
            #expect(server.requests.last?.body == [UInt8](repeating: 9, count: 300_000))
            #expect(progress.all.last == TaskProgress(completedUnitCount: 300_000, totalUnitCount: 300_000))
            await #expect(throws: ClientError(.fileNotReachable)) {
                try await manager.upload(for: ClientRequest(url: server.url("/f"), method: "PUT"), fromFile: path + ".missing")
            }
            #expect(server.requests.count == 1)
        }
    }

    @Test func aConnectionLostMidBodyFailsWithNetworkConnectionLost() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            await #expect(throws: ClientError(.networkConnectionLost)) {
                try await manager.data(for: ClientRequest(url: server.url("/cut")))
            }
        }
    }

    @Test func completionsRunOnTheCompletionQueueAndByDefaultNotOnTheMainThread() async throws {
        try await LoopbackServer.with(Self.handler) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let seen = Recorder<String>()
            manager.dataTask(with: ClientRequest(url: server.url("/q"))) { _, _, _ in
                seen.record("default main:\(Thread.isMainThread)")
            }.resume()
            #expect(await eventually(within: .seconds(10)) { seen.all == ["default main:false"] })
            let key = DispatchSpecificKey<String>()
            let queue = DispatchQueue(label: "test.completion")
            queue.setSpecific(key: key, value: "mine")
            manager.completionQueue = queue
            manager.dataTask(with: ClientRequest(url: server.url("/q"))) { _, _, _ in
                seen.record("custom \(DispatchQueue.getSpecific(key: key) ?? "other")")
            }.resume()
            #expect(await eventually(within: .seconds(10)) { seen.all.count == 2 })
            #expect(seen.all.last == "custom mine")
        }
    }

    @Test func theOwnClientGetsThePerHostConnectionLimit() async throws {
        let gate = SessionInvalidationTests.Gate()
        try await LoopbackServer.with(SessionInvalidationTests.holding(gate)) { server in
            var configuration = SessionConfiguration()
            configuration.httpMaximumConnectionsPerHost = 2
            let manager = SessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            let tasks = (0..<4).map { manager.dataTask(with: ClientRequest(url: server.url("/hold/\($0)"))) }
            for task in tasks { task.resume() }
            #expect(await eventually(within: .seconds(10)) { server.requests.count == 2 })
            #expect(server.openConnections == 2)
            gate.open()
            #expect(await eventually(within: .seconds(10)) { manager.tasks.isEmpty })
            #expect(server.requests.count == 4)
            #expect(tasks.allSatisfy { $0.error == nil })
        }
    }
}
