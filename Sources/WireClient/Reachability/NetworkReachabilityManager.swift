import Dispatch
import Synchronization
@_spi(Locking) import Wire

/// Watches whether the network, an address or a host can be reached: AFNetworking's
/// `AFNetworkReachabilityManager` over the kernel's routing netlink.
///
/// ```swift
/// let reachability = NetworkReachabilityManager()
/// reachability.setReachabilityStatusChangeBlock { status in print(status) }  // "Reachable via WiFi"
/// reachability.startMonitoring()
/// ```
///
/// `startMonitoring()` delivers one first callback with the current status at once, even when it equals the
/// last one known; after that the block runs only when the status changes (**Deviation:** AFNetworking does not
/// de-duplicate, but SCNetworkReachability fires only on flag changes, while netlink reports every address and
/// route event). `paths` reports every change of the path, status or not. The block, the `paths` streams and
/// `NetworkReachabilityManager.didChange` are served in order on `callbackQueue`, never on an event-loop thread
/// or under the manager's lock. Reachability never gates requests by itself.
public final class NetworkReachabilityManager: Sendable {
    /// What a manager watches.
    public enum Target: Sendable, Hashable {
        /// Any default route (AFNetworking's `manager`, the zero address).
        case anyRoute
        /// One IPv4 or IPv6 address (`managerForAddress:`); its port is ignored.
        case address(SocketAddress)
        /// A host name, resolved on start and on every network change (`managerForDomain:`).
        case domain(String)
    }

    /// A manager for any route, shared by the process (AFNetworking's `sharedManager`); nothing starts it for you.
    public static let shared = NetworkReachabilityManager()

    /// Status changes of every manager, with the manager: AFNetworking's
    /// `AFNetworkingReachabilityDidChangeNotification`.
    public static let didChange = ReachabilityChangeEvents()

    /// What this manager watches.
    public let target: Target
    private let source: any ReachabilitySnapshotSource
    private let resolver: any Resolver
    private let state: Lock<State>
    /// Where evaluations run: off the cooperative pool, so a busy application does not delay the news.
    private let evaluator = EvaluationExecutor(label: "wire.reachability.evaluation")

    private struct State {
        var path = ReachabilityPath.unknown
        var block: (@Sendable (NetworkReachabilityStatus) -> Void)?
        var callbackQueue: DispatchQueue
        /// Bumped by every start and stop: work of an older run delivers nothing.
        var generation: UInt64 = 0
        var run: Run?
        var pathSubscribers: [UInt64: AsyncStream<ReachabilityPath>.Continuation] = [:]
        var nextSubscriber: UInt64 = 0
    }

    private struct Run {
        var watch: (any ReachabilityWatch)?
        var worker: Task<Void, Never>?
        var triggers: AsyncStream<Void>.Continuation
        var hasDeliveredFirst = false
    }

    /// A manager for any default route ("is there a network").
    public convenience init(source: any ReachabilitySnapshotSource = SystemReachabilitySource()) {
        self.init(target: .anyRoute, resolver: SystemResolver(), source: source)
    }

    /// A manager for one address: reachable iff the kernel routes it through an interface that is up.
    public convenience init(address: SocketAddress, source: any ReachabilitySnapshotSource = SystemReachabilitySource()) {
        self.init(target: .address(address), resolver: SystemResolver(), source: source)
    }

    /// A manager for a host name: reachable iff one of its addresses is; a failed resolution is not reachable.
    public convenience init(
        domain: String, resolver: any Resolver = SystemResolver(),
        source: any ReachabilitySnapshotSource = SystemReachabilitySource()
    ) {
        self.init(target: .domain(domain), resolver: resolver, source: source)
    }

    private init(target: Target, resolver: any Resolver, source: any ReachabilitySnapshotSource) {
        self.target = target
        self.resolver = resolver
        self.source = source
        state = Lock(State(callbackQueue: DispatchQueue(label: "wire.reachability.callbacks")))
    }

    deinit {
        // The sockets and the worker belong to the run; a manager dropped while monitoring releases them.
        stopMonitoring()
    }

    // MARK: Status

    /// The last status (`.unknown` before the first evaluation); kept by `stopMonitoring()`.
    public var networkReachabilityStatus: NetworkReachabilityStatus { state.withLock { $0.path.status } }
    /// The last path, with its interface and routes.
    public var path: ReachabilityPath { state.withLock { $0.path } }
    /// Whether the status is one of the reachable ones.
    public var isReachable: Bool { networkReachabilityStatus.isReachable }
    /// Whether the status is `.reachableViaWWAN`.
    public var isReachableViaWWAN: Bool { networkReachabilityStatus == .reachableViaWWAN }
    /// Whether the status is `.reachableViaWiFi`.
    public var isReachableViaWiFi: Bool { networkReachabilityStatus == .reachableViaWiFi }

    /// Where the block, the `paths` streams and `didChange` are served: a private serial queue by default.
    public var callbackQueue: DispatchQueue {
        get { state.withLock { $0.callbackQueue } }
        set { state.withLock { $0.callbackQueue = newValue } }
    }

    /// Sets the block called with each status: the first after `startMonitoring()`, then each change.
    public func setReachabilityStatusChangeBlock(_ block: (@Sendable (NetworkReachabilityStatus) -> Void)?) {
        state.withLock { $0.block = block }
    }

