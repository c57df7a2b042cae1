import Synchronization

/// The number of open connections of one server over all its loops, against its limit.
final class ConnectionCounter: Sendable {
    private let count = Atomic<Int>(0)

    /// Counts one more connection if fewer than `limit` are open; false when the limit is reached.
    func tryAcquire(limit: Int) -> Bool {
        var current = count.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = count.compareExchange(
                expected: current, desired: current + 1, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Counts one connection fewer.
    func release() {
        count.subtract(1, ordering: .relaxed)
    }

    /// The connections open now.
    var current: Int { count.load(ordering: .relaxed) }
}
