import Dispatch
import Foundation
import Testing
import WireTestSupport
import Wire
import WireClient

/// Tasks start suspended, identifiers, callback order and threads, progress, completion exactly once.
@Suite(.sharedIO(minutes: 1))
struct SessionTaskLifecycleTests {
    static let hello: @Sendable (LoopbackServer.Recorded, HTTPResponseWriter) async throws -> Void = { request, writer in
        try await writer.reply(200, #"{"path":"\#(request.target)"}"#, headers: ["Content-Type": "application/json"])
    }

    @Test func tasksStartSuspendedAndSendNothingUntilResumed() async throws {
        try await LoopbackServer.with(Self.hello) { server in
            let manager = SessionManager()
            let idle = manager.dataTask(with: ClientRequest(url: server.url("/never")))
            #expect(idle.state == .suspended)
            let upload = manager.uploadTask(
                with: ClientRequest(url: server.url("/never"), method: "POST"), fromData: Data("x".utf8), completionHandler: nil)
            let download = manager.downloadTask(with: ClientRequest(url: server.url("/never")))
            #expect(upload.state == .suspended && download.state == .suspended)
            #expect(manager.tasks.map(\.taskIdentifier) == [1, 2, 3])
            #expect(manager.uploadTasks.map(\.taskIdentifier) == [2] && manager.downloadTasks.map(\.taskIdentifier) == [3])
            // A resumed task's request reaches the server; the suspended ones' never did.
            let result = try await manager.data(for: ClientRequest(url: server.url("/resumed")))
            #expect(result.response?.statusCode == 200)
            #expect(server.requests.map(\.target) == ["/resumed"])
            for task in [idle, upload, download] { task.cancel() }
            #expect(await eventually(within: .seconds(10)) { manager.tasks.isEmpty })
        }
    }

    @Test func identifiersAreUniqueAndDenseUnderConcurrentCreation() async throws {
        let manager = SessionManager()
        let request = ClientRequest(url: URL(string: "http://127.0.0.1:9/")!)
        let ids = await withTaskGroup(of: [Int].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    (0..<250).map { _ in manager.dataTask(with: request).taskIdentifier }
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(ids.count == 2000)
        #expect(Set(ids) == Set(1...2000))
        #expect(manager.tasks.map(\.taskIdentifier) == Array(1...2000))  // creation order
        manager.invalidateSession(cancelingTasks: true, resetSession: true)
        #expect(await eventually(within: .seconds(10)) { manager.tasks.isEmpty })
        // Never reused, not even after a reset.
        #expect(manager.dataTask(with: request).taskIdentifier == 2001)
        manager.invalidateSession(cancelingTasks: true)
    }

    /// The manager's list of unfinished tasks stays exact while tasks end in any order: through its growth, its
    /// shrinking, and identifiers far apart sharing their low bits.
    @Test func theTaskListStaysExactWhileTasksEndInAnyOrder() async throws {
        let manager = SessionManager()
        let request = ClientRequest(url: URL(string: "http://127.0.0.1:9/")!)
        let tasks = (1...300).map { _ in manager.dataTask(with: request) }
        #expect(manager.tasks.map(\.taskIdentifier) == Array(1...300))
        // A fixed pseudo-random order (a linear congruential walk), so a failure repeats.
        var order = Array(tasks.indices)
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for index in order.indices.reversed() {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            order.swapAt(index, Int(seed >> 33) % (index + 1))
        }
        var remaining = Set(1...300)
        for (step, index) in order.enumerated() {
            tasks[index].cancel()
            remaining.remove(tasks[index].taskIdentifier)
            let expected = remaining.sorted()
            // Checked at every step while few are left (where identifiers far apart collide), else every 25th.
            guard remaining.count < 40 || step % 25 == 0 else { continue }
            #expect(await eventually(within: .seconds(10)) { manager.tasks.map(\.taskIdentifier) == expected })
        }
        #expect(manager.tasks.isEmpty)
        // One task that stays while many come and go after it: their identifiers meet its own low bits again and
        // again, and each is still found and removed.
        let staying = manager.dataTask(with: request)
        for _ in 0..<70 {
            let passing = manager.dataTask(with: request)
            #expect(manager.tasks.map(\.taskIdentifier) == [staying.taskIdentifier, passing.taskIdentifier])
            passing.cancel()
            #expect(await eventually(within: .seconds(10)) { manager.tasks.map(\.taskIdentifier) == [staying.taskIdentifier] })
        }
        staying.cancel()
        #expect(await eventually(within: .seconds(10)) { manager.tasks.isEmpty })
    }

    @Test func callbacksRunInOrderOnTheDelegateQueueAndNeverOnAnEventLoop() async throws {
        try await LoopbackServer.with({ request, writer in
            try await writer.reply(200, String(repeating: "b", count: 300_000), headers: ["Content-Type": "application/json"])
        }) { server in
            let loops = try EventLoopGroup(loopCount: 2, namePrefix: "wireclient-test-client")
            let client = try HTTPClient(group: loops)
            var configuration = SessionConfiguration()
            configuration.httpClient = client
            let log = Recorder<String>()
            let onLoop = Recorder<String>()
            let concurrent = Counter()
            let manager = SessionManager(configuration: configuration, eventMonitors: [RecordingMonitor(recorder: log)])
            manager.responseSerializer = HTTPResponseSerializer()
            @Sendable func hook(_ name: String) {
                if loops.loops.contains(where: { $0.inEventLoop }) { onLoop.record(name) }
                #expect(concurrent.add() == 1, "two callbacks at once")
                log.record(name)
                concurrent.add(-1)
            }
            manager.taskDidSendBodyData = { _, _, _, _ in hook("sent") }
            manager.dataTaskDidReceiveResponse = { _, _ in
                hook("response"); return .allow
            }
            manager.dataTaskDidReceiveData = { _, _ in hook("data") }
            manager.taskDidFinishCollectingMetrics = { _, _ in hook("metrics") }
            manager.taskDidComplete = { _, _ in hook("taskDidComplete") }
            let group = DispatchGroup()
            manager.completionGroup = group
            let done = Recorder<Bool>()
            let task = manager.uploadTask(
                with: ClientRequest(url: server.url("/up"), method: "POST"),
                fromData: Data(repeating: 7, count: 200_000),
                progress: { _ in hook("upload") }
            ) { response, value, error in
                if loops.loops.contains(where: { $0.inEventLoop }) { onLoop.record("completion") }
                // The group was entered before the handler was scheduled and is left only after it returns.
                #expect(group.wait(timeout: .now()) == .timedOut)
                log.record("completion")
                done.record(error == nil && (value as? Data)?.count == 300_000)
            }
            task.resume()
            #expect(await eventually(within: .seconds(10)) { !done.all.isEmpty })
            await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
            #expect(done.all == [true])
            #expect(await eventually(within: .seconds(10)) { log.all.last == "didComplete#1" })
            #expect(onLoop.all.isEmpty)
            // didResume → upload progress → response → data → metrics → taskDidComplete → completion → didComplete.
            var compact: [String] = []
            for name in log.all where name != "sent" && compact.last != name { compact.append(name) }
            #expect(
                compact == [
                    "didResume#1", "upload", "response", "data", "metrics", "taskDidComplete", "completion", "didComplete#1",
                ])
            #expect(log.all.filter { $0 == "sent" }.count == log.all.filter { $0 == "upload" }.count)
            await client.shutdown()
            await loops.shutdownGracefully()
        }
    }

    /// The metrics a task completes with cover its whole exchange, body included: the hook, the `didComplete` event,
    /// the final response and the task's response see the same; the response a hook sees before the body has none.
    @Test func theCompletionsMetricsCoverTheWholeExchange() async throws {
        let body = Data(repeating: 0x61, count: 100_000)
        // The body goes out once the client has the head (its response hook ran): the head's metrics have no body.
        let (release, released) = AsyncStream<Void>.makeStream()
        try await LoopbackServer.with({ _, writer in
            let chunks = AsyncStream<ByteBuffer> { continuation in
                Task {
                    for await _ in release { break }
                    continuation.yield(ByteBuffer(bytes: body))
                    continuation.finish()
                }
            }
            try await writer.respond(HTTPResponseHead(status: .ok, headers: ["Content-Type": "text/plain"]), body: chunks)
        }) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let headMetrics = Recorder<Bool>()
            manager.dataTaskDidReceiveResponse = { _, response in
                headMetrics.record(response.metrics == nil)
                released.yield()
                return .allow
            }
            let collected = Recorder<HTTPClientMetrics.Snapshot>()
            manager.taskDidFinishCollectingMetrics = { _, metrics in collected.record(metrics) }
            let events = manager.events
            let result = try await manager.data(for: ClientRequest(url: server.url("/body")))
            #expect(result.data == body)
            let metrics = try #require(collected.all.first)
            #expect(collected.all.count == 1)
            #expect(metrics.bodyBytes == body.count)
            #expect(metrics.timings.lastByte != nil && metrics.timings.firstByte != nil)
            // The final response carries them too; the one the hook saw before the body had none.
            #expect(result.response?.metrics == metrics)
            #expect(headMetrics.all == [true])
            var completed: CompletionInfo?
            var taskResponse: ClientResponse?
            for await event in events {
                if case .didComplete(let task, let info) = event {
                    (completed, taskResponse) = (info, task.response)
                    break
                }
            }
            #expect(completed?.metrics == metrics && taskResponse?.metrics == metrics)
            #expect(completed?.response?.metrics == metrics)
        }
    }

