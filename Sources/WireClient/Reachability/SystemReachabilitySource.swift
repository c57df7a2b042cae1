import Synchronization
import Wire

/// The kernel's view of the network: a `NETLINK_ROUTE` socket on a Wire event loop for changes and a second one
/// for dumps and route lookups; where netlink cannot be opened, polling of procfs and sysfs on `clock` every
/// `pollingInterval`.
public struct SystemReachabilitySource: ReachabilitySnapshotSource {
    /// The loop the notification socket is registered on; nil: a loop of its own shared by every source.
    public var loop: EventLoop?
    /// How interfaces are classified (and where sysfs is).
    public var classifier: InterfaceClassifier
    /// Where procfs is, for polling.
    public var procRoot: String
    /// The clock polling sleeps on.
    public var clock: any Clock<Duration>
    /// How often to poll when netlink is unavailable (5 s).
    public var pollingInterval: Duration
    /// How long a burst of notifications is gathered before a new snapshot (100 ms).
    public var coalescing: Duration
    /// Whether to try netlink first; false always polls (for tests of the fallback).
    public var usesNetlink: Bool

    /// A source with these settings.
    public init(
        loop: EventLoop? = nil, classifier: InterfaceClassifier = InterfaceClassifier(), procRoot: String = "/proc",
        clock: any Clock<Duration> = ContinuousClock(), pollingInterval: Duration = .seconds(5),
        coalescing: Duration = .milliseconds(100), usesNetlink: Bool = true
    ) {
        self.loop = loop
        self.classifier = classifier
        self.procRoot = procRoot
        self.clock = clock
        self.pollingInterval = pollingInterval
        self.coalescing = coalescing
        self.usesNetlink = usesNetlink
    }

    /// The loop of sources given none, started on first use.
    private static let sharedLoop: EventLoop? = try? EventLoop(name: "wire-reachability")

    public func startWatching(onChange: @escaping @Sendable () -> Void) throws -> any ReachabilityWatch {
        if usesNetlink, let loop = loop ?? Self.sharedLoop,
            let reader = try? NetlinkSnapshotReader(classifier: classifier)
        {
            do {
                let monitor = try NetlinkChangeMonitor(loop: loop, coalescing: coalescing, onChange: onChange)
                return NetlinkWatch(reader: reader, monitor: monitor)
            } catch {
                reader.close()
            }
        }
        return PollingWatch(
            procRoot: procRoot, classifier: classifier, clock: clock, interval: pollingInterval, onChange: onChange)
    }
}

/// A watch over the two netlink sockets.
final class NetlinkWatch: ReachabilityWatch {
    let reader: NetlinkSnapshotReader
    let monitor: NetlinkChangeMonitor

    init(reader: NetlinkSnapshotReader, monitor: NetlinkChangeMonitor) {
        self.reader = reader
        self.monitor = monitor
    }

    func snapshot(lookingUp destinations: [ReachabilitySnapshot.IPAddress]) throws -> ReachabilitySnapshot {
        try reader.snapshot(lookingUp: destinations)
    }

    func stop() {
        monitor.stop()
        reader.close()
    }
}

/// A watch that reads procfs and sysfs, and reports a possible change every interval.
final class PollingWatch: ReachabilityWatch {
    private let procRoot: String
    private let classifier: InterfaceClassifier
    private let ticker: Task<Void, Never>
    private let isStopped = Atomic(false)

    init(
        procRoot: String, classifier: InterfaceClassifier, clock: any Clock<Duration>, interval: Duration,
        onChange: @escaping @Sendable () -> Void
    ) {
        self.procRoot = procRoot
        self.classifier = classifier
        ticker = Task {
            while !Task.isCancelled {
                do { try await clock.sleep(for: interval) } catch { return }
                onChange()
            }
        }
    }

    func snapshot(lookingUp destinations: [ReachabilitySnapshot.IPAddress]) throws -> ReachabilitySnapshot {
        guard !isStopped.load(ordering: .acquiring) else { throw ReachabilityWatchError.stopped }
        return ProcNetSnapshot.read(procRoot: procRoot, classifier: classifier)
    }

    func stop() {
        isStopped.store(true, ordering: .releasing)
        ticker.cancel()
    }
}
