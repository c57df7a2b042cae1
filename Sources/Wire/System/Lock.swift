import CWireLinux
import Synchronization

/// A value behind a mutex that ThreadSanitizer can see: the standard library's `Mutex`, with the happens-before edges
/// of each hold told to the sanitizer when the process runs under it.
///
/// `Mutex` on Linux is a futex whose contended hand-over happens in the kernel, out of the sanitizer's sight, so
/// under `swift test --sanitize=thread` every lock would look like a race. Wire, WireTLS and WireClient lock through
/// this type instead: after taking the lock it calls `__tsan_acquire`, before giving it up `__tsan_release`, both on
/// the value's address. The two are looked up once when the process loads (`c_wire_tsan_acquire`); in a build without
/// the sanitizer each costs a load and a branch, and `withLock` is otherwise `Mutex.withLock`.
@_spi(Locking) public struct Lock<Value: ~Copyable>: ~Copyable {
    // Visible to inlined code: `withLock` is inlinable so that WireTLS and WireClient get it specialised for their
    // values. Left opaque, each of its hundreds of calls from those modules went through the generic entry point, which
    // looks up the metadata of the value, the result and the error at run time. Swift serializes the body of an
    // `@inlinable` declaration for other modules only when it is public, hence the SPI (`@_spi(Locking) import Wire`)
    // instead of `package`: public for inlining, out of the API a user sees.
    @usableFromInline let mutex: Mutex<Value>

    /// A lock holding `initialValue`.
    @inlinable
    public init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
    }

    /// Runs `body` with the value, holding the lock; as `Mutex.withLock`.
    @inlinable @inline(__always)
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        // The mutex's own address (a field of its owner, which never moves): the same for every thread that locks it.
        // Taken from the borrowed mutex, not from the value: forming `&value` is itself an access the sanitizer
        // checks, and it would come before the acquire.
        let address = withUnsafePointer(to: mutex) { UnsafeMutableRawPointer(mutating: $0) }
        return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            c_wire_tsan_acquire(address)
            defer { c_wire_tsan_release(address) }
            return try body(&value)
        }
    }
}

@_spi(Locking) extension Lock: Sendable where Value: ~Copyable {}

/// Happens-before edges that ThreadSanitizer cannot see for itself, for hand-overs outside a `Lock`; each is a no-op
/// unless the process runs under the sanitizer.
///
/// A continuation resumed before its task has finished suspending is one: the concurrency runtime then lets the task
/// go on without telling the sanitizer (`swift_continuation_await` returns at once on a resumed continuation; only a
/// task that really waited is enqueued, which the runtime annotates). The resumer calls `release(resuming:)` first, the
/// task `acquire(resumed:)` once its await returns.
package enum ThreadSanitizer {
    /// Publishes what the calling thread did so far to the task that `continuation` resumes.
    @inline(__always)
    package static func release<T, E: Error>(resuming continuation: UnsafeContinuation<T, E>) {
        c_wire_tsan_release(address(of: continuation))
    }

    /// In the task `continuation` resumed: makes what its resumer did visible.
    @inline(__always)
    package static func acquire<T, E: Error>(resumed continuation: UnsafeContinuation<T, E>) {
        c_wire_tsan_acquire(address(of: continuation))
    }

    /// The continuation's context, the same pointer on both sides (`UnsafeContinuation` is a frozen struct of it).
    @inline(__always)
    private static func address<T, E: Error>(of continuation: UnsafeContinuation<T, E>) -> UnsafeMutableRawPointer {
        unsafeBitCast(continuation, to: UnsafeMutableRawPointer.self)
    }

    /// Publishes what the calling thread did so far at `address`.
    @inline(__always)
    package static func release(_ address: UnsafeRawPointer) {
        c_wire_tsan_release(UnsafeMutableRawPointer(mutating: address))
    }

    /// Makes what was published at `address` visible to the calling thread.
    @inline(__always)
    package static func acquire(_ address: UnsafeRawPointer) {
        c_wire_tsan_acquire(UnsafeMutableRawPointer(mutating: address))
    }
}
