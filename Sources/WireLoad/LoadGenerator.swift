import Synchronization
import Wire

/// How far a run has got, for a progress line.
package struct LoadProgress: Sendable {
    /// Time since the run started (warm-up included).
    package var elapsed: Duration
    /// Responses received so far (warm-up included).
    package var responses: Int
}

/// The outcome of a load run.
package struct LoadResult<Summary: Sendable>: Sendable {
    /// Counters of every loop, merged, including errors met while connecting.
    package var statistics: LoadStatistics
    /// Each loop's latency summary, to be merged by the caller.
    package var latencies: [Summary]
    /// The measured time: the run's length after the warm-up, or until the last loop finished.
    package var duration: Duration
    /// The whole process's CPU time over the measured time (an embedded server included).
    package var processCPU: CPUTime
    /// The CPU time of the load generator's own loop threads over the measured time.
    package var loopCPU: CPUTime
    /// Connections that opened before the run began.
    package var connectionsOpened: Int
    /// When the measured time began, on the monotonic clock.
    package var measuredStart: UInt64
}

/// One interval of a run's measured time, reported while the run goes on (and once at its end).
package struct LoadInterval<Summary: Sendable>: Sendable {
    /// When the interval began and ended, on the monotonic clock.
    package var start: UInt64
    package var end: UInt64
    /// What the counters gained in the interval (errors met while connecting fall in the first).
    package var statistics: LoadStatistics
    /// Each loop's latencies recorded in the interval.
    package var latencies: [Summary]
}

/// How often to report intervals, and to whom.
package struct LoadIntervalReporting<Summary: Sendable> {
    /// The length of an interval.
    package var every: Duration
    /// Called on the thread running the load, at the end of each interval; the last interval ends
    /// with the run and may be shorter.
    package var report: (LoadInterval<Summary>) -> Void

    package init(every: Duration, report: @escaping (LoadInterval<Summary>) -> Void) {
        self.every = every
        self.report = report
    }
}

