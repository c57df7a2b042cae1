import Synchronization
public import FoundationEssentials

extension SessionManager {
    /// Sends `request` (resuming the task for you) and returns the serialized value, response and body.
    ///
    /// The task's transfer and serialization run in the calling Swift task (no task of their own): with its priority
    /// and task-local values, and off an event loop it prefers as executor. The task is a `SessionTask` like any
    /// other (events, hooks, maximum concurrency, timeouts, invalidation); `cancel()` on it ends this call.
    /// - Throws: `ClientError`: transport, validation or serialization (the error carries the response and data).
    ///   Cancelling the calling Swift task cancels the transfer.
    public func data(for request: ClientRequest) async throws(ClientError) -> DataResult {
        try await run { completion in self.makeTask(.data, request, completionInfo: completion, completesInline: true) }
    }

    /// Uploads `data` as the body of `request` and returns the serialized response; runs like `data(for:)`.
    public func upload(for request: ClientRequest, fromData data: Data) async throws(ClientError) -> DataResult {
        var request = request
        request.body = .data(data)
        return try await run { [request] completion in self.makeTask(.upload, request, completionInfo: completion, completesInline: true) }
    }

    /// Uploads the file at `path` as the body of `request` and returns the serialized response; runs like
    /// `data(for:)`.
    public func upload(for request: ClientRequest, fromFile path: String) async throws(ClientError) -> DataResult {
        var request = request
        request.body = .file(path: path)
        return try await run { [request] completion in self.makeTask(.upload, request, completionInfo: completion, completesInline: true) }
    }

    /// Downloads `request`'s response body to `destination`; the result's value is the destination path. Runs like
    /// `data(for:)`.
    public func download(for request: ClientRequest, destination: @escaping DownloadDestination,
                         replacesExistingFile: Bool = false) async throws(ClientError) -> DataResult {
        try await run { completion in
            self.makeTask(.download, request, completionInfo: completion, destination: destination,
                          replacesExistingFile: replacesExistingFile, completesInline: true)
        }
    }

    /// Makes a task with `make`, resumes it, and returns its outcome; a cancelled caller cancels it. `make` runs at
    /// once, in the caller's Swift task (not escaping: no closure context to allocate per call).
    ///
    /// A task made to complete inline (`completesInline`, the `async` forms) is driven by the caller: its transfer and
    /// completion run in the caller's Swift task, with no driver task and no continuation. It is a `SessionTask` like
    /// any other (events, hooks, slots, timeouts, invalidation); only where its transfer runs differs. It runs with the
    /// caller's priority and task-local values; `cancel()` from elsewhere (a timeout, invalidation) ends it through
    /// the Wire request's abort handle. A caller that prefers a task executor (an event loop) is taken off it for the
    /// transfer: the serializer must not run on an event-loop thread. Any other task runs in its driver, and the
    /// caller waits for its completion handler.
    func run(_ make: (@escaping @Sendable (CompletionInfo) -> Void) -> SessionTask) async throws(ClientError) -> DataResult {
        let delivered = Locked<Delivery>(Delivery())
        let task = make { info in
            let result: Result<DataResult, ClientError> = info.error.map { .failure($0) }
                ?? .success(DataResult(value: info.value, response: info.response, data: info.data))
            delivered.withLock { delivery -> CheckedContinuation<Void, Never>? in
                delivery.result = result
                defer { delivery.waiter = nil }
                return delivery.waiter
            }?.resume()
        }
        // Nothing when the task was cancelled at creation (an invalidated session): it completes at once.
        task.resume()
        await withTaskCancellationHandler {
            if task.drivenByCaller {
                if withUnsafeCurrentTask(body: { $0?.unownedTaskExecutor != nil }) {
                    await withTaskExecutorPreference(globalConcurrentExecutor) { await self.drive(task) }
                } else {
                    await drive(task)
                }
            } else {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let done = delivered.withLock { delivery -> Bool in
                        if delivery.result != nil { return true }
                        delivery.waiter = continuation
                        return false
                    }
                    if done { continuation.resume() }
                }
            }
        } onCancel: {
            // The transfer's: a data task that became a download has handed it over.
            task.cancelTransfer(reason: ClientError(.cancelled, failingURL: task.originalRequest.url,
                                                    failureReason: "the task was cancelled"))
        }
        // Delivered exactly once before `drive` returns, or before the waiter was resumed.
        let result = delivered.withLock { $0.result } ?? .failure(task.error ?? ClientError(
            .cancelled, failingURL: task.originalRequest.url, failureReason: "the task ended without a completion"))
        return try result.get()
    }

    /// What `run` waits for: the task's outcome, and the caller waiting for it when its driver delivers it.
    struct Delivery: Sendable {
        var result: Result<DataResult, ClientError>?
        var waiter: CheckedContinuation<Void, Never>?
    }
}
