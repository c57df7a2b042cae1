import Synchronization
import Wire

/// Counters a worker publishes for the thread watching the run (the progress line). Written with
/// relaxed stores by the loop, read now and then by the watcher: no lock on the request path.
final class LoadCounters: Sendable {
    /// Responses received since the run started, warm-up included.
    let responses = Atomic<Int>(0)
}

/// One loop's share of a load run: its connections, its request budget, its counters and its
/// latency recorder. Loop-confined: every member is used on `loop` only.
final class LoadWorker<Recorder: LatencyRecorder> {
    private enum Phase { case created, connecting, running, finished }

    let loop: EventLoop
    let plan: LoadPlan
    private(set) var connections: [LoadConnection<Recorder>] = []
    /// Errors while measuring (responses and bytes are counted apart, below).
    private var errorStatistics = LoadStatistics()
    // Plain integers: a stored struct changed by a method call would cost a dynamic exclusivity
    // check per request, where these are proven free of overlapping access.
    // Unchecked for the reason given in LoadConnection: loop-confined, never accessed while
    // another access to the same member is open, and checked dynamically per request otherwise.
    @exclusivity(unchecked) private var measuredResponses = 0
    @exclusivity(unchecked) private var measuredBytes = 0
    @exclusivity(unchecked) private(set) var recorder = Recorder()
    let counters = LoadCounters()
    /// Requests this loop may still send; nil when the run is timed.
    @exclusivity(unchecked) private var budget: Int?
    /// Requests written and not yet answered on all of this loop's connections.
    @exclusivity(unchecked) var inFlight = 0
    /// The requests in the order they are sent; a batch is a slice of it.
    let sequence: LoadRequestSequence
    /// The position in `sequence` of the next batch (closed loop; at a constant rate each
    /// connection's slot decides).
    @exclusivity(unchecked) private var nextPosition = 0
    @exclusivity(unchecked) private var phase = Phase.created
    @exclusivity(unchecked) private var isRecording = false
    @exclusivity(unchecked) private var responsesSinceStart = 0
    /// Connections whose first connect has not finished yet.
    private var unsettled = 0
    private(set) var openedAtStart = 0
    private var onReady: (() -> Void)?
    private var onFinished: (() -> Void)?
    /// The run's start on the monotonic clock.
    private(set) var startTime: UInt64 = 0
    /// The gap between two slots of the whole run's schedule (constant rate), nil in a closed loop.
    /// Slot `k` is due `k` gaps after the start.
    let nanosecondsPerSlot: Double?
    /// The slots between one request of a connection and its next: every connection of every
    /// segment takes its turn in between.
    let slotStride: Int
    /// Slots from this one on are not sent (a request count at a constant rate: slots 0 to n - 1).
    let slotLimit: Int
    private var cpuAtStart = CPUTime.zero
    /// This loop thread's CPU time over the measured part of the run.
    private(set) var cpuUsed = CPUTime.zero
    /// When measuring started and when this loop finished, on the monotonic clock.
    private(set) var measuredFrom: UInt64 = 0
    private(set) var finishedAt: UInt64 = 0
    private var timers: [TimerQueue<() -> Void>.ID] = []
    private var sweepTimer: TimerQueue<() -> Void>.ID?
    @exclusivity(unchecked) private var givenUp = 0
    /// Errors met while connecting, before the run: kept apart so the warm-up's reset keeps them.
    private(set) var setupStatistics = LoadStatistics()
    /// The first error the plan's `openStream` threw, for the caller's exit status when no connection opens.
    private(set) var firstConnectError: (any Error)?
    private lazy var sweepAction: () -> Void = { [unowned self] in sweep() }
    private let sweepInterval: UInt64
    private let timeoutNanoseconds: UInt64

