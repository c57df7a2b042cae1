import Synchronization
@_spi(Locking) import Wire

extension SessionManager {
    /// Invalidates the session (NSURLSession's `invalidateAndCancel` / `finishTasksAndInvalidate`).
    ///
    /// - `cancelingTasks: true`: every unfinished task (running or suspended) completes with `.cancelled`.
    /// - `cancelingTasks: false`: the tasks run on to completion (a suspended one keeps the session open until it is
    ///   resumed and finishes, or is cancelled).
    ///
    /// Either way `sessionDidBecomeInvalid(nil)` and the `.sessionDidInvalidate` event fire once, after the last
    /// task's completion handler returned, and the session's own client is shut down (its pooled connections close).
    /// Without `resetSession`, new tasks then complete at once with `.sessionInvalidated`; with it, new tasks run on a
    /// fresh session (a new pool) at once. Invalidating again cancels, when asked to, the tasks an earlier invalidation
    /// without cancelling let run on; it tells nothing more.
    /// - Parameters:
    ///   - cancelingTasks: Whether the unfinished tasks are cancelled.
    ///   - resetSession: Whether a new session replaces the invalidated one.
    public func invalidateSession(cancelingTasks: Bool, resetSession: Bool = false) {
        let (old, toCancel, idle) = state.withLock { state -> (SessionGeneration?, [SessionTask], Bool) in
            let current = state.current
            if let current { state.draining[current.number] = current }
            if resetSession {
                state.current = SessionGeneration(number: state.generations, configuration: configuration)
                state.generations += 1
            } else {
                state.current = nil
            }
            // Cancelling reaches the tasks still running on a session that was invalidated earlier without cancelling
            // (finishTasksAndInvalidate, then invalidateAndCancel), not only the current session's.
            let tasks =
                cancelingTasks
                ? state.delegates.delegates.filter { delegate in
                    delegate.generation.map { state.draining[$0.number] === $0 } ?? false
                }.map(\.task).sorted { $0.taskIdentifier < $1.taskIdentifier }
                : []
            return (current, tasks, current.map { $0.pendingTasks.load(ordering: .sequentiallyConsistent) == 0 } ?? false)
        }
        for task in toCancel { task.cancel() }
        if let old, idle { finishInvalidation(of: old) }
    }

    /// A task of `generation` delivered its completion: the last one of an invalidated session ends it.
    ///
    /// The count drops without the lock; whichever of this and `invalidateSession` comes second sees both the
    /// draining mark (set under the lock) and the count at zero, and `finishInvalidation` runs once either way.
    func taskFinished(generation: SessionGeneration?) {
        guard let generation else { return }
        let left = generation.pendingTasks.wrappingSubtract(1, ordering: .sequentiallyConsistent).newValue
        guard left <= 0 else { return }
        if state.withLock({ $0.draining[generation.number] != nil }) { finishInvalidation(of: generation) }
    }

    /// Shuts the invalidated session's client down and tells the hook and the monitors, once.
    private func finishInvalidation(of generation: SessionGeneration) {
        guard state.withLock({ $0.draining.removeValue(forKey: generation.number) }) != nil else { return }
        Task { await generation.shutdown() }
        let hook = hooks.sessionDidBecomeInvalid
        onDelegateQueue { hook?(nil) }
        emit(.sessionDidInvalidate(nil))
    }
}
