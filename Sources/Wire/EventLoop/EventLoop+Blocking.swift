import Synchronization

extension EventLoop {
    /// Runs `body` on this loop and blocks the calling thread until it returns its result.
    ///
    /// For code that runs without Swift concurrency (the load engine, profiling harnesses): it costs a semaphore
    /// wait, and deadlocks if called on this loop's own thread, which the precondition catches.
    /// - Parameter body: Work to run on the loop.
    /// - Returns: What `body` returned.
    package func runBlocking<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        precondition(!inEventLoop, "runBlocking on the loop's own thread would wait for itself")
        let box = BlockingResultBox<T>()
        execute {
            let result = body()
            box.value.withLock { $0 = result }
            box.done.signal()
        }
        box.done.wait()
        return box.value.withLock { $0.take()! }
    }
}

/// Carries one result from a loop to the thread waiting for it.
private final class BlockingResultBox<T: Sendable>: Sendable {
    let value = Lock<T?>(nil)
    let done = Semaphore()
}
