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

    /// Every transition there is; anything absent is a no-op. (`apply` reads the same transitions from a `switch`:
    /// no hashing on a task's path.)
    public static let table: [State: [Input: State]] = Dictionary(uniqueKeysWithValues: State.allCases.map { state in
        (state, Dictionary(uniqueKeysWithValues: Input.allCases.compactMap { input in next(from: state, on: input).map { (input, $0) } }))
    })

    /// The state `input` leads to from `state`; nil for none.
    private static func next(from state: State, on input: Input) -> State? {
        switch (state, input) {
        case (.suspended, .resume): .running
        case (.suspended, .cancel), (.running, .cancel): .canceling
        case (.running, .suspend): .suspended
        case (.running, .complete), (.canceling, .complete): .completed
        default: nil
        }
    }

    /// The current state; a new task is suspended.
    public private(set) var state: State

    /// A machine in `state` (`.suspended` for a new task).
    public init(state: State = .suspended) {
        self.state = state
    }

    /// Applies `input`.
    /// - Returns: The transition when the table has one, nil (and no change) otherwise.
    public mutating func apply(_ input: Input) -> Transition? {
        guard let next = Self.next(from: state, on: input) else { return nil }
        let transition = Transition(from: state, to: next)
        state = next
        return transition
    }
}
