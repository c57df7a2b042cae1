import Dispatch
import Foundation

/// Tells when a `Process` exits, from its termination handler, so that a test waits for the exit itself, with a
/// deadline, instead of polling `isRunning` between sleeps.
///
/// Install it before `run()`: Foundation calls a termination handler set after the process ended never.
public final class ProcessExit: Sendable {
    private let exited = DispatchSemaphore(value: 0)

    /// Installs the termination handler of `process`, which has not started yet.
    public init(of process: Process) {
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
    }

    /// Blocks until the process has exited or `timeout` has passed; returns whether it exited. Once it has, every
    /// later call returns true at once. Blocks its thread: from a task, call it where blocking is harmless (a
    /// peer's `stop()` at a test's end) or on a thread of its own.
    public func wait(timeout: Duration) -> Bool {
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = max(0, Int(min(seconds, 1_000_000)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        guard exited.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success else { return false }
        exited.signal()  // stays signalled for the next call
        return true
    }
}