    /// Creates the worker for `connectionIndices` (numbers among this segment's connections); on
    /// `loop` only.
    init(loop: EventLoop, plan: LoadPlan, connectionIndices: [Int], budget: Int?) {
        loop.preconditionInEventLoop()
        self.loop = loop
        self.plan = plan
        self.budget = budget
        sequence = LoadRequestSequence(plan: plan)
        nanosecondsPerSlot = plan.rate.map { 1e9 / $0 }
        slotStride = plan.slotStride
        if case .requests(let count) = plan.stop, plan.rate != nil { slotLimit = count } else { slotLimit = .max }
        timeoutNanoseconds = UInt64(max(0, plan.timeout.nanoseconds))
        sweepInterval = max(1_000_000, min(timeoutNanoseconds / 4, 250_000_000))
        connections = connectionIndices.map { LoadConnection(worker: self, index: $0) }
    }

    // MARK: Phases

    /// Opens every connection; `ready` runs once each has connected or failed once.
    func connectAll(ready: @escaping () -> Void) {
        phase = .connecting
        onReady = ready
        unsettled = connections.count
        if connections.isEmpty { settle() }
        for connection in connections { connection.connect() }
    }

    /// A connection's connect attempt ended; the first for each counts towards readiness.
    func connectionSettled(opened: Bool) {
        guard phase == .connecting, unsettled > 0 else { return }
        if opened { openedAtStart += 1 }
        unsettled -= 1
        if unsettled == 0 { settle() }
    }

    private func settle() {
        let ready = onReady
        onReady = nil
        ready?()
    }

    /// Starts sending. Measuring starts at `measureFrom` (after the warm-up); a timed run ends
    /// at `end`. `finished` runs once this loop is done.
    func begin(start: UInt64, measureFrom: UInt64, end: UInt64?, finished: @escaping () -> Void) {
        phase = .running
        onFinished = finished
        startTime = start
        if measureFrom > start {
            timers.append(
                loop.scheduleOnLoop(at: Deadline(uptimeNanoseconds: measureFrom)) { [unowned self] in
                    startMeasuring(at: measureFrom)
                })
        } else {
            startMeasuring(at: start)
        }
        if let end {
            timers.append(loop.scheduleOnLoop(at: Deadline(uptimeNanoseconds: end)) { [unowned self] in finish() })
        }
        if timeoutNanoseconds > 0 {
            sweepTimer = loop.scheduleOnLoop(at: .init(uptimeNanoseconds: start + sweepInterval), sweepAction)
        }
        for connection in connections { connection.start() }
        checkFinished()
    }

    /// This loop's counters over the measured time.
    var statistics: LoadStatistics {
        var statistics = errorStatistics
        statistics.responses = measuredResponses
        statistics.bytesRead = measuredBytes
        return statistics
    }

    private func startMeasuring(at instant: UInt64) {
        errorStatistics = LoadStatistics()
        measuredResponses = 0
        measuredBytes = 0
        recorder.reset()
        isRecording = true
        measuredFrom = instant
        cpuAtStart = CPUTime.currentThread()
    }

    var isRunning: Bool { phase == .running }

    /// Whether connections should keep (re)connecting: the run goes on and requests remain.
    var wantsMoreRequests: Bool { phase == .running && budget.map { $0 > 0 } ?? true }

    /// Request-count runs give up on a connection that keeps failing to connect; timed runs retry.
    var givesUpAfterConnectFailures: Bool { budget != nil }

    /// Takes up to `count` requests from the budget; returns how many may be sent.
    func claim(_ count: Int) -> Int {
        guard let remaining = budget else { return count }
        let granted = min(remaining, count)
        budget = remaining - granted
        return granted
    }

    /// Gives back `count` requests the server closed the connection on without processing.
    func requeue(_ count: Int) {
        guard count > 0 else { return }
        if let remaining = budget { budget = remaining + count }
        if isRecording { errorStatistics.resentRequests += count }
    }

    /// The position in the request sequence of the next `count` requests of a closed loop.
    func takePositions(_ count: Int) -> Int {
        let position = nextPosition
        if sequence.length > 1 { nextPosition = (position + count) % sequence.length }
        return position
    }

