import Foundation
import Testing
import WireTestSupport
import Wire
import WireClient

/// Downloads go to a 0600 temporary file and are moved; a failed move fails the task loudly.
@Suite(.sharedIO(minutes: 1))
struct SessionDownloadTests {
    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("wireclient-download-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static let body = String(repeating: "download!", count: 50_000)

    static let handler: @Sendable (LoopbackServer.Recorded, HTTPResponseWriter) async throws -> Void = { request, writer in
        try await writer.reply(
            request.target == "/missing" ? 404 : 200, Self.body, headers: ["Content-Type": "application/octet-stream"])
    }

    @Test func theBodyGoesToAPrivateTemporaryFileThenToTheDestination() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await LoopbackServer.with(Self.handler) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let temporary = Recorder<String>()
            manager.downloadTaskDidFinishDownloading = { _, path in
                temporary.record(path)
                let permissions = (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int
                temporary.record("\(permissions ?? -1)")
                return nil  // defer to the task's destination
            }
            let events = Recorder<String>()
            manager.eventMonitors = [RecordingMonitor(recorder: events)]
            let destination = folder + "/file.bin"
            let result = try await manager.download(for: ClientRequest(url: server.url("/file"))) { path, response in
                #expect(response.statusCode == 200)
                return destination
            }
            #expect(result.value as? String == destination)
            #expect(result.data == nil)
            #expect(try String(contentsOfFile: destination, encoding: .utf8) == Self.body)
            let recorded = temporary.all
            #expect(recorded.count == 2)
            #expect(recorded.first?.hasSuffix(".download") == true && recorded.first?.contains("/WireClient/") == true)
            #expect(recorded.last == "\(0o600)")
            #expect(!FileManager.default.fileExists(atPath: recorded[0]))
            #expect(await eventually(within: .seconds(10)) { events.all == ["didResume#1", "didMove#1", "didComplete#1"] })
        }
    }

    @Test func aMoveThatCannotHappenFailsWithCannotMoveFileAndRemovesTheTemporaryFile() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await LoopbackServer.with(Self.handler) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let temporary = Recorder<String>()
            manager.downloadTaskDidFinishDownloading = { _, path in
                temporary.record(path)
                return folder + "/no/such/directory/file.bin"  // the hook takes precedence over the task's destination
            }
            let events = Recorder<String>()
            manager.eventMonitors = [RecordingMonitor(recorder: events)]
            let outcome = Recorder<String>()
            let task = manager.downloadTask(
                with: ClientRequest(url: server.url("/file")), destination: { _, _ in folder + "/unused" }
            ) {
                _, value, error in outcome.record("\(value == nil) \(error?.code == .cannotMoveFile) \(error?.urlErrorCode ?? 0)")
            }
            task.resume()
            #expect(await eventually(within: .seconds(10)) { !outcome.all.isEmpty })
            #expect(outcome.all == ["true true -3005"])
            #expect(!FileManager.default.fileExists(atPath: folder + "/unused"))
            #expect(await eventually(within: .seconds(10)) { events.all == ["didResume#1", "didFailToMove#1", "didComplete#1"] })
            let temporaryPath = try #require(temporary.all.first)
            #expect(!FileManager.default.fileExists(atPath: temporaryPath))
        }
    }

    @Test func anExistingDestinationIsReplacedOnlyWhenAsked() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await LoopbackServer.with(Self.handler) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let destination = folder + "/existing"
            try "old".write(toFile: destination, atomically: false, encoding: .utf8)
            await #expect(throws: ClientError(.cannotMoveFile)) {
                try await manager.download(for: ClientRequest(url: server.url("/file"))) { _, _ in destination }
            }
            #expect(try String(contentsOfFile: destination, encoding: .utf8) == "old")
            let replaced = try await manager.download(
                for: ClientRequest(url: server.url("/file")), destination: { _, _ in destination },
                replacesExistingFile: true)
            #expect(replaced.value as? String == destination)
            #expect(try String(contentsOfFile: destination, encoding: .utf8) == Self.body)
        }
    }

    @Test func statusValidationAppliesToDownloadsAndTheFileIsStillMoved() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await LoopbackServer.with(Self.handler) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let outcome = Recorder<String>()
            let task = manager.downloadTask(
                with: ClientRequest(url: server.url("/missing")), destination: { _, _ in folder + "/404" }
            ) {
                _, value, error in outcome.record("\(value as? String ?? "nil") \(error.map { "\($0.code)" } ?? "nil")")
            }
            task.resume()
            #expect(await eventually(within: .seconds(10)) { !outcome.all.isEmpty })
            #expect(outcome.all == ["\(folder)/404 unacceptableStatusCode(404)"])
            #expect(FileManager.default.fileExists(atPath: folder + "/404"))
        }
    }
}

