import FoundationEssentials
import Wire

/// The task's side of a transfer, as WireClient's own stages see it: its state, its idle timeout, the hooks a stage
/// asks, and how the body is received. The session implements it once per task; no stage names the session.
package protocol TransferContext: AnyObject, Sendable {
    /// The task's identifier.
    var taskIdentifier: Int { get }
    /// Whether the task is a download (its body goes to a file, and it may resume).
    var isDownload: Bool { get }
    /// Whether the task is a data task (neither an upload nor a download).
    var isDataTask: Bool { get }
    /// The request the task was created with.
    var originalRequest: ClientRequest { get }
    /// The request being sent now.
    var currentRequest: ClientRequest { get }
    /// Why the task was cancelled, once it was.
    var cancelReason: ClientError? { get }
    /// The cancellation reason when `error` came from it (a cancelled or timed-out task's aborted exchange).
    func cancelReason(after error: any Error) -> ClientError?
    /// Cancels the task (a hook's answer) and returns the reason it fails with.
    func cancelTask() -> ClientError
    /// Waits while the task is suspended; the reason when it was cancelled meanwhile.
    nonisolated(nonsending) func checkpoint() async -> ClientError?
    /// A new attempt starts with `request` (adapted by the interceptors): progress and records start again.
    func beginAttempt(with request: ClientRequest)
    /// The transfer goes on with `request` (a redirect's, a challenge's replay, a restarted range).
    func setCurrentRequest(_ request: ClientRequest)
    /// The response the task shows from now on.
    func setResponse(_ response: ClientResponse)
    /// Body bytes received outside the network (a cached body), for progress.
    func bodyReceived(_ count: Int)
    /// The transfer waits for the caller or a delay: the idle timeout does not run until `releaseIdle()`.
    func holdIdle()
    /// The idle timeout runs again from now.
    func releaseIdle()
    /// Sleeps for `delay` (a retry's), unless the task is cancelled first.
    func pause(for delay: Duration) async
    /// A hop's head arrived: what the task completes with if the transfer fails from here on.
    func record(_ response: ClientResponse, metrics: HTTPClientMetrics?)
    /// The redirect hooks: a new body stream when the redirect keeps the body, then whether (and where) to follow.
    /// Nil: the redirect response itself is delivered.
    nonisolated(nonsending) func proposeRedirect(
        _ proposed: ClientRequest, keepsBody: Bool,
        after response: ClientResponse
    ) async -> ClientRequest?
    /// A resumed download continues from `offset` bytes of `total`: progress and the resume hook.
    nonisolated(nonsending) func continueDownload(at offset: Int64, of total: Int64) async
    /// Sends `request` through the session's client (the chain's last stage) with `fields` as its header fields
    /// (its own with the session's added, made without copying the request): the response head, its body unread.
    nonisolated(nonsending) func exchange(_ request: ClientRequest, fields: HTTPHeaders) async throws(ClientError)
        -> StageResponse
    /// The response recorded last (`record(_:metrics:)`) in this attempt, if any.
    var recordedResponse: ClientResponse? { get }
    /// Receives `response`'s body as the task does (into memory, or a file for a download), with progress and the
    /// response hooks; the result's body is `.received`. A body received already is returned as it is.
    nonisolated(nonsending) func receive(_ response: StageResponse) async -> StageResponse
}
