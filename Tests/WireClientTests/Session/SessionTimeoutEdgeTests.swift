import Foundation
import Testing
import WireTestSupport
import Wire
import WireClient

/// No timeout fires before its interval, measured on the monotonic clock: the idle clock's stamps come from the
/// coarse clock, which reads up to two ticks behind, and the deadline must make up for it.
@Suite(.sharedIO(minutes: 1))
struct SessionTimeoutEdgeTests {
    // The server's stamps stand in for the client's last activity, which a sanitizer's slowed threads pull apart.
    @Test(.disabled(if: Sanitizer.current != nil, Sanitizer.distortsMeasurements))
    func anIdleTimeoutNeverFiresBeforeItsIntervalAfterTheLastByte() async throws {
        let timeout = Duration.milliseconds(20)
        // Stamps read before the head and before the body go out, per round: the client's last activity, their
        // arrival, comes after the one it saw last.
        let headSent = Recorder<(round: Int, at: UInt64)>()
        let bodySent = Recorder<(round: Int, at: UInt64)>()
        let gate = SessionInvalidationTests.Gate()
        try await LoopbackServer.with({ request, writer in
            let round = Int(request.target.split(separator: "/").last ?? "") ?? -1
            headSent.record((round, Deadline.now().uptimeNanoseconds))
            try await writer.writeHead(HTTPResponseHead(status: .ok, headers: ["Content-Length": "1000"]))
            bodySent.record((round, Deadline.now().uptimeNanoseconds))
            try await writer.write(ByteBuffer(bytes: [UInt8](repeating: 0x61, count: 10)))
            await gate.wait()
        }) { server in
            var configuration = SessionConfiguration()
            configuration.timeoutIntervalForRequest = timeout
            let manager = SessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            var early: [Duration] = []
            var measured = 0
            for round in 0..<40 {
                let started = Deadline.now().uptimeNanoseconds
                let failed = await withCheckedContinuation {
                    (done: CheckedContinuation<(ClientError.Code?, UInt64, Int64), Never>) in
                    let task = Lock<SessionTask?>(nil)
                    task.withLock {
                        $0 = manager.dataTask(with: ClientRequest(url: server.url("/stall/\(round)"))) { _, _, error in
                            let received = task.withLock { $0?.countOfBytesReceived } ?? 0
                            done.resume(returning: (error?.code, Deadline.now().uptimeNanoseconds, received))
                        }
                    }
                    task.withLock { $0 }?.resume()
                }
                #expect(failed.0 == .timedOut)
                // The last activity the client saw: the body when its bytes arrived; else the head, when the server
                // wrote it before the timeout (a slowed server may send the body only after the head's silence timed
                // out); else the request itself (the request's silence may time out before the server's handler runs),
                // which is a weaker bound: the client's activity came after `started`.
                let stamps = (failed.2 > 0 ? bodySent.all : headSent.all).filter { $0.round == round && $0.at <= failed.1 }
                if let last = stamps.last {
                    measured += 1
                    let elapsed = Duration.nanoseconds(Int64(failed.1) - Int64(last.at))
                    if elapsed < timeout { early.append(elapsed) }
                } else {
                    let elapsed = Duration.nanoseconds(Int64(failed.1) - Int64(started))
                    if elapsed < timeout { early.append(elapsed) }
                }
            }
            #expect(measured >= 10, "only \(measured) of 40 rounds got an answer from the server before timing out")
            #expect(early.isEmpty, "idle timeouts of \(timeout) fired after \(early)")
            gate.open()
            manager.invalidateSession(cancelingTasks: true)
        }
    }
}