    /// The first slot of connection `index` (among this segment's) in the whole run's schedule.
    func firstSlot(ofConnection index: Int) -> Int { plan.firstSlot(ofConnection: index) }

    /// When slot `slot` is due on the monotonic clock: computed from the slot's number, never by
    /// adding gaps up, so every process of a segmented run finds the same instant for it.
    func dueTime(ofSlot slot: Int) -> UInt64 {
        startTime + UInt64((Double(slot) * (nanosecondsPerSlot ?? 0)).rounded())
    }

    /// The slots a connection will not send, from `slot` on (it gave up connecting): a request
    /// count at a constant rate no longer waits for them.
    func abandonSlots(from slot: Int) {
        guard slotLimit != .max, slot < slotLimit, let remaining = budget else { return }
        let unsent = (slotLimit - 1 - slot) / slotStride + 1
        budget = max(0, remaining - unsent)
    }

    // MARK: Outcomes

    func responseReceived(status: Int, latency: UInt64) {
        responsesSinceStart += 1
        counters.responses.store(responsesSinceStart, ordering: .relaxed)
        if isRecording {
            measuredResponses += 1
            recorder.record(nanoseconds: latency)
            if status < 200 || status >= 400 { errorStatistics.noteUnexpectedStatus(status) }
        }
        checkFinished()
    }

    func noteBytesRead(_ count: Int) {
        if isRecording { measuredBytes += count }
    }

    func noteError(_ kind: LoadErrorKind, _ reason: String, count: Int = 1) {
        if isRecording {
            errorStatistics.note(kind, reason, count: count)
        } else if phase == .connecting {
            // They explain a run that could not start, or started with fewer connections.
            setupStatistics.note(kind, reason, count: count)
        }
    }

    /// Latencies recorded since the last call, and every counter so far (the errors met while
    /// connecting included), for an interval report.
    func takeInterval() -> (statistics: LoadStatistics, latencies: Recorder.Summary) {
        var statistics = setupStatistics
        statistics.merge(self.statistics)
        return (statistics, recorder.takeInterval())
    }

    func noteConnectError(_ error: any Error) {
        if firstConnectError == nil { firstConnectError = error }
    }

    func connectionGaveUp() {
        givenUp += 1
        checkFinished()
    }

    /// Ends the loop's share once nothing more will happen: the budget is spent and nothing is
    /// in flight, or every connection has given up.
    func checkFinished() {
        guard phase == .running else { return }
        if (budget == 0 && inFlight == 0) || givenUp == connections.count { finish() }
    }

    private func sweep() {
        guard phase == .running else { return }
        let now = Posix.monotonicNanoseconds()
        for connection in connections { connection.checkTimeout(now: now, limit: timeoutNanoseconds) }
        guard phase == .running else { return }
        sweepTimer = loop.scheduleOnLoop(at: .init(uptimeNanoseconds: now + sweepInterval), sweepAction)
    }

    /// Stops: closes every connection (requests in flight are dropped) and reports.
    func finish() {
        guard phase == .running else { return }
        phase = .finished
        finishedAt = Posix.monotonicNanoseconds()
        if !isRecording { startMeasuring(at: finishedAt) }
        cpuUsed = CPUTime.currentThread().since(cpuAtStart)
        for timer in timers { loop.cancelOnLoop(timer) }
        timers.removeAll()
        if let sweepTimer { loop.cancelOnLoop(sweepTimer) }
        sweepTimer = nil
        for connection in connections { connection.stop() }
        // The connections hold the worker strongly; dropping them ends the cycle.
        connections.removeAll()
        let finished = onFinished
        onFinished = nil
        finished?()
    }

    /// Closes everything without reporting (the run was abandoned before it began).
    func abandon() {
        phase = .finished
        for connection in connections { connection.stop() }
        connections.removeAll()
    }
}
