import FoundationEssentials
import Synchronization
@_spi(Locking) import Wire

/// Called once when a task completes: the response, the serializer's value (a download: the destination path),
/// the error. Value and error may both be set (a bad status with a parsable body).
public typealias TaskCompletionHandler = @Sendable (ClientResponse?, (any Sendable)?, ClientError?) -> Void
/// Called with a snapshot after every change of a task's upload or download progress.
public typealias TaskProgressHandler = @Sendable (TaskProgress) -> Void
/// Where a finished download goes: given the temporary file's path and the response, returns the destination path.
public typealias DownloadDestination = @Sendable (String, ClientResponse) -> String

/// What the manager keeps per unfinished task (AFURLSessionManagerTaskDelegate): the handlers, the session the
/// task runs on, and the task's side of its transfer chain (`TransferContext`, in `TaskDelegate+Transfer.swift`).
/// In the manager's map from insertion (before the task is returned) until the task completes. A class: it is passed
/// to every stage of a transfer, and a reference keeps their async frames small.
final class TaskDelegate: Sendable {
    let task: SessionTask
    /// The manager the task belongs to (the task holds it too, until it completes).
    let manager: SessionManager
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
    /// The transfer's idle timeout (the request's `timeoutInterval`, else the session's).
    let idle: IdleTimer

    /// What a transfer keeps from hop to hop, besides what its stages keep in their own frames.
    struct Records {
        /// The last hop's response head in this attempt, and its exchange's record in Wire.
        var response: ClientResponse?
        var metrics: HTTPClientMetrics?
        /// The trust the session's TLS layer enforces, read once per transfer when a hop first needs it.
        var trust: SessionTrust?
        /// Whether a hop sent a body (and so set an upload total that a hop without one must reset).
        var sentBody = false
        /// What each proxy was last answered with after a 407 (`ProxyChallengeStage`), kept across the task's hops.
        var proxyAnswers: [Proxy: Proxy] = [:]
    }

    let records = Lock(Records())

    init(
        task: SessionTask, manager: SessionManager, generation: SessionGeneration?, uploadProgress: TaskProgressHandler?,
        downloadProgress: TaskProgressHandler?, completion: (@Sendable (CompletionInfo) -> Void)?,
        destination: DownloadDestination?, replacesExistingFile: Bool, drivenByCaller: Bool, idle: IdleTimer
    ) {
        self.task = task
        self.manager = manager
        self.generation = generation
        self.uploadProgress = uploadProgress
        self.downloadProgress = downloadProgress
        self.completion = completion
        self.destination = destination
        self.replacesExistingFile = replacesExistingFile
        self.drivenByCaller = drivenByCaller
        self.idle = idle
    }
}
