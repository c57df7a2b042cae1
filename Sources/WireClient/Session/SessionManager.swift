public import Dispatch
import FoundationEssentials
import Synchronization
@_spi(Locking) import Wire

/// Runs data, upload and download tasks on one Wire `HTTPClient` (AFURLSessionManager).
///
/// ```swift
/// let manager = SessionManager()
/// let task = manager.dataTask(with: ClientRequest(url: URL(string: "http://localhost:8080/users")!)) { response, value, error in
///     print(response?.statusCode ?? 0, value ?? "nil", error.map { "\($0)" } ?? "")
/// }
/// task.resume()   // tasks start suspended
/// ```
///
/// Hooks, data and progress callbacks and events run on the manager's serial delegate queue; response serialization
/// in the task's own Swift task on Swift's global executor, concurrently across tasks; completion handlers on `completionQueue` (a private serial queue by default,
/// never the main queue). None of them ever runs on a Wire event-loop thread or under a lock of the manager.
///
/// A task holds its manager until it completes; a manager with no unfinished task is freed when the caller lets go
/// of it, and shuts its own client down.
public final class SessionManager: Sendable {
    /// The configuration the manager was made with.
    public let configuration: SessionConfiguration
    /// Where hooks, data and progress callbacks and events run: serial, so never two at once for one manager.
    public let delegateQueue: DispatchQueue
    /// Where response serializers run: concurrent across tasks.
    /// Where completion handlers run when `completionQueue` is nil.
    let privateCompletionQueue: DispatchQueue
    let nextIdentifier = Atomic<Int>(1)
    /// Admits at most `maximumConcurrentTasks` transfers at once, in the order they were resumed.
    let slots: ConcurrentTaskLimiter
    /// The idle and resource timeouts of the manager's tasks, under one sleeping Swift task.
    let timeouts = TimeoutWatch()
    /// The configuration's resource and idle timeouts, converted once.
    let resourceTimeout: TimeoutWatch.Timeout
    let defaultIdleTimeout: TimeoutWatch.Timeout
    /// The fields sent with every request over its own (remembered for the last request fields seen).
    let sessionFields: SessionFields
    /// The transfer chains of tasks without an interceptor (`stages(for:)`), for data and upload tasks, and for downloads.
    let baseStages: [TransferStages]
    /// `baseStages`' tails where the tail is the whole chain: run without a chain (`SessionTail.proceed`).
    let soleTails: [SessionTail?]
    /// How many monitors and event streams there are (kept under the state lock, read without it by `emit`).
    let listeners = Atomic<Int>(0)

    struct State {
        /// The session new tasks run on; nil once invalidated without reset.
        var current: SessionGeneration?
        var generations = 0
        /// Sessions invalidated and waiting for their last task, by generation number.
        var draining: [Int: SessionGeneration] = [:]
        /// The unfinished tasks, by identifier.
        var delegates = TaskTable()
        var responseSerializer: any ResponseSerializer = JSONResponseSerializer()
        var interceptor: (any Interceptor)? {
            didSet { hasInterceptor = interceptor != nil }
        }
        /// Whether `interceptor` is set: asked for every task, where testing the optional existential itself copies
        /// it through its type's value witnesses.
        var hasInterceptor = false
        var completionQueue: DispatchQueue?
        var completionGroup: DispatchGroup?
        /// The hooks, set one by one through the public properties; read whole as `hooksSnapshot`.
        var hooks: SessionHooks {
            get { hooksSnapshot.value }
            set { hooksSnapshot = SessionHooksSnapshot(newValue) }
        }
        var hooksSnapshot = SessionHooksSnapshot(SessionHooks())
        var securityPolicies = HostSecurityPolicies()
        var monitors: [any SessionEventMonitor]
        var streams: [Int: AsyncStream<TaskEvent>.Continuation] = [:]
        var nextStream = 0
    }

    let state: Lock<State>

    /// Creates a manager.
    /// - Parameters:
    ///   - configuration: Timeouts, limits, TLS, an `HTTPClient` to adopt.
    ///   - eventMonitors: Told of every `TaskEvent` of this manager, on the delegate queue.
    public init(configuration: SessionConfiguration = .default, eventMonitors: [any SessionEventMonitor] = []) {
        self.configuration = configuration
        delegateQueue = DispatchQueue(label: "WireClient.SessionManager.delegate")
        privateCompletionQueue = DispatchQueue(label: "WireClient.SessionManager.completion")
        slots = ConcurrentTaskLimiter(limit: configuration.maximumConcurrentTasks)
        resourceTimeout = TimeoutWatch.Timeout(configuration.timeoutIntervalForResource)
        defaultIdleTimeout = TimeoutWatch.Timeout(configuration.timeoutIntervalForRequest)
        sessionFields = SessionFields(configuration: configuration)
        baseStages = Self.stages(for: configuration, fields: sessionFields)
        soleTails = Self.soleTails(of: baseStages)
        state = Lock(
            State(
                current: SessionGeneration(number: 0, configuration: configuration), generations: 1,
                monitors: eventMonitors))
        listeners.store(eventMonitors.count, ordering: .releasing)
    }

