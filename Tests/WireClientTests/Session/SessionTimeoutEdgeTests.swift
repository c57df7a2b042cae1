import Foundation
import Testing
import WireTestSupport
import Wire
import WireClient

/// No timeout fires before its interval, measured on the monotonic clock: the idle clock's stamps come from the
/// coarse clock, which reads up to two ticks behind, and the deadline must make up for it.
@Suite(.timeLimit(.minutes(1)), .exclusiveIO)
struct SessionTimeoutEdgeTests {
    @Test func anIdleTimeoutNeverFiresBeforeItsIntervalAfterTheLastByte() async throws {
        let timeout = Duration.milliseconds(20)
        let sent = Recorder<UInt64>()
        let gate = SessionInvalidationTests.Gate()
        try await LoopbackServer.with({ _, writer in
            try await writer.writeHead(HTTPResponseHead(status: .ok, headers: ["Content-Length": "1000"]))
            // Read before the bytes go out: the client's last activity, their arrival, comes after it.
            sent.record(Deadline.now().uptimeNanoseconds)
            try await writer.write(ByteBuffer(bytes: [UInt8](repeating: 0x61, count: 10)))
            await gate.wait()
        }) { server in
            var configuration = SessionConfiguration()
            configuration.timeoutIntervalForRequest = timeout
            let manager = SessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            var early: [Duration] = []
            for round in 0..<40 {
                let failed = await withCheckedContinuation { (done: CheckedContinuation<(ClientError.Code?, UInt64), Never>) in
                    manager.dataTask(with: ClientRequest(url: server.url("/stall/\(round)"))) { _, _, error in
                        done.resume(returning: (error?.code, Deadline.now().uptimeNanoseconds))
                    }.resume()
                }
                #expect(failed.0 == .timedOut)
                let last = try #require(sent.all.last)
                let elapsed = Duration.nanoseconds(Int64(failed.1) - Int64(last))
                if elapsed < timeout { early.append(elapsed) }
            }
            #expect(early.isEmpty, "idle timeouts of \(timeout) fired after \(early)")
            gate.open()
            manager.invalidateSession(cancelingTasks: true)
        }
    }
}