    /// A stream of every path while monitoring: the first after each start, then any change (another interface
    /// with the same status included). Each access makes a new stream; it ends when its consumer goes away.
    public var paths: AsyncStream<ReachabilityPath> {
        let (stream, continuation) = AsyncStream.makeStream(of: ReachabilityPath.self, bufferingPolicy: .unbounded)
        let id = state.withLock { state in
            state.nextSubscriber += 1
            state.pathSubscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.pathSubscribers.removeValue(forKey: id) }
        }
        return stream
    }

    // MARK: Monitoring

    /// Starts watching (stopping first if running) and delivers the current status at once. The sockets are
    /// opened on the calling thread, so a thread in another network namespace watches that namespace.
    public func startMonitoring() {
        stopMonitoring()
        let (triggers, trigger) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let watch: (any ReachabilityWatch)?
        do {
            watch = try source.startWatching(onChange: { trigger.yield() })
        } catch {
            watch = nil
        }
        trigger.yield()  // the first evaluation, delivered whatever it finds
        // The run is in place before its worker starts, so that the first evaluation finds it.
        let (generation, displaced) = state.withLock { state -> (UInt64, Run?) in
            state.generation += 1
            // A run another thread started since our `stopMonitoring()` gives way to this one.
            defer { state.run = Run(watch: watch, worker: nil, triggers: trigger) }
            return (state.generation, state.run)
        }
        if let displaced { Self.end(displaced) }
        let worker = Task(executorPreference: evaluator) { [weak self] in
            for await _ in triggers {
                guard let self, !Task.isCancelled else { return }
                await self.evaluate(watch: watch, generation: generation)
            }
        }
        let isCurrent = state.withLock { state -> Bool in
            guard state.generation == generation else { return false }  // stopped meanwhile
            state.run?.worker = worker
            return true
        }
        if !isCurrent { worker.cancel() }
    }

    /// Stops watching: no callback after it returns (one already running may finish); the last status is kept.
    public func stopMonitoring() {
        let run = state.withLock { state -> Run? in
            state.generation += 1
            defer { state.run = nil }
            return state.run
        }
        if let run { Self.end(run) }
    }

    private static func end(_ run: Run) {
        run.worker?.cancel()
        run.triggers.finish()
        run.watch?.stop()
    }

    /// Takes a snapshot, evaluates it, and delivers the path.
    private func evaluate(watch: (any ReachabilityWatch)?, generation: UInt64) async {
        let path: ReachabilityPath
        if let watch {
            let destinations: [ReachabilitySnapshot.IPAddress]?
            switch target {
            case .anyRoute: destinations = nil
            case .address(let address):
                destinations = address.ipAddressBytes.flatMap(ReachabilitySnapshot.IPAddress.init(bytes:)).map { [$0] } ?? []
            case .domain(let name):
                let resolved = (try? await resolver.resolve(host: name, port: 0)) ?? []
                destinations = resolved.compactMap { $0.ipAddressBytes.flatMap(ReachabilitySnapshot.IPAddress.init(bytes:)) }
            }
            do {
                let snapshot = try watch.snapshot(lookingUp: destinations ?? [])
                path = ReachabilityEvaluator.path(for: destinations.map(ReachabilityTarget.addresses) ?? .anyRoute, in: snapshot)
            } catch {
                // An unreadable moment keeps the last path; only a first evaluation has nothing better than unknown.
                path = state.withLock { $0.path }
            }
        } else {
            path = .unknown
        }
        deliver(path, generation: generation)
    }

    private func deliver(_ path: ReachabilityPath, generation: UInt64) {
        struct Delivery {
            var queue: DispatchQueue
            var block: (@Sendable (NetworkReachabilityStatus) -> Void)?
            var statusChanged: Bool
            var subscribers: [AsyncStream<ReachabilityPath>.Continuation]
        }
        let delivery = state.withLock { state -> Delivery? in
            guard state.generation == generation, state.run != nil else { return nil }
            let isFirst = !state.run!.hasDeliveredFirst
            state.run!.hasDeliveredFirst = true
            let statusChanged = isFirst || path.status != state.path.status
            let pathChanged = isFirst || path != state.path
            // Updated before the block runs, as AFNetworking does.
            state.path = path
            guard statusChanged || pathChanged else { return nil }
            return Delivery(
                queue: state.callbackQueue, block: statusChanged ? state.block : nil, statusChanged: statusChanged,
                subscribers: pathChanged ? Array(state.pathSubscribers.values) : []
            )
        }
        guard let delivery else { return }
        delivery.queue.async { [self] in
            // Stopped (or restarted) since: this run's news is stale.
            guard state.withLock({ $0.generation == generation }) else { return }
            if delivery.statusChanged {
                delivery.block?(path.status)
                Self.didChange.post(ReachabilityChange(manager: self, status: path.status))
            }
            for subscriber in delivery.subscribers { subscriber.yield(path) }
        }
    }
}

/// One status change of one manager.
public struct ReachabilityChange: Sendable {
    /// The manager whose status changed.
    public let manager: NetworkReachabilityManager
    /// The new status.
    public let status: NetworkReachabilityStatus
}

/// The process-wide stream of status changes, `NetworkReachabilityManager.didChange`.
public final class ReachabilityChangeEvents: Sendable {
    private let subscribers = Lock<(next: UInt64, all: [UInt64: AsyncStream<ReachabilityChange>.Continuation])>((0, [:]))

    init() {}

    /// A new stream of every manager's status changes from now on (first callbacks included), in the order each
    /// manager's callback queue serves them. It ends when its consumer goes away.
    public func stream() -> AsyncStream<ReachabilityChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: ReachabilityChange.self, bufferingPolicy: .unbounded)
        let id = subscribers.withLock { state in
            state.next += 1
            state.all[state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.all.removeValue(forKey: id) }
        }
        return stream
    }

    func post(_ change: ReachabilityChange) {
        let all = subscribers.withLock { Array($0.all.values) }
        for continuation in all { continuation.yield(change) }
    }
}
