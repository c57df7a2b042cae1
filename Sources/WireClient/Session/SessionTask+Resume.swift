import Synchronization
@_spi(Locking) import Wire
public import FoundationEssentials

extension SessionTask {
    /// Cancels a download task and hands `handler` the data to resume it with `downloadTask(withResumeData:)`, once
    /// the transfer has stopped and the temporary file is closed; the task itself completes with `.cancelled`.
    ///
    /// The data is nil when the download cannot be resumed: not a download task, not a GET, no response head yet,
    /// a status other than 200 or 206, no validator (a strong `ETag`, else `Last-Modified`), a `Content-Encoding`
    /// other than identity, a `Range` of the caller's own, or a task that already completed or is being cancelled.
    /// When there is data, the temporary file is kept (not deleted) for the resumption; otherwise it is deleted as
    /// for any cancelled download. `handler` never runs on an event loop or under a lock of WireClient.
    ///
    /// The data is JSON holding the request's header fields as sent (an `Authorization` or `Cookie` among them):
    /// store it as carefully as those.
    public func cancel(producingResumeData handler: @escaping @Sendable (Data?) -> Void) {
        let accepted = core.withLock { core -> Bool in
            guard kind == .download, core.resumption.handler == nil,
                core.machine.state == .suspended || core.machine.state == .running
            else { return false }
            core.resumption.handler = handler
            return true
        }
        cancel()
        // Not on the caller's thread, which may be an event loop.
        if !accepted { Task { handler(nil) } }
    }

    /// Cancels a download task and returns its resume data, or nil (see `cancel(producingResumeData:)`).
    public func cancelProducingResumeData() async -> Data? {
        await withCheckedContinuation { continuation in
            cancel(producingResumeData: { continuation.resume(returning: $0) })
        }
    }

    /// The resumption now.
    var resumption: DownloadResumption { core.withLock { $0.resumption } }

    /// Changes the resumption.
    func updateResumption(_ change: (inout DownloadResumption) -> Void) {
        core.withLock { change(&$0.resumption) }
    }

    /// Takes the resume-data handler, if one waits: whoever takes it calls it, exactly once.
    func takeResumeDataHandler() -> (@Sendable (Data?) -> Void)? {
        core.withLock { core in
            defer { core.resumption.handler = nil }
            return core.resumption.handler
        }
    }

    /// Download progress continues from `offset` bytes already on disk, of `total` (−1 unknown).
    func continueProgress(at offset: Int64, of total: Int64) -> TaskProgress {
        core.withLock { core in
            core.downloadProgress = TaskProgress(completedUnitCount: offset, totalUnitCount: total)
            core.downloadTotalPending = false
            return core.downloadProgress
        }
    }
}
