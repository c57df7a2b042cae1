import FoundationEssentials
import Synchronization
@_spi(Locking) import Wire

/// One transfer of a `SessionManager`: a data, upload or download task (NSURLSessionTask).
///
/// A task starts suspended; `resume()` starts it, `suspend()` pauses it with real back-pressure (no byte is read
/// from or written to its connection past what is buffered, no callback fires), `cancel()` ends it with
/// `.cancelled`. Its completion handler runs exactly once. Every property is safe to read from any thread.
public final class SessionTask: Sendable, CustomStringConvertible {
    /// What a task transfers.
    public enum Kind: Sendable, Hashable {
        /// A request whose response body is buffered in memory.
        case data
        /// A request with a body from data, a file or a stream; the response is buffered like a data task's.
        case upload
        /// A request whose response body goes to a file.
        case download
    }

    /// Where a task is in its life (NSURLSessionTask's states); `TaskStateMachine` says which input moves it where.
    public enum State: Sendable, Hashable, CaseIterable {
        /// Created, or suspended by the caller: no byte moves.
        case suspended
        /// Resumed: the transfer runs, or waits for a slot under `maximumConcurrentTasks`.
        case running
        /// Cancelled (by the caller, a timeout or invalidation); completion follows.
        case canceling
        /// Finished: the completion handler has been (or is being) called. Terminal.
        case completed
    }

    /// Unique within the manager: 1 for its first task, then the next integer; never reused.
    public let taskIdentifier: Int
    /// What the task transfers.
    public let kind: Kind
    /// The request as the task was created with.
    public let originalRequest: ClientRequest
    /// Whether the transfer runs in the caller's Swift task (the `async` forms) rather than in a driver task of its
    /// own: `cancel()` then ends it through the Wire request's abort handle, and a resume never starts a driver.
    let drivenByCaller: Bool
    /// The idle timeout's clock (`IdleTimer`), read by the manager's `TimeoutWatch` without the task's lock.
    let idleClock = IdleClock()

    struct Core {
        var machine = TaskStateMachine()
        /// The request being sent when it is not `originalRequest` (a redirect's hop, an adapted attempt); nil while
        /// it is the original, which then is not stored twice.
        var replacedRequest: ClientRequest? {
            get { replacedRequestBox?.value }
            set { replacedRequestBox = newValue.map(Boxed.init) }
        }
        /// `replacedRequest`, boxed: most tasks never replace their request, and the box keeps `Core` (allocated
        /// with every task, and written whole) a few cache lines smaller.
        var replacedRequestBox: Boxed<ClientRequest>?
        var response: ClientResponse?
        var uploadProgress = TaskProgress()
        /// Its total is the response's expected length once a response is set: worked out when the progress is
        /// first read (`settledDownloadProgress()`), since most tasks' progress is never read.
        var downloadProgress = TaskProgress()
        /// Whether `downloadProgress`'s total is still to be read from `response`.
        var downloadTotalPending = false
        var taskDescription: String?
        var error: ClientError?
        /// Why the task was cancelled (`.cancelled`, `.timedOut`, `.sessionInvalidated`); first reason wins.
        var cancelReason: ClientError?
        /// The manager, held until the task completes, so that a task keeps its manager alive.
        var manager: SessionManager?
        /// Whether the task was ever resumed (its transfer started).
        var started = false
        /// The transfer, once started; cancelled by `cancel()`. A caller-driven task has none (only a retry delay's
        /// sleep, while it lasts).
        var driver: Task<Void, Never>?
        /// The Wire request of a caller-driven task's current hop, aborted by `cancel()`.
        var abort: HTTPClientAbortHandle?
        /// The idle timeout of the running transfer, paused while suspended.
        var idleTimer: IdleTimer?
        /// Waiting in `waitWhileSuspended()`.
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// The download task this data task handed its exchange over to (`becomeDownload`).
        weak var successor: SessionTask?
        /// Body bytes Wire wrote while the task was suspended (they were already on their way): reported at resume,
        /// since no progress callback may run while a task is suspended.
        var deferredUploadTotal: Int64?
        /// Queues the upload-progress callbacks on the delegate queue (set by the transfer). Called under this lock,
        /// so a report and a `suspend()` are queued in the order they happened: none lands after `didSuspend`.
        var uploadReporter: (@Sendable (_ delta: Int64, _ progress: TaskProgress) -> Void)?
        /// A download's resumption: the record it resumes from, where its body goes, who wants resume data.
        var resumption: DownloadResumption {
            get { resumptionBox?.value ?? DownloadResumption() }
            set { resumptionBox = Boxed(newValue) }
        }
        /// `resumption`, boxed (a download changes it a few times; other tasks never do), like `replacedRequest`.
        var resumptionBox: Boxed<DownloadResumption>?

