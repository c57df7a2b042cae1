import Synchronization
@_spi(Locking) import Wire

/// A value behind a `Lock`, in a class so that escaping closures can share it (a `Lock` itself cannot be captured).
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Lock<Value>

    init(_ value: Value) {
        mutex = Lock(value)
    }

    /// Runs `body` with the value, holding the lock; never call user code inside.
    func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T {
        mutex.withLock { body(&$0) }
    }
}
