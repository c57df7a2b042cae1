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
        // Stamps read before the head and before the body go out: the client's last activity, their arrival, comes
        // after the one it saw last.
        let headSent = Recorder<UInt64>()
        let bodySent = Recorder<UInt64>()
        let gate = SessionInvalidationTests.Gate()
        try await LoopbackServer.with({ _, writer in
            headSent.record(Deadline.now().uptimeNanoseconds)
            try await writer.writeHead(HTTPResponseHead(status: .ok, headers: ["Content-Length": "1000"]))
            bodySent.record(Deadline.now().uptimeNanoseconds)
            try await writer.write(ByteBuffer(bytes: [UInt8](repeating: 0x61, count: 10)))
            await gate.wait()
        }) { server in
            var configuration = SessionConfiguration()
            configuration.timeoutIntervalForRequest = timeout
            let manager = SessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            var early: [Duration] = []
            for round in 0..<40 {
                let (headsBefore, bodiesBefore) = (headSent.all.count, bodySent.all.count)
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
                // A server slowed down (a sanitizer, a loaded machine) may send the body only after the head's silence
                // has timed out: then the head was the last activity the client saw.
                // And on a loaded machine the request's own silence may time out before the server's handler runs:
                // then this round stamped nothing before the timeout, and the interval ran from the request.
                let stamps = failed.2 > 0 ? bodySent.all.dropFirst(bodiesBefore) : headSent.all.dropFirst(headsBefore)
                guard let last = stamps.last(where: { $0 <= failed.1 }) else { continue }
                let elapsed = Duration.nanoseconds(Int64(failed.1) - Int64(last))
                if elapsed < timeout { early.append(elapsed) }
            }
            #expect(early.isEmpty, "idle timeouts of \(timeout) fired after \(early)")
            gate.open()
            manager.invalidateSession(cancelingTasks: true)
        }
    }
}
