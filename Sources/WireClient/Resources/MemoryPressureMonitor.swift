import Dispatch
import Synchronization
@_spi(Locking) import Wire

/// Where memory-pressure reports come from: the kernel on Linux (`LinuxMemoryPressureSource`), or a test.
public protocol MemoryPressureSource: Sendable {
    /// Starts reporting: `handler` is called once per pressure event, on any thread but never under a lock of the
    /// caller. Called at most once before each `stop()`.
    func start(_ handler: @escaping @Sendable () -> Void)
    /// Stops reporting; when it returns, `handler` is not running and will not be called again.
    func stop()
}

/// Linux's "memory warning": hears memory pressure from a `MemoryPressureSource` and empties every registered cache.
///
/// The source is started when the first cache registers and stopped when the last one goes, so a process without a
/// purging cache watches nothing. Caches made with `purgesOnMemoryPressure: true` register themselves.
public final class MemoryPressureMonitor: Sendable {
    /// The process-wide monitor over `LinuxMemoryPressureSource()`; the default of every `AutoPurgingCache`.
    public static let shared = MemoryPressureMonitor(source: LinuxMemoryPressureSource())

    private struct State {
        var purgers: [UInt64: @Sendable () -> Void] = [:]
        var nextToken: UInt64 = 0
        var isStarted = false
        /// Bumped on every start and stop, so a source call decided under the lock is skipped once a newer one was.
        var generation: UInt64 = 0
    }

    /// The source pressure reports come from.
    public let source: any MemoryPressureSource
    private let state = Lock(State())
    /// Runs the source's `start`/`stop` in order, outside every lock (a source is code the caller may supply).
    private let sourceQueue = DispatchQueue(label: "WireClient.MemoryPressureMonitor.source")
    /// The last generation applied to the source; touched only on `sourceQueue`.
    private let appliedGeneration = Lock(UInt64(0))
    private let pressureCount = Atomic<Int>(0)

    /// Creates a monitor over `source`.
    public init(source: any MemoryPressureSource) {
        self.source = source
    }

    /// How many pressure events were heard so far (each emptied the registered caches).
    package var pressureEvents: Int { pressureCount.load(ordering: .relaxed) }

    /// Whether the source is running (some cache is registered).
    package var isMonitoring: Bool { state.withLock { $0.isStarted } }

    /// Registers `purge`, called on every pressure event until `unregister` with the returned token. `purge` must not
    /// keep its cache alive (capture its storage or capture it weakly). Starts the source for the first registration.
    public func register(_ purge: @escaping @Sendable () -> Void) -> UInt64 {
        let (token, start) = state.withLock { state -> (UInt64, UInt64?) in
            state.nextToken += 1
            state.purgers[state.nextToken] = purge
            guard !state.isStarted else { return (state.nextToken, nil) }
            state.isStarted = true
            state.generation += 1
            return (state.nextToken, state.generation)
        }
        if let start { callSource(generation: start, starting: true) }
        return token
    }

    /// Forgets the purge registered under `token`; stops the source when none is left.
    public func unregister(_ token: UInt64) {
        let stop = state.withLock { state -> UInt64? in
            guard state.purgers.removeValue(forKey: token) != nil, state.purgers.isEmpty, state.isStarted else { return nil }
            state.isStarted = false
            state.generation += 1
            return state.generation
        }
        if let stop { callSource(generation: stop, starting: false) }
    }

    /// Empties every registered cache now, as a pressure event does.
    public func purgeAll() {
        pressureCount.add(1, ordering: .relaxed)
        let purgers = state.withLock { Array($0.purgers.values) }
        for purge in purgers { purge() }
    }

    /// Starts or stops the source on `sourceQueue`, outside the state lock, in decision order: a call overtaken by a
    /// newer decision is skipped, so the source ends in the state last decided.
    private func callSource(generation: UInt64, starting: Bool) {
        sourceQueue.sync {
            let isCurrent = appliedGeneration.withLock { applied -> Bool in
                guard generation > applied else { return false }
                applied = generation
                return true
            }
            guard isCurrent else { return }
            if starting {
                source.start { [weak self] in self?.purgeAll() }
            } else {
                source.stop()
            }
        }
    }
}
