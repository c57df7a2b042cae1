import Synchronization
@_spi(Locking) import Wire

/// `maximumConcurrentTasks`: at most `limit` tasks hold a slot (have a request on the wire); the others wait in the
/// order they were first resumed. `enqueue` is called in `resume()` itself, so the order is the callers', not the
/// order in which the transfers' Swift tasks happen to start.
final class ConcurrentTaskLimiter: Sendable {
    private struct State {
        var holders: Set<Int> = []
        var waiting: [Int] = []
        var continuations: [Int: CheckedContinuation<Bool, Never>] = [:]
    }

    private let limit: Int?
    private let state = Lock(State())

    init(limit: Int?) {
        self.limit = limit
    }

    /// Whether tasks may have to wait for a slot.
    var isLimited: Bool { limit != nil }

    /// Takes a slot for `id` at once if one is free, else queues it.
    func enqueue(_ id: Int) {
        // Without a limit every task holds a slot at once: nothing to track.
        guard limit != nil else { return }
        state.withLock { state in
            if let limit, state.holders.count >= limit {
                state.waiting.append(id)
            } else {
                state.holders.insert(id)
            }
        }
    }

    /// Returns true once `id` (`task`'s identifier) holds a slot; false when it was abandoned while waiting (the
    /// task was cancelled: by `cancel()`, or, for a caller-driven task, by its caller's cancellation).
    @inline(__always)  // The common cases (no limit, a slot taken at `enqueue`) in the caller's frame.
    nonisolated(nonsending) func wait(_ id: Int, for task: SessionTask) async -> Bool {
        guard limit != nil else { return true }
        // The common case, a slot taken at `enqueue`: no continuation.
        if state.withLock({ $0.holders.contains(id) }) { return true }
        return await task.whileCallerWaits { await waitInQueue(id) }
    }

    /// `wait(_:)` for a task queued behind the limit.
    @inline(never)
    nonisolated(nonsending) private func waitInQueue(_ id: Int) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer = state.withLock { state -> Bool? in
                if state.holders.contains(id) { return true }
                guard state.waiting.contains(id) else { return false }
                state.continuations[id] = continuation
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Gives back `id`'s slot, or takes it out of the queue (its waiter hears false); the next waiter gets the slot.
    func release(_ id: Int) {
        guard limit != nil else { return }
        var wake: [(CheckedContinuation<Bool, Never>, Bool)] = []
        state.withLock { state in
            if let index = state.waiting.firstIndex(of: id) {
                state.waiting.remove(at: index)
                if let continuation = state.continuations.removeValue(forKey: id) { wake.append((continuation, false)) }
                return
            }
            guard state.holders.remove(id) != nil else { return }
            while let limit = limit, state.holders.count < limit, !state.waiting.isEmpty {
                let next = state.waiting.removeFirst()
                state.holders.insert(next)
                if let continuation = state.continuations.removeValue(forKey: next) { wake.append((continuation, true)) }
            }
        }
        for (continuation, answer) in wake { continuation.resume(returning: answer) }
    }
}
