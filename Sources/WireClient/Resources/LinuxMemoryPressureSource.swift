import Wire

/// Memory pressure as the Linux kernel reports it: the process's cgroup v2 `memory.events` (its `high` or `max`
/// counter went up: the group hit its soft limit and is being reclaimed, or its hard limit) and a PSI trigger on
/// `/proc/pressure/memory` (`some 150000 1000000`: some task stalled on memory for 150 ms within one second).
///
/// Where the kernel refuses the one-second window (without `CAP_SYS_RESOURCE` a window must be a multiple of 2 s),
/// the same share is asked over two seconds (`some 300000 2000000`). Without cgroup v2 or PSI nothing is watched and
/// no thread runs. The files are watched by one thread blocked in `poll(2)` (Wire's `PriorityEventWatcher`).
public final class LinuxMemoryPressureSource: MemoryPressureSource {
    /// The trigger lines written to the PSI file, in order of preference.
    package static let pressureTriggers = ["some 150000 1000000", "some 300000 2000000"]

    private let procRoot: String
    private let cgroupEventsPath: String?
    private struct Running: Sendable {
        var watcher: PriorityEventWatcher?
        var counters: MemoryEventCounters?
    }
    /// In a class of its own so the watcher's thread can reach it without holding the source.
    private let running = Locked(Running())

    /// Creates a source.
    /// - Parameters:
    ///   - procRoot: Where procfs is mounted (`/proc`); a test may point elsewhere.
    ///   - cgroupEventsPath: The `memory.events` file to watch; nil finds the process's own cgroup v2 group through
    ///     `<procRoot>/self/cgroup` and `<procRoot>/self/mountinfo`.
    public init(procRoot: String = "/proc", cgroupEventsPath: String? = nil) {
        self.procRoot = procRoot
        self.cgroupEventsPath = cgroupEventsPath
    }

    /// Whether a file is being watched now (false before `start`, after `stop`, and where neither exists).
    package var isWatching: Bool {
        running.withLock { !($0.watcher?.watchedIndices.isEmpty ?? true) }
    }

    /// Opens the files and starts watching; `handler` runs on the watcher's thread for each pressure event.
    public func start(_ handler: @escaping @Sendable () -> Void) {
        let eventsPath =
            cgroupEventsPath
            ?? Self.memoryEventsPath(
                cgroup: Self.text(atPath: procRoot + "/self/cgroup"), mountInfo: Self.text(atPath: procRoot + "/self/mountinfo"))
        var files = [PriorityEventWatcher.File(path: procRoot + "/pressure/memory", triggers: Self.pressureTriggers)]
        if let eventsPath { files.append(PriorityEventWatcher.File(path: eventsPath)) }
        let baseline = eventsPath.map { MemoryEventCounters(parsing: Self.text(atPath: $0) ?? "") }
        running.withLock { $0.counters = baseline }
        let running = self.running
        let watcher = try? PriorityEventWatcher(files: files, threadName: "wire-mempress") { index, contents in
            guard index == 1 else { return handler() }
            // memory.events changes for other counters too (low, oom); only a rise of high or max is pressure.
            let counters = MemoryEventCounters(parsing: String(decoding: contents, as: UTF8.self))
            let rose = running.withLock { state -> Bool in
                defer { state.counters = counters }
                return state.counters.map { counters.indicatesPressure(since: $0) } ?? true
            }
            if rose { handler() }
        }
        let previous = running.withLock { state -> PriorityEventWatcher? in
            defer { state.watcher = watcher }
            return state.watcher
        }
        previous?.stop()
    }

    /// Stops watching and closes the files.
    public func stop() {
        let watcher = running.withLock { state -> PriorityEventWatcher? in
            defer { state.watcher = nil }
            return state.watcher
        }
        watcher?.stop()
    }

    /// The process's cgroup v2 `memory.events`: the `0::<group>` line of `/proc/self/cgroup` under the `cgroup2`
    /// mount point of `/proc/self/mountinfo`; nil when either is missing (no cgroup v2), or for the root group,
    /// which has no `memory.events`.
    /// - Parameters:
    ///   - cgroup: The text of `/proc/self/cgroup`.
    ///   - mountInfo: The text of `/proc/self/mountinfo`.
    package static func memoryEventsPath(cgroup: String?, mountInfo: String?) -> String? {
        guard let cgroup, let mountInfo else { return nil }
        guard let line = cgroup.split(separator: "\n").first(where: { $0.hasPrefix("0::") }) else { return nil }
        let group = String(line.dropFirst(3))
        guard group != "/", !group.isEmpty else { return nil }
        for entry in mountInfo.split(separator: "\n") {
            // "36 35 0:30 / /sys/fs/cgroup rw,... shared:9 - cgroup2 cgroup2 rw": the type follows the " - ".
            let halves = entry.split(separator: " - ", maxSplits: 1)
            guard halves.count == 2, halves[1].split(separator: " ").first == "cgroup2" else { continue }
            let fields = halves[0].split(separator: " ")
            guard fields.count >= 5 else { continue }
            let mountPoint = String(fields[4])
            return (mountPoint == "/" ? "" : mountPoint) + group + "/memory.events"
        }
        return nil
    }

    private static func text(atPath path: String) -> String? {
        (try? LocalFiles.contents(atPath: path)).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// The counters of a cgroup v2 `memory.events` file (`low`, `high`, `max`, `oom`, `oom_kill`, one `name value` a
/// line).
package struct MemoryEventCounters: Sendable, Hashable {
    /// Times the group's usage went over `memory.high` (throttled and reclaimed).
    package var high: UInt64
    /// Times the group's usage was about to go over `memory.max`.
    package var max: UInt64

    /// Reads the counters from the file's text; absent or malformed lines count as 0.
    package init(parsing text: String) {
        var high: UInt64 = 0
        var max: UInt64 = 0
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let value = UInt64(fields[1]) else { continue }
            switch fields[0] {
            case "high": high = value
            case "max": max = value
            default: break
            }
        }
        self.high = high
        self.max = max
    }

    /// Whether `high` or `max` went up since `earlier`.
    package func indicatesPressure(since earlier: MemoryEventCounters) -> Bool {
        high > earlier.high || max > earlier.max
    }
}
