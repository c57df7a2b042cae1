import Foundation
import Testing
import WireTestSupport
import Wire
import WireClient

/// No timeout fires before its interval, measured on the monotonic clock: the idle clock's stamps come from the
/// coarse clock, which reads up to two ticks behind, and the deadline must make up for it.
///
/// The server never answers, so the client's last activity is its request going out, after `started`: a timeout
/// that fires less than its interval after `started` fired early. (Stamps taken on the server's side stood in for
/// the client's activity before; on a loaded machine a head stamped before the timeout could arrive after it, and the
/// test failed a correct client.)
@Suite(.sharedIO(minutes: 1))
struct SessionTimeoutEdgeTests {
    @Test(.disabled(if: Sanitizer.current != nil, Sanitizer.distortsMeasurements))
    func anIdleTimeoutNeverFiresBeforeItsIntervalAfterTheLastByte() async throws {
        let timeout = Duration.milliseconds(20)
        // `/hang…` is never answered (the fault engine's `hang`).
        try await FaultPeer.with { server in
            var configuration = SessionConfiguration()
            configuration.timeoutIntervalForRequest = timeout
            let manager = SessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            var early: [Duration] = []
            for round in 0..<40 {
                let started = Deadline.now().uptimeNanoseconds
                let failed = await withCheckedContinuation {
                    (done: CheckedContinuation<(ClientError.Code?, UInt64), Never>) in
                    manager.dataTask(with: ClientRequest(url: server.url("/hang/\(round)"))) { _, _, error in
                        done.resume(returning: (error?.code, Deadline.now().uptimeNanoseconds))
                    }.resume()
                }
                #expect(failed.0 == .timedOut)
                let elapsed = Duration.nanoseconds(Int64(failed.1) - Int64(started))
                if elapsed < timeout { early.append(elapsed) }
            }
            #expect(early.isEmpty, "idle timeouts of \(timeout) fired after \(early)")
            manager.invalidateSession(cancelingTasks: true)
        }
    }
}
