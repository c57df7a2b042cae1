import Synchronization
import Dispatch

/// One request's outcome in a `batch`.
public struct TaskResult: Sendable {
    /// The response, if one arrived.
    public var response: ClientResponse?
    /// The serialized value.
    public var value: (any Sendable)?
    /// The error, if any.
    public var error: ClientError?

    /// Creates a result.
    public init(response: ClientResponse?, value: (any Sendable)?, error: ClientError?) {
        self.response = response
        self.value = value
        self.error = error
    }
}

extension SessionManager {
    /// Starts a data task for every request (AF 2.x batch operations). After each task's completion handler,
    /// `progress(finished, total)`; after all, `completion` once with the results in input order. Both run on the
    /// completion queue. An empty batch calls `completion([])` asynchronously and `progress` never.
    /// - Returns: The tasks, resumed, in input order.
    @discardableResult
    public func batch(
        _ requests: [ClientRequest], progress: @escaping @Sendable (Int, Int) -> Void = { _, _ in },
        completion: @escaping @Sendable ([TaskResult]) -> Void
    ) -> [SessionTask] {
        guard !requests.isEmpty else {
            let queue = completionQueue ?? privateCompletionQueue
            queue.async { completion([]) }
            return []
        }
        let total = requests.count
        let collected = Locked<(results: [TaskResult?], finished: Int)>((Array(repeating: nil, count: total), 0))
        let tasks = requests.enumerated().map { index, request in
            dataTask(
                with: request,
                completionHandler: { response, value, error in
                    let (finished, all) = collected.withLock { collected -> (Int, [TaskResult]?) in
                        collected.results[index] = TaskResult(response: response, value: value, error: error)
                        collected.finished += 1
                        return (collected.finished, collected.finished == total ? collected.results.compactMap { $0 } : nil)
                    }
                    progress(finished, total)
                    if let all { completion(all) }
                })
        }
        for task in tasks { task.resume() }
        return tasks
    }

    /// `batch` as an `async` call: the results in input order.
    public func batch(_ requests: [ClientRequest], progress: @escaping @Sendable (Int, Int) -> Void = { _, _ in }) async
        -> [TaskResult]
    {
        await withCheckedContinuation { continuation in
            batch(requests, progress: progress) { continuation.resume(returning: $0) }
        }
    }
}
