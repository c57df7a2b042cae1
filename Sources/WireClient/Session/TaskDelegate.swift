import FoundationEssentials

/// Called once when a task completes: the response, the serializer's value (a download: the destination path),
/// the error. Value and error may both be set (a bad status with a parsable body).
public typealias TaskCompletionHandler = @Sendable (ClientResponse?, (any Sendable)?, ClientError?) -> Void
/// Called with a snapshot after every change of a task's upload or download progress.
public typealias TaskProgressHandler = @Sendable (TaskProgress) -> Void
/// Where a finished download goes: given the temporary file's path and the response, returns the destination path.
public typealias DownloadDestination = @Sendable (String, ClientResponse) -> String

/// What the manager keeps per unfinished task (AFURLSessionManagerTaskDelegate): the handlers and the session the
/// task runs on. In the manager's map from insertion (before the task is returned) until the task completes. A
/// class: it is passed to every step of a transfer, and a reference keeps those steps' async frames small.
final class TaskDelegate: Sendable {
    let task: SessionTask
    /// The session the task runs on; nil when it was created on an invalidated session.
    let generation: SessionGeneration?
    let uploadProgress: TaskProgressHandler?
    let downloadProgress: TaskProgressHandler?
    /// The completion handler, given everything the task ended with.
    let completion: (@Sendable (CompletionInfo) -> Void)?
    let destination: DownloadDestination?
    let replacesExistingFile: Bool
    /// The task is an `async` form's: its caller drives the transfer and receives what it completed with from
    /// `drive` (no completion handler, no completion queue).
    let drivenByCaller: Bool

    init(task: SessionTask, generation: SessionGeneration?, uploadProgress: TaskProgressHandler?,
         downloadProgress: TaskProgressHandler?, completion: (@Sendable (CompletionInfo) -> Void)?,
         destination: DownloadDestination?, replacesExistingFile: Bool, drivenByCaller: Bool) {
        self.task = task
        self.generation = generation
        self.uploadProgress = uploadProgress
        self.downloadProgress = downloadProgress
        self.completion = completion
        self.destination = destination
        self.replacesExistingFile = replacesExistingFile
        self.drivenByCaller = drivenByCaller
    }
}
