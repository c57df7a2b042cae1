import Synchronization
import Dispatch
import FoundationEssentials
@_spi(Locking) import Wire

extension SessionManager {
    /// Completes `task` once, in this order: the download move, `taskDidFinishCollectingMetrics` and
    /// `taskDidComplete` on the delegate queue, serialization in this Swift task (skipped after a transport
    /// error), the completion handler on the completion queue (inside the group), then the temporary file's removal,
    /// the `didComplete` event, and the session's invalidation if this was its last task.
    /// - Returns: What the task completed with (the completion handler's arguments).
    @discardableResult
    @inline(__always) nonisolated(nonsending) func complete(
        _ task: SessionTask, _ delegate: TaskDelegate, _ outcome: consuming TransferOutcome
    )
        async -> CompletionInfo
    {
        // The whole exchange's timings and byte counts (its body ended), which the final response carries
        // (the response a hook saw before the body had none) as the completion does.
        // `outcome` is this function's own (consuming): changed in place, never copied into a local (each copy and
        // destruction of the outcome goes through its value witnesses).
        let metrics = outcome.finalMetrics()
        if let metrics, outcome.exchangeMetrics != nil { outcome.response?.metricsBox = metrics }
        await task.markCompleted(error: outcome.error, response: outcome.exchangeMetrics == nil ? nil : outcome.response)
        // One lock: the task leaves the manager's table, and the hooks and the response serializer are read (the
        // serializer as AFNetworking reads it, before `taskDidComplete` runs).
        let (hooks, responseSerializer) = state.withLock { state in
            _ = state.delegates.remove(task.taskIdentifier)
            return (state.hooksSnapshot, state.responseSerializer)
        }
        var failure = outcome.error
        var movedTo: String?
        if task.kind == .download, failure == nil, let temporary = outcome.temporaryFile, let response = outcome.response {
            (movedTo, failure) = await moveDownload(task, delegate, temporary, response, hooks: hooks)
        }
        if hooks.taskDidFinishCollectingMetrics != nil || hooks.taskDidComplete != nil {
            await tellCompletion(task, metrics: metrics?.value, error: failure, hooks: hooks)
        } else if delegate.uploadProgress != nil || hooks.taskDidSendBodyData != nil {
            // Upload progress goes to the delegate queue as Wire reports bytes sent, without waiting for it: a pass
            // through the queue lets the last of it run before the completion handler, as AFNetworking orders them.
            await askDelegateQueue {}
        }
        // Initialized once, never assigned over: each assignment to an optional existential is a call through its
        // type's value witnesses.
        let value: (any Sendable)?
        if outcome.error == nil {
            let (serialized, error) = serialize(
                task, outcome, with: responseSerializer, movedTo: movedTo, failure: failure)
            value = serialized
            failure = error
        } else {
            value = nil
        }
        // The body moves on (nothing after this reads it from the outcome): no copy to count and release.
        let info = CompletionInfo(
            response: outcome.response, value: value, data: outcome.data.take(), downloadPath: movedTo,
            error: failure, metricsBox: metrics)
        // Before the completion handler; a file kept for resume data is not deleted.
        let keptForResumption = task.kind == .download ? await handOverResumeData(of: task, outcome) : false
        // An `async` form's task has no handler: its caller gets `info` from `drive` (no frame for `deliver`).
        if !delegate.drivenByCaller { await deliver(info, to: delegate) }
        if let temporary = outcome.temporaryFile, movedTo == nil, !keptForResumption { try? await AsyncFile.remove(temporary) }
        emit(.didComplete(task, info))
        task.release()
        taskFinished(generation: delegate.generation)
        return info
    }

    /// A finished download's move: the manager hook first, then the task's own block, both on the delegate queue
    /// like every hook, choose the destination. Returns where the file went (nil: not moved) and the error a failed
    /// move gives the task (it fails loudly, where AF reports success).
    @inline(never)  // Its own async frame, allocated only for downloads (`complete`).
    private func moveDownload(
        _ task: SessionTask, _ delegate: TaskDelegate, _ temporary: String,
        _ response: ClientResponse, hooks: SessionHooksSnapshot
    ) async -> (String?, ClientError?) {
        let finish = hooks.downloadTaskDidFinishDownloading
        let taskDestination = delegate.destination
        guard finish != nil || taskDestination != nil,
            let destination = await askDelegateQueue({ finish?(task, temporary) ?? taskDestination?(temporary, response) })
        else { return (nil, nil) }
        do {
            try await DownloadFile.move(
                temporary, to: destination, replacing: delegate.replacesExistingFile,
                url: response.url)
            emit(.downloadDidMoveFile(task, destination))
            return (destination, nil)
        } catch {
            emit(.downloadDidFailToMoveFile(task, error))
            task.setError(error)
            return (nil, error)
        }
    }

    /// `taskDidFinishCollectingMetrics` and `taskDidComplete`, on the delegate queue.
    @inline(never)  // Its own async frame, allocated only when a hook is set (`complete`).
    private func tellCompletion(
        _ task: SessionTask, metrics: HTTPClientMetrics.Snapshot?, error: ClientError?,
        hooks: SessionHooksSnapshot
    ) async {
        await askDelegateQueue {
            if let metrics { hooks.taskDidFinishCollectingMetrics?(task, metrics) }
            hooks.taskDidComplete?(task, error)
        }
    }

    /// Runs the response serializer (after a transfer without transport error), here in the task's driver on Swift's
    /// global executor: off the delegate queue and every event loop, and concurrent across tasks, which is all a
    /// processing queue would give, without two thread hops. Returns the value and the task's final error.
    private func serialize(
        _ task: SessionTask, _ outcome: TransferOutcome, with responseSerializer: any ResponseSerializer,
        movedTo: String?, failure: ClientError?
    ) -> ((any Sendable)?, ClientError?) {
        // Taken apart as it comes back: the value is moved on, not copied (an existential: a copy goes through its
        // type's witnesses).
        if task.kind != .download {
            let (value, error) = responseSerializer.serialize(response: outcome.response, data: outcome.data)
            // The task completed without an error (`markCompleted`): only a serializer's error changes it.
            if error != nil { task.setError(error) }
            return (value, error)
        }
        let (_, error) = responseSerializer.serialize(response: outcome.response, data: nil)
        let failure = failure ?? error
        task.setError(failure)
        return (movedTo, failure)
    }

    /// Calls the completion handler on the completion queue, inside the completion group, and returns after it did.
    /// Only for a task with a handler: an `async` form's caller gets what the task completed with from `drive`.
    nonisolated(nonsending) private func deliver(_ info: CompletionInfo, to delegate: TaskDelegate) async {
        let (queue, group) = state.withLock { ($0.completionQueue ?? privateCompletionQueue, $0.completionGroup) }
        let completion = delegate.completion
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            group?.enter()
            queue.async {
                completion?(info)
                group?.leave()
                continuation.resume()
            }
        }
    }
}