/// Drives a load run on event loops of its own: HTTP/1.1 requests over keep-alive connections,
/// as fast as the server answers (closed loop) or at a constant rate, with no Swift task and
/// no allocation per request.
///
/// ```swift
/// let result = try LoadGenerator.run(plan, recorder: MyHistogram.self)
/// ```
package enum LoadGenerator {
    /// Runs `plan` and blocks the calling thread until it ends; never call it on an event loop.
    ///
    /// - Parameters:
    ///   - plan: What to run.
    ///   - loops: The loops to run on, `plan.loops` of them, which the caller shuts down after the run (the loops
    ///     its `openStream` opens connections on); nil: loops of the run's own.
    ///   - recorder: The latency recorder type; one is made on each loop.
    ///   - progress: Called on the calling thread about once a second while the run goes on.
    ///   - intervals: Latencies and counters per interval of the measured time, when given.
    /// - Throws: `LoadStartError` when no connection could be opened, the loops could not start, or
    ///   the plan's start time passed before the connections were open.
    package static func run<Recorder: LatencyRecorder>(
        _ plan: LoadPlan,
        on loops: EventLoopGroup? = nil,
        recorder: Recorder.Type,
        progress: ((LoadProgress) -> Void)? = nil,
        intervals: LoadIntervalReporting<Recorder.Summary>? = nil
    ) throws(LoadStartError) -> LoadResult<Recorder.Summary> {
        precondition(plan.segmentConnections >= plan.loops && plan.loops >= 1 && plan.pipeline >= 1)
        precondition(loops.map { $0.loops.count == plan.loops } ?? true, "the group must have the plan's loops")
        let group: EventLoopGroup
        if let loops {
            group = loops
        } else {
            do {
                group = try EventLoopGroup(loopCount: plan.loops, namePrefix: "wire-bench")
            } catch {
                throw LoadStartError(message: "could not start \(plan.loops) event loops: \(error)")
            }
        }
        defer { if loops == nil { group.shutdown() } }

        let workers = makeWorkers(plan, on: group.loops, recorder: recorder)
        let ready = Semaphore()
        for worker in workers {
            worker.loop.execute { worker.value.connectAll { ready.signal() } }
        }
        for _ in workers { ready.wait() }
        let opened = workers.map { worker in worker.loop.runBlocking { worker.value.openedAtStart } }.reduce(0, +)
        guard opened > 0 else {
            let setup = workers.map { worker in
                worker.loop.runBlocking { () -> (LoadStatistics, (any Error)?) in
                    worker.value.abandon()
                    return (worker.value.setupStatistics, worker.value.firstConnectError)
                }
            }
            let reason = setup.lazy.compactMap { $0.0.reasons[.connect]?.keys.first }.first ?? "no connection opened"
            throw LoadStartError(
                message: "could not connect to \(plan.host):\(plan.port): \(reason)", cause: setup.lazy.compactMap(\.1).first)
        }

        var now = Posix.monotonicNanoseconds()
        if let startAt = plan.startAt {
            guard now <= startAt else {
                for worker in workers { worker.loop.runBlocking { worker.value.abandon() } }
                let late = Double((now - startAt) / 1_000) / 1_000
                throw LoadStartError(message: "the start time had passed \(late) ms before the connections were open")
            }
            // Every process of a segmented run anchors its schedule at this instant, however late
            // this thread wakes: the requests then due are late, and their latencies say so.
            let clock = Semaphore()
            while now < startAt {
                _ = clock.wait(nanoseconds: startAt - now)
                now = Posix.monotonicNanoseconds()
            }
        }
        let start = plan.startAt ?? now
        let measureFrom = start + UInt64(max(0, plan.warmup.nanoseconds))
        var end: UInt64?
        if case .after(let duration) = plan.stop { end = measureFrom + UInt64(max(0, duration.nanoseconds)) }
        let finished = Semaphore()
        let cpuBefore = CPUTime.process()
        for worker in workers {
            worker.loop.execute { [end] in
                worker.value.begin(start: start, measureFrom: measureFrom, end: end) { finished.signal() }
            }
        }
        var cpuAtMeasureStart = measureFrom > start ? nil : cpuBefore
        var remaining = workers.count
        let counters = workers.map { worker in worker.loop.runBlocking { worker.value.counters } }
        var nextTick = start + 1_000_000_000
        let intervalLength = intervals.map { UInt64(max(1_000_000, $0.every.nanoseconds)) }
        var nextInterval = intervalLength.map { measureFrom + $0 } ?? .max
        var intervalStart = measureFrom
        var reported = workers.map { _ in LoadStatistics() }
        // Each loop's latencies and the counters' growth since the last interval, up to `instant`.
        func reportInterval(endingAt instant: UInt64, last: Bool = false) {
            guard let intervals, instant > intervalStart || last else { return }
            var statistics = LoadStatistics()
            var latencies: [Recorder.Summary] = []
            for (position, worker) in workers.enumerated() {
                let share = worker.loop.runBlocking { worker.value.takeInterval() }
                statistics.merge(share.statistics.subtracting(reported[position]))
                reported[position] = share.statistics
                latencies.append(share.latencies)
            }
            intervals.report(LoadInterval(start: intervalStart, end: instant, statistics: statistics, latencies: latencies))
            intervalStart = instant
        }
        while remaining > 0 {
            let now = Posix.monotonicNanoseconds()
            // Wake for the next progress tick or interval, or the warm-up's end to read the CPU clock there.
            var wake = min(nextTick, nextInterval)
            if cpuAtMeasureStart == nil { wake = min(wake, measureFrom) }
            if finished.wait(nanoseconds: wake > now ? wake - now : 0) {
                remaining -= 1
                continue
            }
            let after = Posix.monotonicNanoseconds()
            if cpuAtMeasureStart == nil && after >= measureFrom { cpuAtMeasureStart = CPUTime.process() }
            if after >= nextTick {
                nextTick += 1_000_000_000
                let responses = counters.reduce(0) { $0 + $1.responses.load(ordering: .relaxed) }
                progress?(LoadProgress(elapsed: .nanoseconds(Int64(after - start)), responses: responses))
            }
            if let intervalLength, after >= nextInterval {
                // A timed run's last interval ends with the run, not after it.
                reportInterval(endingAt: min(after, end ?? .max))
                while nextInterval <= after { nextInterval += intervalLength }
            }
        }
        let processCPU = CPUTime.process().since(cpuAtMeasureStart ?? cpuBefore)

        var statistics = LoadStatistics()
        var latencies: [Recorder.Summary] = []
        var loopCPU = CPUTime.zero
        var lastFinish = measureFrom
        var firstMeasure = UInt64.max
        for worker in workers {
            let share = worker.loop.runBlocking { () -> (LoadStatistics, Recorder.Summary, CPUTime, UInt64, UInt64) in
                let value = worker.value
                var statistics = value.setupStatistics
                statistics.merge(value.statistics)
                return (statistics, value.recorder.summary(), value.cpuUsed, value.measuredFrom, value.finishedAt)
            }
            statistics.merge(share.0)
            latencies.append(share.1)
            loopCPU = loopCPU + share.2
            firstMeasure = min(firstMeasure, share.3)
            lastFinish = max(lastFinish, share.4)
        }
        let measuredEnd = end ?? lastFinish
        let measuredStart = end == nil ? start : min(firstMeasure, measureFrom)
        // What was recorded after the last tick's reading (a timed run's last tick may come after its end).
        reportInterval(endingAt: max(measuredEnd, intervalStart), last: true)
        return LoadResult(
            statistics: statistics, latencies: latencies,
            duration: .nanoseconds(Int64(measuredEnd > measuredStart ? measuredEnd - measuredStart : 0)),
            processCPU: processCPU, loopCPU: loopCPU, connectionsOpened: opened, measuredStart: measuredStart)
    }

    /// One worker per loop; connection `i` (of this segment's) goes to loop `i % loops`. A request
    /// count is this segment's share, split in proportion to the connections in a closed loop; at a
    /// constant rate each loop may send exactly the slots below the count that its connections own.
    private static func makeWorkers<Recorder: LatencyRecorder>(
        _ plan: LoadPlan,
        on loops: [EventLoop],
        recorder: Recorder.Type
    ) -> [LoopBound<LoadWorker<Recorder>>] {
        var budgets: [Int?] = Array(repeating: nil, count: loops.count)
        var indices: [[Int]] = Array(repeating: [], count: loops.count)
        let connections = plan.segmentConnections
        for connection in 0..<connections { indices[connection % loops.count].append(connection) }
        if case .requests(let count) = plan.stop, plan.rate != nil {
            let stride = plan.slotStride
            for loop in loops.indices {
                budgets[loop] = indices[loop].reduce(0) { sum, connection in
                    let first = plan.firstSlot(ofConnection: connection)
                    return sum + (first < count ? (count - 1 - first) / stride + 1 : 0)
                }
            }
        } else if case .requests(let count) = plan.stop {
            let total = plan.segment.share(of: count)
            var handedOut = 0
            for loop in loops.indices {
                let share = total * indices[loop].count / connections
                budgets[loop] = share
                handedOut += share
            }
            for loop in 0..<(total - handedOut) { budgets[loop % loops.count]! += 1 }
        }
        return loops.indices.map { position in
            let loop = loops[position]
            let connectionIndices = indices[position]
            let budget = budgets[position]
            return loop.runBlocking {
                LoopBound(
                    LoadWorker<Recorder>(loop: loop, plan: plan, connectionIndices: connectionIndices, budget: budget), loop: loop
                )
            }
        }
    }
}
