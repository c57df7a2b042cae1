import Foundation
import Testing
import WireTestSupport
import Wire
import WireClient

/// Suspend applies real back-pressure and silences callbacks; idle and resource timeouts.
@Suite(.sharedIO(minutes: 1))
struct SessionSuspendTests {
    static let total = 64 << 20
    /// What the server writes before it waits for the suspension to take effect.
    static let beforeSuspension = 1 << 20

    /// The most a peer can write to a reader that has stopped: the loopback socket's receive and send buffers at their
    /// largest (autotuning grows them up to these), and Wire's own read buffers.
    static var heldWithoutReading: Int {
        func largest(_ name: String) -> Int {
            let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/\(name)", encoding: .utf8)) ?? ""
            return text.split(whereSeparator: \.isWhitespace).last.flatMap { Int($0) } ?? 8 << 20
        }
        return largest("tcp_rmem") + largest("tcp_wmem") + (4 << 20)
    }

    @Test func aSuspendedTaskStopsReadingAndFiresNoCallbackUntilResumed() async throws {
        let written = Counter()
        let suspensionTookEffect = Counter()
        try await LoopbackServer.with({ _, writer in
            try await writer.writeHead(HTTPResponseHead(status: .ok, headers: ["Content-Length": "\(Self.total)"]))
            let piece = ByteBuffer(bytes: [UInt8](repeating: 0x61, count: 64 * 1024))
            for index in 0..<(Self.total / piece.readableBytes) {
                // The rest only once the client says it is suspended: what arrives after that is bounded by the
                // buffers, not by how fast a loaded machine carried the suspension out.
                if index * piece.readableBytes == Self.beforeSuspension {
                    _ = await eventually(within: .seconds(20)) { suspensionTookEffect.current == 1 }
                }
                try await writer.write(piece)
                written.add(piece.readableBytes)
            }
            try await writer.end()
        }) { server in
            var configuration = SessionConfiguration()
            configuration.maximumBufferedResponseSize = Self.total
            // Shorter than the suspension below: the idle timeout must be paused while suspended.
            let idleTimeout = Duration.milliseconds(300) * Sanitizer.timeScale
            configuration.timeoutIntervalForRequest = idleTimeout
            let manager = SessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            let suspended = Counter()
            let whileSuspended = Counter()
            let chunks = Counter()
            let received = Recorder<Int>()
            manager.dataTaskDidReceiveData = { task, data in
                if suspended.current == 1 { whileSuspended.add() }
                chunks.add()
                received.record(data.count)
            }
            let events = Recorder<String>()
            manager.eventMonitors = [RecordingMonitor(recorder: events)]
            let result = Recorder<Int>()
            let task = manager.dataTask(with: ClientRequest(url: server.url("/large"))) { _, value, error in
                result.record(error == nil ? (value as? Data)?.count ?? -1 : -2)
            }
            task.resume()
            #expect(await eventually(within: .seconds(10)) { chunks.current > 0 })
            task.suspend()
            #expect(task.state == .suspended)
            // Callbacks handed to the delegate queue before the suspension may still run; none after `didSuspend`.
            #expect(await eventually(within: .seconds(10)) { events.all.contains("didSuspend#1") })
            suspended.set(1)
            let suspendedAt = ContinuousClock.now
            suspensionTookEffect.set(1)
            // The server stalls: its writes stop once Wire's body buffer and the socket buffers are full.
            var stable = 0
            var last = -1
            while stable < 20 {
                let now = written.current
                stable = now == last ? stable + 1 : 0
                last = now
                try await Task.sleep(for: .milliseconds(25))
            }
            let stalledAt = written.current
            let progressWhileSuspended = task.countOfBytesReceived
            // Suspended for longer than the idle timeout: it must not fire, and nothing may move, while suspended.
            try await Task.sleep(until: suspendedAt + idleTimeout * 2)
            #expect(stalledAt < Self.total, "the server wrote everything to a suspended task")
            #expect(
                stalledAt <= Self.beforeSuspension + Self.heldWithoutReading,
                "the server wrote \(stalledAt - Self.beforeSuspension) bytes after the suspension")
            #expect(whileSuspended.current == 0)
            #expect(task.countOfBytesReceived == progressWhileSuspended)
            suspended.set(0)
            task.resume()
            #expect(await eventually(within: .seconds(30)) { !result.all.isEmpty })
            #expect(result.all == [Self.total])
            #expect(received.all.reduce(0, +) == Self.total)
            #expect(
                task.downloadProgress == TaskProgress(completedUnitCount: Int64(Self.total), totalUnitCount: Int64(Self.total)))
        }
    }

    @Test func aSuspendedUploadStopsSendingItsBody() async throws {
        let arrived = Counter()
        let suspensionTookEffect = Counter()
        // The server reads the first MiB, then only once the task is suspended: what the client sends afterwards is
        // bounded by the buffers, not by how fast a loaded machine suspended.
        let paced: @Sendable (Int) async -> Void = { read in
            if read >= Self.beforeSuspension {
                _ = await eventually(within: .seconds(20)) { suspensionTookEffect.current == 1 }
            }
        }
        try await LoopbackServer.with(pacing: paced, { _, writer in try await writer.reply(200) }) { server in
            let manager = SessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let size = Self.total
            let sentWhenSuspended = Counter(-1)
            let afterSuspend = Counter()
            let task = manager.uploadTask(
                with: ClientRequest(url: server.url("/up"), method: "POST"),
                fromData: Data(repeating: 3, count: size),
                progress: { progress in
                    if sentWhenSuspended.current >= 0 { afterSuspend.add() }
                    arrived.set(Int(progress.completedUnitCount))
                }, completionHandler: nil)
            task.resume()
            #expect(await eventually(within: .seconds(10)) { arrived.current > 0 })
            task.suspend()
            // Let whatever was queued before the suspension drain: a probe on the delegate queue runs after it.
            await withCheckedContinuation { continuation in manager.delegateQueue.async { continuation.resume() } }
            sentWhenSuspended.set(Int(task.countOfBytesSent))
            suspensionTookEffect.set(1)
            var stable = 0
            var last: Int64 = -1
            while stable < 20 {
                let now = task.countOfBytesSent
                stable = now == last ? stable + 1 : 0
                last = now
                try await Task.sleep(for: .milliseconds(25))
            }
            #expect(task.countOfBytesSent < Int64(size), "a suspended task sent its whole body")
            #expect(
                task.countOfBytesSent <= Int64(Self.beforeSuspension + Self.heldWithoutReading),
                "sent \(task.countOfBytesSent) while suspended")
            #expect(afterSuspend.current == 0, "upload progress reported while suspended")
            task.resume()
            #expect(await eventually(within: .seconds(30)) { task.state == .completed })
            #expect(task.error == nil)
            #expect(task.countOfBytesSent == Int64(size))
            #expect(server.requests.first?.body.count == size)
        }
    }

    @Test func theRequestTimeoutIsAnIdleTimeoutAndTheResourceTimeoutIsTotal() async throws {
        try await LoopbackServer.with({ request, writer in
            if request.target == "/silent" {
                try await Task.sleep(for: .seconds(20))
            }
            // Trickle: a byte every 100 ms for four seconds, never silent for the two-second idle timeout. The margin
            // is a loaded machine's: at the start of a CI run, with the sanitizer builds beside the tests, one gap of
            // 100 ms has been seen to outlast 800.
            try await writer.writeHead(HTTPResponseHead(status: .ok, headers: ["Content-Length": "40"]))
            for _ in 0..<40 {
                try await Task.sleep(for: .milliseconds(100))
                try await writer.write(ByteBuffer(string: "x"))
            }
            try await writer.end()
        }) { server in
            var configuration = SessionConfiguration()
            // Grows with a sanitizer's slowdown (the trickle then outlasts it only in a plain build).
            configuration.timeoutIntervalForRequest = .seconds(2) * Sanitizer.timeScale
            let manager = SessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            let trickled = try await manager.data(for: ClientRequest(url: server.url("/trickle")))
            #expect(trickled.data?.count == 40)  // 4 s in all, twice the idle timeout, but never 2 s without a byte
            await #expect(throws: ClientError(.timedOut)) {
                try await manager.data(for: ClientRequest(url: server.url("/silent")))
            }

            var total = SessionConfiguration()
            total.timeoutIntervalForResource = .milliseconds(500)
            let bounded = SessionManager(configuration: total)
            bounded.responseSerializer = HTTPResponseSerializer()
            do throws(ClientError) {
                _ = try await bounded.data(for: ClientRequest(url: server.url("/trickle")))
                Issue.record("a 4 s transfer passed a 500 ms resource timeout")
            } catch {
                #expect(error.code == .timedOut)
            }
        }
    }

    /// A negative timeout (a configuration decoded from elsewhere, say) has expired already: the task fails with
    /// `.timedOut`, the process does not trap on the conversion.
    @Test func aNegativeTimeoutHasExpiredAlready() async throws {
        try await LoopbackServer.with({ _, writer in
            try await Task.sleep(for: .seconds(20))
            try await writer.writeHead(HTTPResponseHead(status: .noContent))
            try await writer.end()
        }) { server in
            for negative in [Duration.milliseconds(-500), .nanoseconds(-1), .seconds(-3)] {
                var idle = SessionConfiguration()
                idle.timeoutIntervalForRequest = negative
                let first = SessionManager(configuration: idle)
                await #expect(throws: ClientError(.timedOut)) { try await first.data(for: ClientRequest(url: server.url("/"))) }

                var total = SessionConfiguration()
                total.timeoutIntervalForResource = negative
                let second = SessionManager(configuration: total)
                await #expect(throws: ClientError(.timedOut)) { try await second.data(for: ClientRequest(url: server.url("/"))) }
            }
        }
    }
}