/// A data task that becomes a download task (`ResponseDisposition.becomeDownload`).
@Suite(.sharedIO(minutes: 1))
struct SessionBecomeDownloadTests {
    @Test func theDownloadTaskTakesOverTheExchangeAndTheCompletionHandler() async throws {
        let folder = try SessionDownloadTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await LoopbackServer.with(SessionDownloadTests.handler) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let events = Recorder<String>()
            manager.eventMonitors = [RecordingMonitor(recorder: events)]
            manager.dataTaskDidReceiveResponse = { _, _ in .becomeDownload }
            let became = Recorder<String>()
            manager.dataTaskDidBecomeDownloadTask = { data, download in
                became.record("\(data.taskIdentifier)->\(download.taskIdentifier) \(download.kind) \(download.state)")
            }
            manager.downloadTaskDidFinishDownloading = { task, _ in folder + "/became-\(task.taskIdentifier)" }
            let outcome = Recorder<String>()
            let task = manager.dataTask(with: ClientRequest(url: server.url("/file"))) { response, value, error in
                outcome.record("\(response?.statusCode ?? 0) \(value as? String ?? "nil") \(error == nil)")
            }
            task.resume()
            #expect(await eventually(within: .seconds(10)) { !outcome.all.isEmpty })
            #expect(became.all == ["1->2 download running"])
            #expect(outcome.all == ["200 \(folder)/became-2 true"])
            #expect(task.state == .completed)
            let contents = try String(contentsOfFile: folder + "/became-2", encoding: .utf8)
            #expect(contents == SessionDownloadTests.body)
            #expect(await eventually(within: .seconds(10)) { events.all == ["didResume#1", "didMove#2", "didComplete#2"] })
            #expect(manager.tasks.isEmpty)
        }
    }
    /// A data task suspended by its own response hook becomes a download only once resumed, and then completes as
    /// one: the suspension is not taken for a cancellation.
    @Test func aTaskSuspendedInItsResponseHookBecomesADownloadOnResume() async throws {
        let folder = try SessionDownloadTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await LoopbackServer.with(SessionDownloadTests.handler) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let decided = Recorder<String>()
            manager.dataTaskDidReceiveResponse = { task, _ in
                task.suspend()
                decided.record("suspended")
                return .becomeDownload
            }
            let became = Recorder<String>()
            manager.dataTaskDidBecomeDownloadTask = { data, download in
                became.record("\(data.taskIdentifier)->\(download.taskIdentifier) \(download.state)")
            }
            manager.downloadTaskDidFinishDownloading = { task, _ in folder + "/resumed-\(task.taskIdentifier)" }
            let outcome = Recorder<String>()
            let task = manager.dataTask(with: ClientRequest(url: server.url("/file"))) { response, value, error in
                outcome.record("\(response?.statusCode ?? 0) \(value as? String ?? "nil") \(String(describing: error?.code))")
            }
            task.resume()
            #expect(await eventually(within: .seconds(10)) { decided.all == ["suspended"] })
            #expect(task.state == .suspended)
            #expect(became.all.isEmpty, "no hand-over while suspended")
            task.resume()
            #expect(await eventually(within: .seconds(10)) { !outcome.all.isEmpty })
            #expect(became.all == ["1->2 running"])
            #expect(outcome.all == ["200 \(folder)/resumed-2 nil"])
            let contents = try String(contentsOfFile: folder + "/resumed-2", encoding: .utf8)
            #expect(contents == SessionDownloadTests.body)
        }
    }
}
