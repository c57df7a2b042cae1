import Synchronization

/// A value that one side (usually an event loop) provides once, and tasks await.
///
/// Unlike a bare continuation it can be completed before anyone waits, completed from any
/// thread, and awaited by several tasks; the first completion wins and later ones are ignored.
package final class Promise<Value: Sendable, Failure: Error>: Sendable {
    private struct State {
        var result: Result<Value, Failure>?
        var waiters: [CheckedContinuation<Result<Value, Failure>, Never>] = []
    }

    private let state = Lock(State())

    init() {}

    /// Completes the promise; returns false if it was already completed.
    @discardableResult
    func complete(_ result: Result<Value, Failure>) -> Bool {
        let waiters = state.withLock { state -> [CheckedContinuation<Result<Value, Failure>, Never>]? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: result) }
        return true
    }

    /// Succeeds with `value`.
    @discardableResult
    func succeed(_ value: Value) -> Bool { complete(.success(value)) }

    /// Fails with `error`.
    @discardableResult
    func fail(_ error: Failure) -> Bool { complete(.failure(error)) }

    /// Whether the promise has been completed.
    var isCompleted: Bool { state.withLock { $0.result != nil } }

    /// Waits for the result.
    package func get() async throws(Failure) -> Value {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, Failure>, Never>) in
            let ready = state.withLock { state -> Result<Value, Failure>? in
                if let result = state.result { return result }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
        return try result.get()
    }
}
