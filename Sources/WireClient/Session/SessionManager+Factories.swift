import Synchronization
@_spi(Locking) import Wire
public import FoundationEssentials

extension SessionManager {
    /// A task that sends `request` and buffers the response body; it starts suspended.
    /// - Parameters:
    ///   - request: What to send (its `body`, if any, is sent).
    ///   - uploadProgress: Called after every change of upload progress, on the delegate queue.
    ///   - downloadProgress: Called after every change of download progress, on the delegate queue.
    ///   - completionHandler: Called once, on the completion queue.
    public func dataTask(
        with request: ClientRequest, uploadProgress: TaskProgressHandler? = nil,
        downloadProgress: TaskProgressHandler? = nil,
        completionHandler: TaskCompletionHandler?
    ) -> SessionTask {
        makeTask(
            .data, request, uploadProgress: uploadProgress, downloadProgress: downloadProgress, completion: completionHandler)
    }

    /// A data task without a completion handler (watch it through hooks and events); it starts suspended.
    public func dataTask(with request: ClientRequest) -> SessionTask {
        dataTask(with: request, completionHandler: nil)
    }

    /// A download task without a completion handler, whose file is deleted at the end unless a hook gives it a
    /// destination; it starts suspended.
    public func downloadTask(with request: ClientRequest) -> SessionTask {
        downloadTask(with: request, completionHandler: nil)
    }

    /// An upload task sending `data` as the body; it starts suspended.
    public func uploadTask(
        with request: ClientRequest, fromData data: Data, progress: TaskProgressHandler? = nil,
        completionHandler: TaskCompletionHandler?
    ) -> SessionTask {
        var request = request
        request.body = .data(data)
        return makeTask(.upload, request, uploadProgress: progress, completion: completionHandler)
    }

    /// An upload task sending the file at `path` as the body, read as the socket takes it; it starts suspended. A
    /// missing file fails the task with `.fileNotReachable` when it starts.
    public func uploadTask(
        with request: ClientRequest, fromFile path: String, progress: TaskProgressHandler? = nil,
        completionHandler: TaskCompletionHandler?
    ) -> SessionTask {
        var request = request
        request.body = .file(path: path)
        return makeTask(.upload, request, uploadProgress: progress, completion: completionHandler)
    }

    /// An upload task sending `body` (typically `.stream`, made anew for each attempt); it starts suspended.
    public func uploadTask(
        with request: ClientRequest, streamed body: RequestBody, progress: TaskProgressHandler? = nil,
        completionHandler: TaskCompletionHandler?
    ) -> SessionTask {
        var request = request
        request.body = body
        return makeTask(.upload, request, uploadProgress: progress, completion: completionHandler)
    }

    /// A task that writes the response body to a temporary file and moves it to `destination` at the end; it starts
    /// suspended. The completion handler's value is the destination path when the file was moved.
    /// - Parameters:
    ///   - request: What to send.
    ///   - progress: Called after every change of download progress.
    ///   - destination: Where the file goes (`downloadTaskDidFinishDownloading` takes precedence); nil with no hook
    ///     deletes the file after the completion handler.
    ///   - replacesExistingFile: Whether an existing file at the destination is replaced; false fails the task with
    ///     `.cannotMoveFile` instead.
    ///   - completionHandler: Called once, on the completion queue.
    public func downloadTask(
        with request: ClientRequest, progress: TaskProgressHandler? = nil,
        destination: DownloadDestination? = nil, replacesExistingFile: Bool = false,
        completionHandler: TaskCompletionHandler?
    ) -> SessionTask {
        makeTask(
            .download, request, downloadProgress: progress, completion: completionHandler, destination: destination,
            replacesExistingFile: replacesExistingFile)
    }

    /// Makes a task with the next identifier and registers its delegate before returning it. On an invalidated
    /// session the task completes at once with `.sessionInvalidated` and sends nothing.
    func makeTask(
        _ kind: SessionTask.Kind, _ request: ClientRequest, uploadProgress: TaskProgressHandler? = nil,
        downloadProgress: TaskProgressHandler? = nil, completion: TaskCompletionHandler?,
        destination: DownloadDestination? = nil, replacesExistingFile: Bool = false
    ) -> SessionTask {
        var forward: (@Sendable (CompletionInfo) -> Void)?
        if let completion {
            forward = { info in completion(info.response, info.value, info.error) }
        }
        return makeTask(
            kind, request, uploadProgress: uploadProgress, downloadProgress: downloadProgress,
            completionInfo: forward, destination: destination, replacesExistingFile: replacesExistingFile)
    }

    /// Makes a task whose completion handler gets the whole `CompletionInfo`. A task driven by its caller is an
    /// `async` form's (`run`): the caller runs its transfer (`drive`), which returns what the task completed with.
    func makeTask(
        _ kind: SessionTask.Kind, _ request: consuming ClientRequest, uploadProgress: TaskProgressHandler? = nil,
        downloadProgress: TaskProgressHandler? = nil, completionInfo completion: (@Sendable (CompletionInfo) -> Void)?,
        destination: DownloadDestination? = nil, replacesExistingFile: Bool = false,
        drivenByCaller: Bool = false
    ) -> SessionTask {
        let identifier = nextIdentifier.wrappingAdd(1, ordering: .relaxed).oldValue
        let task = SessionTask(
            identifier: identifier, kind: kind, request: request, manager: self,
            drivenByCaller: drivenByCaller)
        let invalid = state.withLock { state -> Bool in
            state.delegates.insert(
                TaskDelegate(
                    task: task, manager: self, generation: state.current, uploadProgress: uploadProgress,
                    downloadProgress: downloadProgress, completion: completion, destination: destination,
                    replacesExistingFile: replacesExistingFile, drivenByCaller: drivenByCaller, idle: idleTimer(for: task)))
            state.current?.pendingTasks.wrappingAdd(1, ordering: .sequentiallyConsistent)
            return state.current == nil
        }
        if invalid {
            task.cancel(
                reason: ClientError(
                    .sessionInvalidated, failingURL: task.originalRequest.url,
                    failureReason: "the session was invalidated; no new task is accepted"))
        }
        return task
    }
}