    @Test func progressFollowsTheCountingRules() async throws {
        let body = String(repeating: "z", count: 150_000)
        try await LoopbackServer.with({ request, writer in
            if request.target == "/chunked" {
                try await writer.respond(
                    HTTPResponseHead(status: .ok),
                    body: AsyncStream<ByteBuffer> { continuation in
                        continuation.yield(ByteBuffer(string: body))
                        continuation.finish()
                    })
            } else {
                try await writer.reply(200, body)
            }
        }) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let downloads = Recorder<TaskProgress>()
            let uploads = Recorder<TaskProgress>()
            let sent = Recorder<[Int64]>()
            manager.taskDidSendBodyData = { _, bytes, total, expected in sent.record([bytes, total, expected]) }
            let finished = Recorder<Int>()
            let task = manager.uploadTask(
                with: ClientRequest(url: server.url("/length"), method: "PUT"),
                fromData: Data(repeating: 1, count: 100_000), progress: { uploads.record($0) }
            ) { _, _, _ in
                finished.record(uploads.all.count)
            }
            #expect(task.uploadProgress == TaskProgress(completedUnitCount: 0, totalUnitCount: -1))
            #expect(task.downloadProgress.totalUnitCount == -1)
            task.resume()
            #expect(await eventually(within: .seconds(10)) { task.state == .completed && !finished.all.isEmpty })
            #expect(finished.all == [uploads.all.count])  // every progress call came before the completion handler
            #expect(uploads.all.last == TaskProgress(completedUnitCount: 100_000, totalUnitCount: 100_000))
            #expect(zip(uploads.all, uploads.all.dropFirst()).allSatisfy { $0.completedUnitCount <= $1.completedUnitCount })
            #expect(sent.all.last == [sent.all.last![0], 100_000, 100_000])
            #expect(sent.all.map { $0[0] }.reduce(0, +) == 100_000)
            #expect(task.downloadProgress == TaskProgress(completedUnitCount: 150_000, totalUnitCount: 150_000))
            #expect(task.countOfBytesReceived == 150_000 && task.countOfBytesSent == 100_000)

            // Content-Length known: the last call has completed == total; chunked: the total stays unknown.
            // Progress calls are delivered on the callback queue, so the test waits for the completion handler,
            // which comes after every one of them, not for the task's state, which changes before they run.
            let knownDone = Recorder<Bool>()
            let known = manager.dataTask(
                with: ClientRequest(url: server.url("/length")), downloadProgress: { downloads.record($0) },
                completionHandler: { _, _, _ in knownDone.record(true) })
            known.resume()
            #expect(await eventually(within: .seconds(10)) { !knownDone.all.isEmpty })
            #expect(downloads.all.last == TaskProgress(completedUnitCount: 150_000, totalUnitCount: 150_000))
            let unknown = Recorder<TaskProgress>()
            let chunkedDone = Recorder<Bool>()
            let chunked = manager.dataTask(
                with: ClientRequest(url: server.url("/chunked")), downloadProgress: { unknown.record($0) },
                completionHandler: { _, _, _ in chunkedDone.record(true) })
            chunked.resume()
            #expect(await eventually(within: .seconds(10)) { !chunkedDone.all.isEmpty })
            #expect(unknown.all.last == TaskProgress(completedUnitCount: 150_000, totalUnitCount: -1))

            // A streamed body of unknown length takes its total from Content-Length.
            var streamed = ClientRequest(url: server.url("/stream"), method: "POST")
            streamed.setValue("5", forHTTPHeaderField: "Content-Length")
            let streamUploads = Recorder<TaskProgress>()
            let streamDone = Recorder<Bool>()
            let stream = manager.uploadTask(
                with: streamed,
                streamed: .stream(
                    length: nil,
                    makeStream: {
                        AsyncThrowingStream { continuation in
                            continuation.yield(Data("hello".utf8))
                            continuation.finish()
                        }
                    }), progress: { streamUploads.record($0) }, completionHandler: { _, _, _ in streamDone.record(true) })
            stream.resume()
            #expect(await eventually(within: .seconds(10)) { !streamDone.all.isEmpty })
            #expect(stream.error == nil)
            #expect(streamUploads.all.last == TaskProgress(completedUnitCount: 5, totalUnitCount: 5))
        }
    }

    @Test func completionRunsExactlyOnceUnderCancelRaces() async throws {
        try await LoopbackServer.with(Self.hello) { server in
            let manager = SessionManager()
            let events = Recorder<String>()
            manager.eventMonitors = [RecordingMonitor(recorder: events)]
            let calls = Recorder<Int>()
            let tasks = (0..<60).map { index in
                manager.dataTask(with: ClientRequest(url: server.url("/race/\(index)"))) { _, _, _ in
                    calls.record(index)
                }
            }
            await withTaskGroup(of: Void.self) { group in
                for (index, task) in tasks.enumerated() {
                    group.addTask {
                        switch index % 4 {
                        case 0: task.cancel()
                        case 1: task.resume(); task.cancel(); task.cancel()
                        case 2: task.resume(); task.suspend(); task.cancel(); task.resume()
                        default: task.resume()
                        }
                    }
                    group.addTask { if index % 3 == 0 { task.cancel() } }
                }
            }
            #expect(await eventually(within: .seconds(10)) { Set(calls.all).count == 60 && manager.tasks.isEmpty })
            #expect(calls.all.count == 60)
            #expect(await eventually(within: .seconds(10)) { events.all.filter { $0.hasPrefix("didComplete") }.count == 60 })
            for task in tasks {
                #expect(task.state == .completed)
                #expect(events.all.filter { $0 == "didComplete#\(task.taskIdentifier)" }.count == 1)
                if task.taskIdentifier % 4 == 1 { #expect(task.error?.code == .cancelled) }  // cancelled before any resume
            }
            // Completed: every call is a no-op and emits nothing.
            let before = events.all.count
            for task in tasks { task.resume(); task.suspend(); task.cancel() }
            let probe = try await manager.data(for: ClientRequest(url: server.url("/probe")))
            #expect(probe.response?.statusCode == 200)
            // The probe's didResume and didComplete only
            #expect(await eventually(within: .seconds(10)) { events.all.count == before + 2 })
        }
    }
}