        /// The download progress, its total read from the response if that is still to be done.
        mutating func settledDownloadProgress() -> TaskProgress {
            if downloadTotalPending {
                downloadProgress.totalUnitCount = response?.expectedContentLength ?? -1
                downloadTotalPending = false
            }
            return downloadProgress
        }
    }

    let core: Lock<Core>

    init(identifier: Int, kind: Kind, request: consuming ClientRequest, manager: SessionManager, drivenByCaller: Bool = false) {
        taskIdentifier = identifier
        self.kind = kind
        originalRequest = request
        self.drivenByCaller = drivenByCaller
        core = Lock(Core(manager: manager))
    }

    /// The state now.
    public var state: State { core.withLock { $0.machine.state } }
    /// The request now being sent: after a redirect, the request for the new location.
    public var currentRequest: ClientRequest { core.withLock { $0.replacedRequest } ?? originalRequest }
    /// The final response, once its head arrived (during a redirect, nil until the last hop answers).
    public var response: ClientResponse? { core.withLock { $0.response } }
    /// Upload progress: body bytes written to the socket, of the body's length (−1 unknown).
    public var uploadProgress: TaskProgress { core.withLock { $0.uploadProgress } }
    /// Download progress: body bytes received on the wire, of `Content-Length` (−1 unknown).
    public var downloadProgress: TaskProgress { core.withLock { $0.settledDownloadProgress() } }
    /// Body bytes written to the socket so far.
    public var countOfBytesSent: Int64 { uploadProgress.completedUnitCount }
    /// The body's expected length, or −1.
    public var countOfBytesExpectedToSend: Int64 { uploadProgress.totalUnitCount }
    /// Body bytes received so far.
    public var countOfBytesReceived: Int64 { downloadProgress.completedUnitCount }
    /// The response's `Content-Length`, or −1.
    public var countOfBytesExpectedToReceive: Int64 { downloadProgress.totalUnitCount }
    /// The error the task completed with, if any.
    public var error: ClientError? { core.withLock { $0.error } }
    /// A label of the caller's choosing.
    public var taskDescription: String? {
        get { core.withLock { $0.taskDescription } }
        set { core.withLock { $0.taskDescription = newValue } }
    }

    /// `kind #identifier METHOD URL (state)`.
    public var description: String {
        "\(kind) task #\(taskIdentifier) \(originalRequest.method) \(originalRequest.url.absoluteString) (\(state))"
    }

    /// Starts or continues the task (`suspended → running`); emits `didResume`. Does nothing in any other state.
    public func resume() {
        let (manager, first, waiters) = core.withLock { core -> (SessionManager?, Bool, [CheckedContinuation<Void, Never>]) in
            guard core.machine.apply(.resume) != nil else { return (nil, false, []) }
            let first = !core.started
            core.started = true
            core.idleTimer?.setPaused(false)
            // Queued under the lock so that concurrent resume/suspend calls emit in the order they took effect.
            core.manager?.emit(.didResume(self))
            if let deferred = core.deferredUploadTotal.flatMap({ Self.advanceUpload(&core, to: $0) }) {
                core.uploadReporter?(deferred.delta, deferred.progress)
            }
            core.deferredUploadTotal = nil
            defer { core.waiters = [] }
            return (core.manager, first, core.waiters)
        }
        guard let manager else { return }
        manager.taskDidResume(self, first: first)
        for waiter in waiters { waiter.resume() }
    }

