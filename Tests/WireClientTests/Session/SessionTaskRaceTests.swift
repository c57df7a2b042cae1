import Dispatch
import Foundation
import Testing
import WireTestSupport
import Wire
import WireClient

/// Races and lifecycle corners found in review: a suspended task that has not sent yet, the timeouts of a data task
/// that became a download, and cancelling invalidation after a finishing one.
@Suite(.sharedIO(minutes: 1))
struct SessionTaskRaceTests {
    @Test func aTaskSuspendedBeforeItsRequestWentOutSendsNothingUntilResumed() async throws {
        try await LoopbackServer.with({ request, writer in try await writer.reply(200, request.target) }) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let outcome = Recorder<String>()
            let task = manager.dataTask(with: ClientRequest(url: server.url("/paused"))) { _, value, error in
                outcome.record("\((value as? Data).map { String(decoding: $0, as: UTF8.self) } ?? "nil") \(error == nil)")
            }
            task.resume()
            task.suspend()
            #expect(task.state == .suspended)
            // Another request on the same manager goes through meanwhile; the suspended one must not reach the server.
            let probe = try await manager.data(for: ClientRequest(url: server.url("/probe")))
            #expect(probe.response?.statusCode == 200)
            let leaked = await eventually(within: .milliseconds(500)) { server.requests.contains { $0.target == "/paused" } }
            #expect(!leaked, "a suspended task sent its request")
            #expect(outcome.all.isEmpty)
            task.resume()
            #expect(await eventually(within: .seconds(10)) { outcome.all == ["/paused true"] })
        }
    }

    @Test func aDataTaskThatBecameADownloadStillTimesOutWhenTheServerStalls() async throws {
        // `/stall`: ten of a thousand bytes, then nothing (the fault engine's `hang`).
        try await FaultPeer.with { server in
            var configuration = SessionConfiguration()
            // Grows with a sanitizer's slowdown: the head must arrive before it fires, for the task to become a download.
            configuration.timeoutIntervalForRequest = .milliseconds(300) * Sanitizer.timeScale
            let manager = SessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            manager.dataTaskDidReceiveResponse = { _, _ in .becomeDownload }
            let became = Recorder<Int>()
            manager.dataTaskDidBecomeDownloadTask = { _, download in became.record(download.taskIdentifier) }
            let outcome = Recorder<ClientError.Code?>()
            let task = manager.dataTask(with: ClientRequest(url: server.url("/stall"))) { _, _, error in
                outcome.record(error?.code)
            }
            task.resume()
            #expect(await eventually(within: .seconds(10)) { !outcome.all.isEmpty })
            #expect(outcome.all == [.timedOut])
            #expect(became.all == [2])
            #expect(await eventually(within: .seconds(10)) { manager.tasks.isEmpty })
        }
    }

    @Test func invalidatingWithCancelAfterFinishingInvalidationCancelsTheTasksLeft() async throws {
        let manager = SessionManager()
        let log = Recorder<String>()
        manager.eventMonitors = [RecordingMonitor(recorder: log)]
        manager.sessionDidBecomeInvalid = { _ in log.record("hook") }
        // Never resumed, so it sends nothing; it keeps the finishing session open.
        let left = manager.dataTask(with: ClientRequest(url: URL(string: "http://127.0.0.1:9/left")!)) { _, _, error in
            log.record("left \(error?.code == .cancelled)")
        }
        manager.invalidateSession(cancelingTasks: false)
        #expect(!log.all.contains("hook"))
        manager.invalidateSession(cancelingTasks: true)
        #expect(await eventually(within: .seconds(10)) { log.all.contains("sessionDidInvalidate") })
        let all = log.all
        #expect(all.filter { $0 == "left true" }.count == 1)
        #expect(all.filter { $0 == "hook" }.count == 1 && all.filter { $0 == "sessionDidInvalidate" }.count == 1)
        #expect((all.firstIndex(of: "hook") ?? -1) > (all.firstIndex(of: "left true") ?? Int.max))
        #expect(left.state == .completed && manager.tasks.isEmpty)
    }

    @Test func aDownloadsDestinationIsAskedOnTheDelegateQueue() async throws {
        let folder = try SessionDownloadTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await LoopbackServer.with(SessionDownloadTests.handler) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let key = DispatchSpecificKey<Int>()
            manager.delegateQueue.setSpecific(key: key, value: 1)
            let queues = Recorder<Bool>()
            let destination = folder + "/file.bin"
            let result = try await manager.download(for: ClientRequest(url: server.url("/file"))) { _, _ in
                queues.record(DispatchQueue.getSpecific(key: key) == 1)
                return destination
            }
            #expect(result.value as? String == destination)
            #expect(queues.all == [true], "the destination was asked off the delegate queue")
        }
    }

    @Test func waitingForTheDelegateQueueIsNotIdleTime() async throws {
        try await LoopbackServer.with({ request, writer in try await writer.reply(200, request.target) }) { server in
            var configuration = SessionConfiguration()
            // Both grow with a sanitizer's slowdown: the victim's exchange must beat the timeout, the hook outlast it.
            let timeout = Duration.milliseconds(300) * Sanitizer.timeScale
            configuration.timeoutIntervalForRequest = timeout
            let manager = SessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            let entered = Counter()
            // One task's hook is slow (a caller doing real work, simulated by blocking): the serial delegate queue is
            // busy well past the idle timeout while the other task's response has already arrived.
            manager.dataTaskDidReceiveResponse = { task, _ in
                if task.originalRequest.url.path == "/slow" {
                    entered.set(1)
                    usleep(UInt32(900_000 * Sanitizer.timeScale))
                }
                return .allow
            }
            let outcome = Recorder<String>()
            let slow = manager.dataTask(with: ClientRequest(url: server.url("/slow"))) { _, _, error in
                outcome.record("slow \(error?.code == nil)")
            }
            let victim = manager.dataTask(with: ClientRequest(url: server.url("/victim"))) { _, value, error in
                outcome.record(
                    "victim \((value as? Data).map { String(decoding: $0, as: UTF8.self) } ?? "nil") \(error.map { "\($0.code)" } ?? "ok")"
                )
            }
            slow.resume()
            #expect(await eventually(within: .seconds(10)) { entered.current == 1 })
            victim.resume()
            #expect(await eventually(within: .seconds(10)) { outcome.all.count == 2 })
            #expect(Set(outcome.all) == ["slow true", "victim /victim ok"])
        }
    }

    @Test func aResponseThatArrivesWhileSuspendedIsToldOnlyAfterResume() async throws {
        let gate = SessionInvalidationTests.Gate()
        try await LoopbackServer.with(SessionInvalidationTests.holding(gate)) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let log = Recorder<String>()
            manager.eventMonitors = [RecordingMonitor(recorder: log)]
            manager.dataTaskDidReceiveResponse = { task, _ in
                log.record("response while \(task.state)")
                return .allow
            }
            let task = manager.dataTask(with: ClientRequest(url: server.url("/hold"))) { _, value, error in
                log.record("done \((value as? Data).map { String(decoding: $0, as: UTF8.self) } ?? "nil") \(error == nil)")
            }
            task.resume()
            #expect(await eventually(within: .seconds(10)) { server.requests.count == 1 })
            task.suspend()
            gate.open()
            let early = await eventually(within: .milliseconds(500)) { log.all.contains { $0.hasPrefix("response") } }
            #expect(!early, "a hook ran while the task was suspended: \(log.all)")
            task.resume()
            #expect(await eventually(within: .seconds(10)) { log.all.contains("didComplete#1") })
            #expect(
                log.all == [
                    "didResume#1", "didSuspend#1", "didResume#1", "response while running", "done ok true",
                    "didComplete#1",
                ])
        }
    }
}