/// `TaskEvent`s: exactly once per real transition, in per-task order, only the manager's own tasks.
@Suite(.sharedIO(minutes: 1))
struct SessionEventTests {
    @Test func eventsStreamOncePerRealTransitionAndOnlyForTheManagersTasks() async throws {
        try await LoopbackServer.with(SessionTaskLifecycleTests.hello) { server in
            let manager = SessionManager()
            let other = SessionManager()
            let otherLog = Recorder<String>()
            other.eventMonitors = [RecordingMonitor(recorder: otherLog)]
            let stream = manager.events
            let secondStream = manager.events
            let task = manager.dataTask(with: ClientRequest(url: server.url("/e")))
            task.suspend()  // suspended already: nothing
            task.resume()
            task.resume()  // running already: nothing
            task.suspend()
            task.suspend()
            task.resume()
            var names: [String] = []
            for await event in stream {
                switch event {
                case .didResume(let task): names.append("resume#\(task.taskIdentifier)")
                case .didSuspend(let task): names.append("suspend#\(task.taskIdentifier)")
                case .didComplete(let task, let info):
                    names.append("complete#\(task.taskIdentifier) \(info.response?.statusCode ?? 0) \(info.data?.count ?? -1)")
                default: names.append("other")
                }
                if names.last?.hasPrefix("complete") == true { break }
            }
            #expect(names == ["resume#1", "suspend#1", "resume#1", "complete#1 200 13"])
            var second = 0
            for await event in secondStream {
                second += 1
                if case .didComplete = event { break }
            }
            #expect(second == 4)  // every stream gets every event
            task.resume()
            task.cancel()
            _ = try await other.data(for: ClientRequest(url: server.url("/other")))
            #expect(await eventually(within: .seconds(10)) { otherLog.all == ["didResume#1", "didComplete#1"] })
        }
    }
}
