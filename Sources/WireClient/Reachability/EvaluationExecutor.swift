import Dispatch

/// A task executor over a private serial dispatch queue: where a manager's evaluations run.
///
/// An evaluation blocks (a netlink dump, sysfs reads), and its latency is part of the contract (a change is
/// reported within 200 ms). On Swift's cooperative pool, which has one thread per core, it would wait behind
/// whatever the application keeps busy there, and it would block a thread the application's tasks need. A serial
/// queue gets a thread of its own from Dispatch when it has work, and none when it has not.
final class EvaluationExecutor: TaskExecutor, Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