    /// Pauses a running task (`running → suspended`); emits `didSuspend`. Does nothing in any other state.
    public func suspend() {
        core.withLock { core in
            guard core.machine.apply(.suspend) != nil else { return }
            core.idleTimer?.setPaused(true)
            // Queued under the lock: see `resume()`.
            core.manager?.emit(.didSuspend(self))
        }
    }

    /// Cancels the task: it completes (once) with `.cancelled`, also when it was never resumed. Does nothing once the
    /// task is cancelling or completed.
    public func cancel() {
        cancel(reason: cancellation)
    }

    /// The error of a task cancelled by `cancel()` or by its caller.
    private var cancellation: ClientError {
        ClientError(.cancelled, failingURL: originalRequest.url, failureReason: "the task was cancelled")
    }

    /// Cancels with `reason` as the task's error: `cancel()`, a timeout, invalidation.
    func cancel(reason: ClientError) {
        let (manager, start, driver, abort, waiters) = core.withLock {
            core -> (SessionManager?, Bool, Task<Void, Never>?, HTTPClientAbortHandle?, [CheckedContinuation<Void, Never>]) in
            guard core.machine.apply(.cancel) != nil else { return (nil, false, nil, nil, []) }
            core.cancelReason = core.cancelReason ?? reason
            let start = !core.started
            core.started = true
            defer { core.waiters = [] }
            return (core.manager, start, core.driver, core.abort, core.waiters)
        }
        guard let manager else { return }
        for waiter in waiters { waiter.resume() }
        driver?.cancel()
        // After the reason is set: the transfer maps the abort's `.cancelled` to it.
        abort?.abort(reason: reason.failureReason ?? "the task was cancelled")
        manager.slots.release(taskIdentifier)
        // A task never resumed has no transfer to end: start one, which sees the reason and completes at once (a
        // caller-driven task's caller runs it).
        if start && !drivenByCaller { manager.startDriver(for: self) }
    }

    /// Ends the transfer this task started, for its timeouts: cancels this task, or the download task it handed the
    /// exchange over to (whose completion is now the transfer's).
    func cancelTransfer(reason: ClientError) {
        let successor = core.withLock { core in core.machine.state == .completed ? core.successor : nil }
        (successor ?? self).cancel(reason: reason)
    }

    /// Returns once the task is not suspended (running, cancelling or completed).
    @inline(__always)  // The common case, a running task, is one lock in the caller's frame: no frame of its own.
    nonisolated(nonsending) func waitWhileSuspended() async {
        // The common case, a running task, costs one lock and no continuation (this runs twice per body chunk).
        guard core.withLock({ $0.machine.state == .suspended }) else { return }
        await waitForResume()
    }

