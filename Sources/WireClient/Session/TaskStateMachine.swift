/// The life of a `SessionTask` as a value: the state, and a transition table that says which input moves it where.
///
/// ```
/// suspended ──resume──▶ running ──suspend──▶ suspended
/// suspended | running ──cancel──▶ canceling ──complete──▶ completed
/// running ──complete──▶ completed
/// ```
/// Any other input is a no-op: `apply` returns nil and the state is unchanged, so the caller emits no event and
/// reports no error (a second `resume()`, a `suspend()` of a completed task). `completed` is terminal.
package struct TaskStateMachine: Sendable, Hashable {
    /// Where a task is in its life: `SessionTask.State`, public since a task's caller reads it.
    package typealias State = SessionTask.State

    /// What can happen to a task.
    package enum Input: Sendable, Hashable, CaseIterable {
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
    package struct Transition: Sendable, Hashable {
        /// The state before.
        package var from: State
        /// The state after.
        package var to: State

        /// A transition from `from` to `to`.
        package init(from: State, to: State) {
            self.from = from
            self.to = to
        }
    }

    /// Every transition there is; anything absent is a no-op. (`apply` reads the same transitions from a `switch`:
    /// no hashing on a task's path.)
    package static let table: [State: [Input: State]] = Dictionary(
        uniqueKeysWithValues: State.allCases.map { state in
            (
                state,
                Dictionary(
                    uniqueKeysWithValues: Input.allCases.compactMap { input in next(from: state, on: input).map { (input, $0) } })
            )
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
    package private(set) var state: State

    /// A machine in `state` (`.suspended` for a new task).
    package init(state: State = .suspended) {
        self.state = state
    }

    /// Applies `input`.
    /// - Returns: The transition when the table has one, nil (and no change) otherwise.
    package mutating func apply(_ input: Input) -> Transition? {
        guard let next = Self.next(from: state, on: input) else { return nil }
        let transition = Transition(from: state, to: next)
        state = next
        return transition
    }
}
