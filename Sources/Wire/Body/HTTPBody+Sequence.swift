import Synchronization

extension HTTPBody {
    /// A body whose chunks come from `chunks`, read with the same back-pressure as a body from the network: the
    /// sequence is iterated on a task of its own, which waits while the consumer is more than the high watermark
    /// behind, and is cancelled when the consumer drops the body. An error the sequence throws reaches the consumer
    /// after the chunks before it.
    ///
    /// For a cache or a test double that hands back a Wire-typed response:
    ///
    /// ```swift
    /// let body = HTTPBody(AsyncStream { continuation in
    ///     continuation.yield(ByteBuffer(string: "cached"))
    ///     continuation.finish()
    /// })
    /// ```
    /// - Parameter chunks: The body's bytes, in order; empty chunks are skipped.
    public init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks) where Chunks.Element == ByteBuffer {
        let channel = BodyChannel()
        let pump = SequencePump()
        channel.setProducerHooks(onDemand: { pump.demand() }, onCancel: { pump.cancel() })
        let task = Task {
            do {
                for try await chunk in chunks {
                    guard !Task.isCancelled else { return }
                    guard chunk.readableBytes > 0 else { continue }
                    if !channel.yield(chunk) { await pump.waitForDemand() }
                }
                channel.finish()
            } catch {
                channel.fail(error)
            }
        }
        pump.attach(task)
        self.init(channel: channel)
    }
}

/// The producer side of a sequence-backed body: where its task waits for demand, and how it is cancelled.
final class SequencePump: Sendable {
    private struct State {
        var waiter: CheckedContinuation<Void, Never>?
        /// Demand that came while nobody waited: the next wait returns at once.
        var demandPending = false
        var cancelled = false
        var task: Task<Void, Never>?
    }

    private let state = Lock(State())

    /// Keeps the iterating task, so a cancellation reaches it; cancels it at once if the body is already dropped.
    func attach(_ task: Task<Void, Never>) {
        let cancelNow = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelNow { task.cancel() }
    }

    /// Waits until the consumer wants more, or the body is dropped.
    func waitForDemand() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.demandPending || state.cancelled {
                    state.demandPending = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// The consumer caught up.
    func demand() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.demandPending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// The consumer dropped the body: stop iterating.
    func cancel() {
        let (waiter, task) = state.withLock { state -> (CheckedContinuation<Void, Never>?, Task<Void, Never>?) in
            state.cancelled = true
            defer { state.waiter = nil }
            return (state.waiter, state.task)
        }
        task?.cancel()
        waiter?.resume()
    }
}