    /// `waitWhileSuspended()` for a task found suspended. A caller-driven task's caller cancelling its Swift task
    /// meanwhile cancels the task, which ends the wait (`whileCallerWaits`).
    @inline(never)
    nonisolated(nonsending) private func waitForResume() async {
        await whileCallerWaits {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = core.withLock { core -> Bool in
                    guard core.machine.state == .suspended else { return true }
                    core.waiters.append(continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    /// Runs `wait`, one of a caller-driven task's waits that nothing of Wire's ends (for a slot, for a resume, a
    /// retry's delay), with the caller's cancellation cancelling this task, which ends the wait. Wire's own waits
    /// (the exchange, a body's next chunk) end at the caller's cancellation themselves, and the transfer then
    /// cancels the task (`cancelReason(after:)`): so the common path, which waits only on Wire, installs no
    /// handler of its own. A driver task's waits are ended by `cancel()` directly.
    nonisolated(nonsending) func whileCallerWaits<T>(_ wait: () async -> T) async -> T {
        guard drivenByCaller else { return await wait() }
        return await withTaskCancellationHandler(
            operation: wait,
            onCancel: {
                self.cancelTransfer(reason: self.cancellation)
            })
    }

    /// The reason the task was cancelled, if it was.
    var cancelReason: ClientError? { core.withLock { $0.cancelReason } }

    /// Returns once the task is not suspended, with the reason it was cancelled, if it was: `waitWhileSuspended()`
    /// and `cancelReason` in one lock for a running task (the common case, at every step of a transfer).
    @inline(__always)  // As `waitWhileSuspended()`: the common case in the caller's frame.
    nonisolated(nonsending) func checkpoint() async -> ClientError? {
        let (suspended, reason) = core.withLock { ($0.machine.state == .suspended, $0.cancelReason) }
        guard suspended else { return reason }
        await waitForResume()
        return cancelReason
    }

    /// Records the transfer so `cancel()` can stop it; cancels it at once when the task was cancelled meanwhile.
    ///
    /// The driver runs as soon as it is made, on another thread, and may have reached a `becomeDownload` hand-over
    /// before its maker records it here: the hand-over then found no driver to pass on, so the driver goes on to the
    /// download task, which a timeout or `cancel()` now cancels (otherwise nothing would end the transfer). A task that
    /// completed otherwise keeps no driver (`release()` has let go of it, or is about to).
    func attach(driver: Task<Void, Never>) {
        let (cancelled, successor) = core.withLock { core -> (Bool, SessionTask?) in
            guard core.machine.state != .completed else { return (false, core.successor) }
            core.driver = driver
            return (core.cancelReason != nil, nil)
        }
        if cancelled { driver.cancel() }
        successor?.attach(driver: driver)
    }

    /// Why the transfer failed with `error`, when it was cancelled. A caller-driven task whose caller's Swift task
    /// was cancelled sees Wire's own `.cancelled` (Wire ends its waits at the caller's cancellation): the task's
    /// cancellation is recorded here then (first reason wins), so the task fails with `.cancelled`.
    func cancelReason(after error: any Error) -> ClientError? {
        if drivenByCaller, Task.isCancelled { cancel() }
        return cancelReason
    }

    /// Records a caller-driven hop's abort handle for `cancel()`.
    /// - Returns: False when the task was cancelled already (the hop must not start).
    func setAbort(_ handle: HTTPClientAbortHandle) -> Bool {
        core.withLock { core -> Bool in
            guard core.cancelReason == nil else { return false }
            core.abort = handle
            return true
        }
    }

    /// Waits `delay` (a retry's), or less when the task is cancelled: a driver task's sleep ends when `cancel()`
    /// cancels the driver; a caller-driven task sleeps in a Swift task of its own that `cancel()` cancels.
    func pause(for delay: Duration) async {
        guard drivenByCaller else {
            try? await Task.sleep(for: delay)
            return
        }
        let sleeper = Task { _ = try? await Task.sleep(for: delay) }
        attach(driver: sleeper)
        await whileCallerWaits { await sleeper.value }
        core.withLock { $0.driver = nil }
    }

    /// Moves to `completed` once the task is not suspended (a transfer that ended while suspended completes on
    /// resume: no callback while suspended). Only the task's transfer calls it, so it succeeds exactly once.
    @inline(__always)  // The common case, a running task completing at once, in the caller's frame.
    nonisolated(nonsending) func markCompleted(error: ClientError?, response: ClientResponse? = nil) async {
        if tryMarkingCompleted(error: error, response: response) { return }
        await markCompletedOnceResumed(error: error, response: response)
    }

    /// Completes the task unless it is suspended, with `response` (the final one, with the whole exchange's metrics)
    /// in place of the head's when given; whether it is completed now.
    private func tryMarkingCompleted(error: ClientError?, response: ClientResponse?) -> Bool {
        core.withLock { core -> Bool in
            if core.machine.apply(.complete) != nil {
                core.error = error
                core.idleTimer = nil
                // Only over the response the task had (the final hop's head), with its metrics now complete.
                if let response, core.response != nil { core.response = response }
                return true
            }
            return core.machine.state == .completed
        }
    }

    /// `markCompleted(error:response:)` for a suspended task: completes it once resumed.
    @inline(never)
    nonisolated(nonsending) private func markCompletedOnceResumed(error: ClientError?, response: ClientResponse?) async {
        while true {
            await waitWhileSuspended()
            if tryMarkingCompleted(error: error, response: response) { return }
        }
    }

    /// Hands a running data task's exchange over to `download` (`becomeDownload`): the download takes the current
    /// request, response, progress, transfer and idle timer and starts running; this task completes silently (no
    /// handler, no event) and lets go of its manager.
    /// - Returns: False (and nothing changes) when this task was cancelled meanwhile.
    func handOver(to download: SessionTask, idle: IdleTimer) -> Bool {
        core.withLock { core -> Bool in
            guard core.machine.state == .running, core.machine.apply(.complete) != nil else { return false }
            _ = core.settledDownloadProgress()
            // The download task is running with the exchange before this task names it as its successor, in one
            // step for anyone who looks here: a timeout that fires meanwhile (`cancelTransfer`, which forwards to the
            // successor) finds a running task that can abort the exchange, not a suspended one it would complete
            // without its delegate while the exchange went on. Nobody else knows the new task yet, so taking its
            // lock inside this one cannot deadlock.
            download.core.withLock { next in
                _ = next.machine.apply(.resume)
                next.started = true
                next.replacedRequest = core.replacedRequest
                next.response = core.response
                next.uploadProgress = core.uploadProgress
                next.downloadProgress = core.downloadProgress
                next.driver = core.driver
                next.abort = core.abort
                next.idleTimer = idle
            }
            core.successor = download
            core.manager = nil
            core.driver = nil
            core.abort = nil
            core.idleTimer = nil
            return true
        }
    }

    /// Sets the error the task completed with (a failed move replaces success).
    func setError(_ error: ClientError?) {
        core.withLock { $0.error = error }
    }

    /// Prepares another attempt: the request it sends, progress from zero (the totals unknown until it reports them).
    func beginAttempt(with request: ClientRequest) {
        core.withLock { core in
            core.replacedRequest = request
            core.response = nil
            core.uploadProgress = TaskProgress()
            core.downloadProgress = TaskProgress()
            core.downloadTotalPending = false
            core.deferredUploadTotal = nil
        }
    }

    /// Records the next hop's request.
    func setCurrentRequest(_ request: ClientRequest) {
        core.withLock { $0.replacedRequest = request }
    }

    /// Records the final response; the download total is the length it announces (read when the progress is).
    func setResponse(_ response: ClientResponse) {
        core.withLock { core in
            core.response = response
            core.downloadTotalPending = true
        }
    }

    /// Sets the upload total (−1 unknown).
    func setUploadTotal(_ total: Int64) {
        core.withLock { $0.uploadProgress.totalUnitCount = total }
    }

    /// `total` body bytes of this attempt are on the socket; the count never goes down (a replayed body counts
    /// again only past what was already reported).
    /// - Returns: The bytes newly counted and the snapshot, or nil when nothing new was counted.
    func bodySent(total: Int64) {
        core.withLock { core in
            if core.machine.state == .suspended {
                core.deferredUploadTotal = max(core.deferredUploadTotal ?? 0, total)
            } else if let sent = Self.advanceUpload(&core, to: total) {
                core.uploadReporter?(sent.delta, sent.progress)
            }
        }
    }

    /// Installs what `bodySent` and `resume()` call to queue upload-progress callbacks.
    func setUploadReporter(_ reporter: @escaping @Sendable (_ delta: Int64, _ progress: TaskProgress) -> Void) {
        core.withLock { $0.uploadReporter = reporter }
    }

    /// Moves the upload count to `total`; the step and the snapshot, or nil when nothing moved.
    private static func advanceUpload(_ core: inout Core, to total: Int64) -> (delta: Int64, progress: TaskProgress)? {
        guard total > core.uploadProgress.completedUnitCount else { return nil }
        let delta = total - core.uploadProgress.completedUnitCount
        core.uploadProgress.completedUnitCount = total
        return (delta, core.uploadProgress)
    }

    /// `count` more body bytes were received.
    func bodyReceived(_ count: Int) {
        core.withLock { $0.downloadProgress.completedUnitCount += Int64(count) }
    }

    /// The transfer starts, unless the task was cancelled (false): installs its idle timer, paused at once if the
    /// task is suspended.
    func startTransfer(idle timer: IdleTimer) -> Bool {
        core.withLock { core -> Bool in
            guard core.cancelReason == nil else { return false }
            core.idleTimer = timer
            if core.machine.state == .suspended { timer.setPaused(true) }
            return true
        }
    }

    /// Drops the references a completed task no longer needs (the manager, the transfer).
    func release() {
        core.withLock { core in
            core.manager = nil
            core.driver = nil
            core.abort = nil
        }
    }
}
