import CWireLinux
import Glibc
import Synchronization

/// A few threads for calls that block and have no non-blocking form (`getaddrinfo(3)`), so
/// they never stall an event loop or a Swift concurrency thread.
///
/// Threads start on first use, up to `maxThreads`, and then wait on a semaphore for work.
final class BlockingPool: Sendable {
    private struct State {
        var queue: [@Sendable () -> Void] = []
        var threads = 0
        var idle = 0
    }

    private let state = Lock(State())
    private let semaphore: Semaphore
    private let maxThreads: Int
    private let name: String

    /// The process-wide pool used for name resolution.
    static let shared = BlockingPool(name: "wire-blocking", maxThreads: 4)

    init(name: String, maxThreads: Int) {
        self.name = name
        self.maxThreads = maxThreads
        semaphore = Semaphore()
    }

    /// Runs `work` on a pool thread.
    func submit(_ work: @escaping @Sendable () -> Void) {
        let startThread = state.withLock { state -> Bool in
            state.queue.append(work)
            guard state.idle == 0, state.threads < maxThreads else { return false }
            state.threads += 1
            return true
        }
        if startThread {
            let started = try? PosixThread(name: name, detached: true) { [self] in workerLoop() }
            if started == nil {
                // No thread could be made: the work stays queued for a pool thread (a running one, or one a later
                // submit starts).
                state.withLock { $0.threads -= 1 }
            }
        }
        semaphore.signal()
    }

    /// Runs `body` on a pool thread and returns its result to the awaiting task.
    func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: Result { () throws(E) -> T in try body() }) }
        }
        return try result.get()
    }

    private func workerLoop() {
        while true {
            state.withLock { $0.idle += 1 }
            semaphore.wait()
            let work = state.withLock { state -> (@Sendable () -> Void)? in
                state.idle -= 1
                return state.queue.isEmpty ? nil : state.queue.removeFirst()
            }
            work?()
        }
    }
}

/// A POSIX counting semaphore (`sem_init(3)`), kept at a stable address.
package final class Semaphore: Sendable {
    // sem_t must not move once initialized, so it lives in its own allocation. Sharing the
    // pointer across threads is safe because it never changes after init and POSIX makes
    // sem_post/sem_wait thread-safe on the semaphore it points to: that is the whole contract.
    private nonisolated(unsafe) let handle: UnsafeMutablePointer<sem_t>

    package init(value: UInt32 = 0) {
        handle = .allocate(capacity: 1)
        sem_init(handle, 0, value)
    }

    package func signal() { sem_post(handle) }

    package func wait() {
        while sem_wait(handle) == -1 && errno == EINTR {}
    }

    /// Waits until signalled or `nanoseconds` have passed; returns whether it was signalled.
    /// The deadline is on the wall clock (`sem_timedwait(3)` knows no other), so a clock step
    /// can lengthen or shorten one wait: callers use this for periodic wake-ups, not timing.
    package func wait(nanoseconds: UInt64) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let total = UInt64(deadline.tv_nsec) + nanoseconds
        deadline.tv_sec += Int(total / 1_000_000_000)
        deadline.tv_nsec = Int(total % 1_000_000_000)
        while true {
            if sem_timedwait(handle, &deadline) == 0 { return true }
            if errno != EINTR { return false }
        }
    }

    deinit {
        sem_destroy(handle)
        handle.deallocate()
    }
}
