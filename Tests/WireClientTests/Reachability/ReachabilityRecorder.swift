import Foundation
import Synchronization
@_spi(Locking) import Wire
import WireClient
import WireTestSupport

/// Records what a manager delivers: each status with its arrival time and whether it came on an event-loop
/// thread, and each path of its `paths` stream.
final class ReachabilityRecorder: Sendable {
    struct Delivery: Sendable {
        var status: NetworkReachabilityStatus
        var at: ContinuousClock.Instant
        var threadName: String
    }

    private let deliveries = Guarded<[Delivery]>([])
    private let pathLog = Guarded<[ReachabilityPath]>([])
    private let pathReader: Task<Void, Never>

    init(_ manager: NetworkReachabilityManager) {
        let paths = manager.paths
        let log = pathLog
        pathReader = Task {
            for await path in paths { log.withLock { $0.append(path) } }
        }
        let deliveries = self.deliveries
        manager.setReachabilityStatusChangeBlock { [deliveries] status in
            // The kernel's name of the calling thread: Wire's loops are "wire-…".
            let threadName = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
            deliveries.withLock { $0.append(Delivery(status: status, at: .now, threadName: threadName)) }
        }
    }

    deinit { pathReader.cancel() }

    var statuses: [NetworkReachabilityStatus] { deliveries.withLock { $0.map(\.status) } }
    var all: [Delivery] { deliveries.withLock { $0 } }
    var paths: [ReachabilityPath] { pathLog.withLock { $0 } }

    /// Waits (bounded) until `count` statuses have arrived.
    func waitForCount(_ count: Int, within timeout: Duration = .seconds(5)) async -> Bool {
        await eventually(within: timeout) { self.statuses.count >= count }
    }

    /// Waits (bounded) until the last status is `status`; returns its delivery.
    func waitForLast(_ status: NetworkReachabilityStatus, within timeout: Duration = .seconds(5)) async -> Delivery? {
        guard await eventually(within: timeout, { self.statuses.last == status }) else { return nil }
        return all.last
    }
}

/// A value behind a mutex, shareable by escaping closures.
final class Guarded<Value: Sendable>: Sendable {
    private let mutex: Lock<Value>
    init(_ value: Value) { mutex = Lock(value) }
    func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T { mutex.withLock { body(&$0) } }
}
