import Synchronization

/// Ends one request from outside its Swift task: give it to `HTTPClientRequest.abortHandle`, then `abort()` fails
/// the request wherever it is, with `HTTPClientError` code `.cancelled`.
///
/// ```swift
/// let handle = HTTPClientAbortHandle()
/// var request = HTTPClientRequest(url: "http://localhost:8080/slow")
/// request.abortHandle = handle
/// async let response = client.execute(request)
/// handle.abort()                      // the execute call throws .cancelled
/// ```
///
/// What an abort does depends on where the request is: a wait for a connection ends; a request not yet handed to
/// its connection is never written (one aborted while it is being handed over may still go out, and then fails as
/// an exchange under way); an exchange under way fails and its connection closes (it cannot be reused mid-response); a body
/// being read fails with the same error. Aborting after the response ended does nothing. The client uses one handle
/// per request for its own deadlines and for the calling task's cancellation, so the first of these to fire wins.
/// A handle serves one request (and its redirects and retries).
public final class HTTPClientAbortHandle: Sendable {
    let control = AbortControl()

    /// Creates a handle for one request.
    public init() {}

    /// Fails the request now with `HTTPClientError` code `.cancelled` and `reason` as its detail; later calls, and
    /// any after another abort (a deadline, the task's cancellation), do nothing.
    public func abort(reason: String = "the request was aborted through its abort handle") {
        control.abort(HTTPClientError(.cancelled, reason))
    }

    /// Whether the request was aborted (through this handle, a deadline or its task's cancellation).
    public var isAborted: Bool { control.error != nil }
}

/// What ends one request from outside its task, and what it was ended with: kept in the request's
/// `HTTPClientMetrics` (one object per request, not two), or in the caller's `HTTPClientAbortHandle` when the request
/// names one, so that the handle sees the client's own aborts too.
struct AbortControl: ~Copyable, Sendable {
    /// What an abort cancels: a closure, or a request on its connection (named without a closure, which would be
    /// an allocation per request). Not `private`, nor is `State`: Swift 6.3 emits a broken module for a private type
    /// nested in a noncopyable struct that another file stores.
    enum Target {
        case closure(@Sendable (HTTPClientError) -> Void)
        case exchange(LoopBound<HTTP1ClientConnection>, HTTP1ClientConnection.ExchangeID)

        func abort(with error: HTTPClientError) {
            switch self {
            case .closure(let cancel):
                cancel(error)
            case .exchange(let connection, let id):
                connection.loop.execute { connection.value.abort(id, with: error) }
            }
        }
    }

    struct State {
        var current: Target?
        var error: HTTPClientError?
    }

    private let state = Lock(State())

    /// The error the request was aborted with, if it was.
    var error: HTTPClientError? { state.withLock { $0.error } }

    /// Whether the request was aborted: `error != nil` without copying the error out of the lock.
    var isAborted: Bool {
        state.withLock {
            if case .some = $0.error { return true }
            return false
        }
    }

    /// An abort from now on calls `cancel` (a wait for a connection).
    func setCurrent(_ cancel: @escaping @Sendable (HTTPClientError) -> Void) {
        setCurrent(.closure(cancel))
    }

    /// An abort from now on fails request `id` on `connection`.
    func setCurrent(_ connection: LoopBound<HTTP1ClientConnection>, _ id: HTTP1ClientConnection.ExchangeID) {
        setCurrent(.exchange(connection, id))
    }

    private func setCurrent(_ target: Target) {
        let error = state.withLock { state -> HTTPClientError? in
            state.current = target
            return state.error
        }
        if let error { target.abort(with: error) }
    }

    /// Fails the request with `error` unless it was aborted already (the first abort wins).
    func abort(_ error: HTTPClientError) {
        let current = state.withLock { state -> Target? in
            guard state.error == nil else { return nil }
            state.error = error
            return state.current
        }
        current?.abort(with: error)
    }
}
