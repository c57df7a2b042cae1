import Synchronization
import Dispatch
import FoundationEssentials
import Wire

extension SessionManager {
    /// Completes `task` once, in the order of §1.2.8: the download move, `taskDidFinishCollectingMetrics` and
    /// `taskDidComplete` on the delegate queue, serialization in this Swift task (skipped after a transport
    /// error), the completion handler on the completion queue (inside the group), then the temporary file's removal,
    /// the `didComplete` event, and the session's invalidation if this was its last task.
    func complete(_ task: SessionTask, _ delegate: TaskDelegate, _ outcome: TransferOutcome) async {
        await task.markCompleted(error: outcome.error)
        state.withLock { _ = $0.delegates.removeValue(forKey: task.taskIdentifier) }
        let hooks = self.hooks
        var failure = outcome.error
        var movedTo: String?
        if task.kind == .download, failure == nil, let temporary = outcome.temporaryFile, let response = outcome.response {
            // The manager hook first, then the task's own block: both on the delegate queue, like every hook.
            let finish = hooks.downloadTaskDidFinishDownloading
            let taskDestination = delegate.destination
            var chosen: String?
            if finish != nil || taskDestination != nil {
                chosen = await askDelegateQueue { finish?(task, temporary) ?? taskDestination?(temporary, response) }
            }
            if let destination = chosen {
                do {
                    try await DownloadFile.move(temporary, to: destination, replacing: delegate.replacesExistingFile,
                                                url: response.url)
                    movedTo = destination
                    emit(.downloadDidMoveFile(task, destination))
                } catch {
                    // The task fails loudly (AF reports success here).
                    emit(.downloadDidFailToMoveFile(task, error))
                    task.setError(error)
                    failure = error
                }
            }
        }
        let transportError = outcome.error
        let finalError = failure
        let metrics = outcome.metrics
        if hooks.taskDidFinishCollectingMetrics != nil || hooks.taskDidComplete != nil {
            await askDelegateQueue {
                if let metrics { hooks.taskDidFinishCollectingMetrics?(task, metrics) }
                hooks.taskDidComplete?(task, finalError)
            }
        }
        var value: (any Sendable)?
        if transportError == nil {
            let serializer = responseSerializer
            let response = outcome.response
            let data = task.kind == .download ? nil : outcome.data
            // Here, in the task's driver on Swift's global executor: off the delegate queue and every event loop, and
            // concurrent across tasks, which is all a processing queue would give, without two thread hops.
            let serialized = serializer.serialize(response: response, data: data)
            if task.kind == .download {
                value = movedTo
                if failure == nil { failure = serialized.error }
            } else {
                value = serialized.value
                failure = serialized.error
            }
            task.setError(failure)
        }
        let info = CompletionInfo(response: outcome.response, value: value, data: outcome.data, downloadPath: movedTo,
                                  error: failure, metrics: metrics)
        // Before the completion handler; a file kept for resume data is not deleted.
        let keptForResumption = await handOverResumeData(of: task, outcome)
        await deliver(info, to: delegate)
        if let temporary = outcome.temporaryFile, movedTo == nil, !keptForResumption { try? await AsyncFile.remove(temporary) }
        emit(.didComplete(task, info))
        task.release()
        taskFinished(generation: delegate.generation)
    }

    /// Calls the completion handler on the completion queue, inside the completion group, and returns after it did.
    private func deliver(_ info: CompletionInfo, to delegate: TaskDelegate) async {
        if delegate.completesInline {
            // The `async` forms' own handler: it only resumes the caller's continuation.
            delegate.completion?(info)
            return
        }
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
