import Synchronization
public import FoundationEssentials

extension SessionManager {
    /// Sends `request` (resuming the task for you) and returns the serialized value, response and body.
    /// - Throws: `ClientError`: transport, validation or serialization (the error carries the response and data).
    ///   Cancelling the calling Swift task cancels the transfer.
    public func data(for request: ClientRequest) async throws(ClientError) -> DataResult {
        try await run { completion in self.makeTask(.data, request, completionInfo: completion, completesInline: true) }
    }

    /// Uploads `data` as the body of `request` and returns the serialized response.
    public func upload(for request: ClientRequest, fromData data: Data) async throws(ClientError) -> DataResult {
        var request = request
        request.body = .data(data)
        return try await run { [request] completion in self.makeTask(.upload, request, completionInfo: completion, completesInline: true) }
    }

    /// Uploads the file at `path` as the body of `request` and returns the serialized response.
    public func upload(for request: ClientRequest, fromFile path: String) async throws(ClientError) -> DataResult {
        var request = request
        request.body = .file(path: path)
        return try await run { [request] completion in self.makeTask(.upload, request, completionInfo: completion, completesInline: true) }
    }

    /// Downloads `request`'s response body to `destination`; the result's value is the destination path.
    public func download(for request: ClientRequest, destination: @escaping DownloadDestination,
                         replacesExistingFile: Bool = false) async throws(ClientError) -> DataResult {
        try await run { completion in
            self.makeTask(.download, request, completionInfo: completion, destination: destination,
                          replacesExistingFile: replacesExistingFile, completesInline: true)
        }
    }

    /// Makes a task with `make`, resumes it, and waits for its completion handler; a cancelled caller cancels it.
    /// `make` runs at once, in the caller's Swift task (not escaping: no closure context to allocate per call).
    func run(_ make: (@escaping @Sendable (CompletionInfo) -> Void) -> SessionTask) async throws(ClientError) -> DataResult {
        let made = Locked<(task: SessionTask?, cancelled: Bool)>((nil, false))
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<DataResult, ClientError>, Never>) in
                let task = make { info in
                    if let error = info.error {
                        continuation.resume(returning: .failure(error))
                    } else {
                        continuation.resume(returning: .success(DataResult(value: info.value, response: info.response, data: info.data)))
                    }
                }
                let cancelled = made.withLock { made -> Bool in
                    made.task = task
                    return made.cancelled
                }
                task.resume()
                if cancelled { task.cancel() }
            }
        } onCancel: {
            made.withLock { made -> SessionTask? in
                made.cancelled = true
                return made.task
            }?.cancel()
        }
        return try result.get()
    }
}