    deinit {
        // No task is unfinished (each holds the manager), so the sessions are idle: close their connections.
        let (generations, streams) = state.withLock { state in
            (Array(state.draining.values) + (state.current.map { [$0] } ?? []), Array(state.streams.values))
        }
        for stream in streams { stream.finish() }
        timeouts.stop()
        let clients = generations.flatMap(\.ownClients)
        if !clients.isEmpty {
            Task { for client in clients { await client.shutdown() } }
        }
    }

    // MARK: Settings

    /// Serializes every task's response: `JSONResponseSerializer()` by default.
    public var responseSerializer: any ResponseSerializer {
        get { state.withLock { $0.responseSerializer } }
        set { state.withLock { $0.responseSerializer = newValue } }
    }

    /// Adapts every task's request before each attempt and decides whether a failed attempt is retried (a
    /// `RetryInterceptor`, an `AuthenticationInterceptor`, or a chain of them); the request's own `interceptor`
    /// comes after it. Nil (the default): requests go out as they are and nothing is retried.
    ///
    /// A retried task starts again from its original request (redirects followed again, the adapters run again),
    /// after the delay the retrier asked for; its progress starts again from zero with each attempt. The resource
    /// timeout counts the whole, delays included; the idle timeout does not run during a delay.
    public var interceptor: (any Interceptor)? {
        get { state.withLock { $0.interceptor } }
        set { state.withLock { $0.interceptor = newValue } }
    }

    /// The connection pools of the Wire clients this manager's tasks run on (its current session's, the sessions still
    /// draining after `invalidateSession`, and an adopted `httpClient`'s), as `HTTPClient.poolSnapshots()` gives them.
    public var poolSnapshots: [HTTPClientPoolSnapshot] {
        let generations = state.withLock { state in Array(state.draining.values) + (state.current.map { [$0] } ?? []) }
        var clients = generations.flatMap(\.ownClients)
        if let adopted = configuration.httpClient { clients.append(adopted) }
        return clients.flatMap { $0.poolSnapshots() }
    }

    /// Where completion handlers run; nil (the default) is a private serial queue of the manager, not the main queue.
    public var completionQueue: DispatchQueue? {
        get { state.withLock { $0.completionQueue } }
        set { state.withLock { $0.completionQueue = newValue } }
    }

    /// Entered before each completion handler is scheduled and left after it returns.
    public var completionGroup: DispatchGroup? {
        get { state.withLock { $0.completionGroup } }
        set { state.withLock { $0.completionGroup = newValue } }
    }

    /// Told of every `TaskEvent` of this manager.
    public var eventMonitors: [any SessionEventMonitor] {
        get { state.withLock { $0.monitors } }
        set {
            state.withLock { state in
                state.monitors = newValue
                listeners.store(state.monitors.count + state.streams.count, ordering: .releasing)
            }
        }
    }

    /// A new stream of this manager's `TaskEvent`s from now on; it ends when the manager is freed or the consumer
    /// stops iterating. Each access makes another stream, and every stream gets every event.
    public var events: AsyncStream<TaskEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: TaskEvent.self)
        let key = state.withLock { state -> Int in
            state.nextStream += 1
            state.streams[state.nextStream] = continuation
            listeners.store(state.monitors.count + state.streams.count, ordering: .releasing)
            return state.nextStream
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            state.withLock { state in
                state.streams[key] = nil
                listeners.store(state.monitors.count + state.streams.count, ordering: .releasing)
            }
        }
        return stream
    }

    // MARK: Tasks

    /// The unfinished tasks (suspended ones included), in creation order. Does not block on I/O.
    public var tasks: [SessionTask] {
        state.withLock { state in state.delegates.delegates.map(\.task) }.sorted { $0.taskIdentifier < $1.taskIdentifier }
    }

    /// The unfinished data tasks, in creation order.
    public var dataTasks: [SessionTask] { tasks.filter { $0.kind == .data } }
    /// The unfinished upload tasks, in creation order.
    public var uploadTasks: [SessionTask] { tasks.filter { $0.kind == .upload } }
    /// The unfinished download tasks, in creation order.
    public var downloadTasks: [SessionTask] { tasks.filter { $0.kind == .download } }

    // MARK: Events

    /// Sends `event` to the monitors and streams, on the delegate queue (after everything queued before it).
    func emit(_ event: @autoclosure () -> TaskEvent) {
        // Nobody listening (the common case of a service): no event made, no hop to the delegate queue for nothing.
        guard listeners.load(ordering: .acquiring) > 0 else { return }
        let event = event()
        delegateQueue.async { [self] in
            let (monitors, streams) = state.withLock { ($0.monitors, Array($0.streams.values)) }
            for monitor in monitors { monitor.manager(self, didEmit: event) }
            for stream in streams { stream.yield(event) }
        }
    }

    /// Runs `body` on the delegate queue.
    func onDelegateQueue(_ body: @escaping @Sendable () -> Void) {
        delegateQueue.async(execute: body)
    }

    /// Runs `body` on the delegate queue and returns its result.
    func askDelegateQueue<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            delegateQueue.async { continuation.resume(returning: body()) }
        }
    }

    /// The hooks now.
    var hooks: SessionHooksSnapshot { state.withLock { $0.hooksSnapshot } }
}
