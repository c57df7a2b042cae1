/// The life of a `SessionTask` as a value: the state, and a transition table that says which input moves it where.
///
/// ```
/// suspended ──resume──▶ running ──suspend──▶ suspended
/// suspended | running ──cancel──▶ canceling ──complete──▶ completed
/// running ──complete──▶ completed
/// ```
/// Any other input is a no-op: `apply` returns nil and the state is unchanged, so the caller emits no event and
/// reports no error (a second `resume()`, a `suspend()` of a completed task). `completed` is terminal.
public struct TaskStateMachine: Sendable, Hashable {
    /// Where a task is in its life (NSURLSessionTask's states).
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

    /// What can happen to a task.
    public enum Input: Sendable, Hashable, CaseIterable {
        /// `resume()`.
        case resume
        /// `suspend()`.
        case suspend
        /// `cancel()`, a timeout, or invalidation with cancelling.
        case cancel
        /// The transfer ended (successfully or not).
        case complete
    }

    /// A change of state that happened.
    public struct Transition: Sendable, Hashable {
        /// The state before.
        public var from: State
        /// The state after.
        public var to: State

        /// A transition from `from` to `to`.
        public init(from: State, to: State) {
            self.from = from
            self.to = to
        }
    }

    /// Every transition there is; anything absent is a no-op.
    public static let table: [State: [Input: State]] = [
        .suspended: [.resume: .running, .cancel: .canceling],
        .running: [.suspend: .suspended, .cancel: .canceling, .complete: .completed],
        .canceling: [.complete: .completed],
        .completed: [:],
    ]

    /// The current state; a new task is suspended.
    public private(set) var state: State

    /// A machine in `state` (`.suspended` for a new task).
    public init(state: State = .suspended) {
        self.state = state
    }

    /// Applies `input`.
    /// - Returns: The transition when the table has one, nil (and no change) otherwise.
    public mutating func apply(_ input: Input) -> Transition? {
        guard let next = Self.table[state]?[input] else { return nil }
        let transition = Transition(from: state, to: next)
        state = next
        return transition
    }
}
