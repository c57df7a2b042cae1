/// Whether network activity should be shown (AFNetworkActivityIndicatorManager's logic), as a value: events in,
/// actions out, no clock and no timers of its own.
///
/// Four states keep an indicator from flickering: a burst of activity shorter than `activationDelay` never shows it,
/// and it lingers for `completionDelay` after the last task, so back-to-back requests show one continuous spin.
///
/// Differences from AFNetworking, both deliberate: the activity is a set of task identifiers rather than a counter, so
/// a task that is suspended and then completes is removed once (AF decremented twice and could hide the indicator
/// while another task ran); and enabling re-evaluates at once instead of waiting for the next change.
public struct NetworkActivityStateMachine: Sendable, Hashable {
    /// Where the machine is.
    public enum State: Sendable, Hashable {
        /// Nothing shown, no timer.
        case notActive
        /// Activity began; the activation timer runs.
        case delayingStart
        /// Shown.
        case active
        /// Activity ended while shown; the completion timer runs and the indicator still shows.
        case delayingEnd
    }

    /// The machine's two timers.
    public enum TimerKind: Sendable, Hashable {
        /// Runs `activationDelay` from the first activity.
        case activation
        /// Runs `completionDelay` from the last activity's end.
        case completion
    }

    /// What the owner of the machine must do, in order.
    public enum Action: Sendable, Hashable {
        /// Show the indicator (visibility changed to true).
        case show
        /// Hide the indicator (visibility changed to false).
        case hide
        /// Start (or restart) a timer that calls `timerFired(_:)` after the duration; zero means at once.
        case startTimer(TimerKind, Duration)
        /// Cancel a timer; a firing that was already under way is ignored by the machine.
        case cancelTimer(TimerKind)
    }

    /// One task of one manager.
    public struct TaskID: Sendable, Hashable, ExpressibleByIntegerLiteral {
        /// Which manager the task belongs to (any number that tells managers apart).
        public var manager: UInt
        /// The task's identifier within its manager.
        public var task: Int

        /// A task of a manager.
        public init(manager: UInt = 0, task: Int) {
            self.manager = manager
            self.task = task
        }

        /// A task of manager 0.
        public init(integerLiteral task: Int) {
            self.init(task: task)
        }
    }

    /// The current state.
    public private(set) var state = State.notActive
    /// Whether the indicator is shown.
    public private(set) var isVisible = false
    /// Whether the machine reacts at all; false by default, as AF.
    public private(set) var isEnabled = false
    /// The tasks under way.
    public private(set) var activeTasks: Set<TaskID> = []
    /// How long activity must last before it shows.
    public var activationDelay: Duration
    /// How long the indicator lingers after the last task.
    public var completionDelay: Duration

    /// The number of tasks under way.
    public var activityCount: Int { activeTasks.count }

    /// A machine, not active and not enabled.
    /// - Parameters:
    ///   - activationDelay: 1 s by default (AF's).
    ///   - completionDelay: 0.17 s by default (AF's).
    public init(activationDelay: Duration = .seconds(1), completionDelay: Duration = .milliseconds(170)) {
        self.activationDelay = activationDelay
        self.completionDelay = completionDelay
    }

    /// A task resumed.
    public mutating func taskStarted(id: TaskID) -> [Action] {
        activeTasks.insert(id)
        return evaluate()
    }

    /// A task suspended or completed; a task not under way changes nothing.
    public mutating func taskStopped(id: TaskID) -> [Action] {
        guard activeTasks.remove(id) != nil else { return [] }
        return evaluate()
    }

    /// Enables or disables the machine. Disabling goes to `.notActive` (timers cancelled, hidden if shown); enabling
    /// evaluates the current activity at once.
    public mutating func setEnabled(_ enabled: Bool) -> [Action] {
        isEnabled = enabled
        return enabled ? evaluate() : enter(.notActive)
    }

    /// A timer the machine started has fired. A firing the machine no longer waits for (the timer was cancelled or
    /// the state moved on) changes nothing.
    public mutating func timerFired(_ kind: TimerKind) -> [Action] {
        switch (kind, state) {
        case (.activation, .delayingStart): enter(activeTasks.isEmpty ? .notActive : .active)
        case (.completion, .delayingEnd): enter(.notActive)
        default: []
        }
    }

    /// AF's transition function for a change of activity.
    private mutating func evaluate() -> [Action] {
        guard isEnabled else { return [] }
        let busy = !activeTasks.isEmpty
        switch state {
        case .notActive: return busy ? enter(.delayingStart) : []
        case .delayingStart: return []  // the activation timer decides
        case .active: return busy ? [] : enter(.delayingEnd)
        case .delayingEnd: return busy ? enter(.active) : []
        }
    }

    /// Enters `next` and returns what entering it takes.
    private mutating func enter(_ next: State) -> [Action] {
        state = next
        switch next {
        case .notActive:
            var actions: [Action] = [.cancelTimer(.activation), .cancelTimer(.completion)]
            if isVisible { actions.append(.hide) }
            isVisible = false
            return actions
        case .delayingStart:
            return [.startTimer(.activation, activationDelay)]
        case .active:
            // From delayingEnd: still shown, so no hide and show pair.
            var actions: [Action] = [.cancelTimer(.completion)]
            if !isVisible { actions.append(.show) }
            isVisible = true
            return actions
        case .delayingEnd:
            return [.startTimer(.completion, completionDelay)]
        }
    }
}
