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
    public func data(for request: consuming ClientRequest) async throws(ClientError) -> DataResult {
        try await run(makeTask(.data, request, completionInfo: nil, drivenByCaller: true))
    }

    /// Uploads `data` as the body of `request` and returns the serialized response; runs like `data(for:)`.
    public func upload(for request: ClientRequest, fromData data: Data) async throws(ClientError) -> DataResult {
        var request = request
        request.body = .data(data)
        return try await run(makeTask(.upload, request, completionInfo: nil, drivenByCaller: true))
    }

    /// Uploads the file at `path` as the body of `request` and returns the serialized response; runs like
    /// `data(for:)`.
    public func upload(for request: ClientRequest, fromFile path: String) async throws(ClientError) -> DataResult {
        var request = request
        request.body = .file(path: path)
        return try await run(makeTask(.upload, request, completionInfo: nil, drivenByCaller: true))
    }

    /// Downloads `request`'s response body to `destination`; the result's value is the destination path. Runs like
    /// `data(for:)`.
    public func download(
        for request: ClientRequest, destination: @escaping DownloadDestination,
        replacesExistingFile: Bool = false
    ) async throws(ClientError) -> DataResult {
        try await run(
            makeTask(
                .download, request, completionInfo: nil, destination: destination,
                replacesExistingFile: replacesExistingFile, drivenByCaller: true))
    }

    /// Resumes `task`, a task driven by its caller (`drivenByCaller`) made just now, drives its transfer and returns
    /// its outcome; a cancelled caller cancels it.
    ///
    /// The task's transfer and completion run in the caller's Swift task, with no driver task, no continuation and
    /// no completion handler: `drive` returns what the task completed with. It is a `SessionTask` like any other
    /// (events, hooks, slots, timeouts, invalidation); only where its transfer runs differs. It runs with the caller's
    /// priority and task-local values; `cancel()` from elsewhere (a timeout, invalidation) ends it through the Wire
    /// request's abort handle. A caller that prefers a task executor (an event loop) is taken off it for the
    /// transfer: the serializer must not run on an event-loop thread.
    ///
    /// It runs where its caller runs: the public entry points (`data(for:)`, the verbs) are `nonisolated` and have
    /// left the caller's actor already, so this costs no second executor check.
    @inline(__always)  // Into the verbs and `data(for:)`: one async frame fewer per request.
    nonisolated(nonsending) func run(_ task: SessionTask) async throws(ClientError) -> DataResult {
        // Nothing when the task was cancelled at creation (an invalidated session): `drive` completes it at once.
        task.resume()
        // No cancellation handler here: the common path waits only on Wire, whose waits end at the caller's
        // cancellation, and the transfer then cancels the task (`cancelReason(after:)`); the task's own waits (for a
        // slot, a resume, a retry's delay) install one while they wait (`SessionTask.whileCallerWaits`).
        let info: CompletionInfo?
        if withUnsafeCurrentTask(body: { $0?.unownedTaskExecutor != nil }) {
            info = await withTaskExecutorPreference(globalConcurrentExecutor) { await self.drive(task) }
        } else {
            info = await drive(task)
        }
        // Moved into the switch and out of it (a bound copy, then the optional's destruction, each went through the
        // value witnesses).
        switch consume info {
        case .none:
            throw task.error
                ?? ClientError(
                    .cancelled, failingURL: task.originalRequest.url,
                    failureReason: "the task ended without a completion")
        case .some(let info):
            if let error = info.error { throw error }
            return info.dataResult()
        }
    }
}

extension CompletionInfo {
    /// The value, response and body moved into the `async` forms' result, not copied (a copy of the value, an
    /// optional existential, goes through its type's value witnesses).
    consuming func dataResult() -> DataResult {
        DataResult(value: value, response: response, data: data)
    }
}
