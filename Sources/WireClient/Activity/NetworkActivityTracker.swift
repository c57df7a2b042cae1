import Dispatch
import Synchronization
@_spi(Locking) import Wire

/// Tells whether network activity should be visible (AFNetworkActivityIndicatorManager): a
/// `NetworkActivityStateMachine` with real timers, fed by the task events of the managers it monitors.
///
/// Add it to one or more managers (`track(_:)`, or `eventMonitors`): a resumed task counts as activity until it is
/// suspended or completes. With the defaults, activity shorter than a second never shows, and the indicator stays
/// 0.17 s after the last task so that back-to-back requests show as one. Disabled until `isEnabled` is set.
///
/// ```swift
/// let tracker = NetworkActivityTracker()
/// tracker.onChange = { visible in statusLine.showSpinner(visible) }
/// tracker.isEnabled = true
/// tracker.track(manager)
/// ```
///
/// Changes of visibility reach `onChange` and every `visibility` stream in order, on a private serial queue: never
/// on an event loop or under a lock of the tracker.
public final class NetworkActivityTracker: SessionEventMonitor, Sendable {
    private typealias Machine = NetworkActivityStateMachine

    private struct State {
        var machine: Machine
        /// The running timers, each with its number so that a stale firing is told apart.
        var timers: [Machine.TimerKind: (number: Int, task: Task<Void, Never>)] = [:]
        var timersStarted = 0
        var onChange: (@Sendable (Bool) -> Void)?
        var streams: [Int: AsyncStream<Bool>.Continuation] = [:]
        var nextStream = 0
    }

    private let guarded: Lock<State>
    private let clock: any Clock<Duration>
    /// Where visibility changes are delivered, in the order the machine made them.
    private let delivery = DispatchQueue(label: "WireClient.NetworkActivityTracker")

    /// A tracker, disabled.
    /// - Parameters:
    ///   - activationDelay: How long activity must last before it shows; 1 s by default. Zero shows at once.
    ///   - completionDelay: How long it stays shown after the last task; 0.17 s by default.
    ///   - clock: The clock the delays are measured on (a manual clock in tests).
    public init(
        activationDelay: Duration = .seconds(1), completionDelay: Duration = .milliseconds(170),
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        guarded = Lock(State(machine: Machine(activationDelay: activationDelay, completionDelay: completionDelay)))
        self.clock = clock
    }

    /// Whether the tracker reacts to activity; false by default. Disabling hides at once; enabling shows the current
    /// activity after the activation delay.
    public var isEnabled: Bool {
        get { guarded.withLock { $0.machine.isEnabled } }
        set { change { $0.setEnabled(newValue) } }
    }

    /// AFNetworking's name for `isEnabled`.
    public var enabled: Bool {
        get { isEnabled }
        set { isEnabled = newValue }
    }

    /// Whether activity is visible now.
    public var isVisible: Bool { guarded.withLock { $0.machine.isVisible } }

    /// The number of tasks under way (resumed, not suspended or completed), across the monitored managers.
    public var activityCount: Int { guarded.withLock { $0.machine.activityCount } }

    /// The machine's state.
    public var state: NetworkActivityStateMachine.State { guarded.withLock { $0.machine.state } }

    /// Called with the new visibility on every change, on the tracker's serial queue.
    public var onChange: (@Sendable (Bool) -> Void)? {
        get { guarded.withLock { $0.onChange } }
        set { guarded.withLock { $0.onChange = newValue } }
    }

    /// A new stream of visibility changes from now on (true: shown, false: hidden); it ends when the tracker is freed
    /// or the consumer stops iterating.
    public var visibility: AsyncStream<Bool> {
        let (stream, continuation) = AsyncStream.makeStream(of: Bool.self)
        let key = guarded.withLock { state -> Int in
            state.nextStream += 1
            state.streams[state.nextStream] = continuation
            return state.nextStream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.guarded.withLock { $0.streams.removeValue(forKey: key) }
        }
        return stream
    }

    /// Adds the tracker to `manager`'s event monitors.
    public func track(_ manager: SessionManager) {
        manager.eventMonitors.append(self)
    }

    /// Counts `manager`'s tasks: a resumed task is activity until it is suspended or completes.
    public func manager(_ manager: SessionManager, didEmit event: TaskEvent) {
        let managerID = UInt(bitPattern: ObjectIdentifier(manager))
        switch event {
        case .didResume(let task):
            change { $0.taskStarted(id: Machine.TaskID(manager: managerID, task: task.taskIdentifier)) }
        case .didSuspend(let task), .didComplete(let task, _):
            change { $0.taskStopped(id: Machine.TaskID(manager: managerID, task: task.taskIdentifier)) }
        case .sessionDidInvalidate, .downloadDidMoveFile, .downloadDidFailToMoveFile:
            break
        }
    }

    deinit {
        let (timers, streams) = guarded.withLock { ($0.timers.values.map(\.task), Array($0.streams.values)) }
        for timer in timers { timer.cancel() }
        for stream in streams { stream.finish() }
    }

    // MARK: Acting on the machine

    /// Feeds the machine one event and carries out what it asks, under the lock (no user code runs there: visibility
    /// changes are queued for delivery, timers are started and their cancellation collected).
    private func change(_ event: (inout Machine) -> [Machine.Action]) {
        let cancelled = guarded.withLock { state -> [Task<Void, Never>] in
            var cancelled: [Task<Void, Never>] = []
            perform(event(&state.machine), on: &state, cancelling: &cancelled)
            return cancelled
        }
        for task in cancelled { task.cancel() }
    }

    private func perform(_ actions: [Machine.Action], on state: inout State, cancelling cancelled: inout [Task<Void, Never>]) {
        for action in actions {
            switch action {
            case .show, .hide:
                let visible = action == .show
                let handler = state.onChange
                let streams = Array(state.streams.values)
                delivery.async {
                    handler?(visible)
                    for stream in streams { stream.yield(visible) }
                }
            case .cancelTimer(let kind):
                if let timer = state.timers.removeValue(forKey: kind) { cancelled.append(timer.task) }
            case .startTimer(let kind, let delay):
                if let timer = state.timers.removeValue(forKey: kind) { cancelled.append(timer.task) }
                if delay <= .zero {
                    // A zero delay fires on this turn: the machine goes on at once.
                    perform(state.machine.timerFired(kind), on: &state, cancelling: &cancelled)
                    continue
                }
                state.timersStarted += 1
                let number = state.timersStarted
                let clock = self.clock
                let task = Task { [weak self] in
                    guard (try? await Self.sleep(on: clock, for: delay)) != nil else { return }
                    self?.timerFired(kind, number: number)
                }
                state.timers[kind] = (number, task)
            }
        }
    }

    private func timerFired(_ kind: Machine.TimerKind, number: Int) {
        let cancelled = guarded.withLock { state -> [Task<Void, Never>] in
            // A timer replaced or cancelled after it woke: the machine no longer waits for it.
            guard state.timers[kind]?.number == number else { return [] }
            state.timers[kind] = nil
            var cancelled: [Task<Void, Never>] = []
            perform(state.machine.timerFired(kind), on: &state, cancelling: &cancelled)
            return cancelled
        }
        for task in cancelled { task.cancel() }
    }

    private static func sleep<C: Clock>(on clock: C, for delay: Duration) async throws where C.Duration == Duration {
        try await clock.sleep(for: delay)
    }
}
