public import FoundationEssentials
public import Wire

/// Something that happened to a manager or one of its tasks: what AFNetworking posted as notifications (with
/// swizzled `resume`/`suspend`), delivered to the manager's `SessionEventMonitor`s and `events` streams.
///
/// Emitted exactly once per real transition (a no-op `resume()` or `suspend()` emits nothing), in per-task order:
/// `didResume` before the task's callbacks, `didComplete` after its completion handler returned.
public enum TaskEvent: Sendable {
    /// The task went `suspended → running`.
    case didResume(SessionTask)
    /// The task went `running → suspended`.
    case didSuspend(SessionTask)
    /// The task completed; its completion handler has returned.
    case didComplete(SessionTask, CompletionInfo)
    /// The session became invalid (`invalidateSession`), after its last task completed.
    case sessionDidInvalidate(ClientError?)
    /// A download's file was moved to its destination.
    case downloadDidMoveFile(SessionTask, String)
    /// A download's file could not be moved to its destination; the task fails with `.cannotMoveFile`.
    case downloadDidFailToMoveFile(SessionTask, ClientError)

    /// The task the event is about; nil for `sessionDidInvalidate`.
    public var task: SessionTask? {
        switch self {
        case .didResume(let task), .didSuspend(let task), .didComplete(let task, _), .downloadDidMoveFile(let task, _),
            .downloadDidFailToMoveFile(let task, _):
            task
        case .sessionDidInvalidate:
            nil
        }
    }
}

/// What a task ended with, as its completion handler saw it.
public struct CompletionInfo: Sendable {
    /// The final response, if one arrived.
    public var response: ClientResponse?
    /// The response serializer's value (the destination path for a moved download).
    // Spelled `Optional<…>`: a `T?` stored property starts as nil before the initializer runs, so the initializer
    // assigns over it, which for an existential is a destruction and a copy through its value witnesses.
    // swift-format-ignore: UseShorthandTypeNames
    public var value: Optional<any Sendable>
    /// The buffered body of a data or upload task; nil for downloads.
    public var data: Data?
    /// Where a download's file was moved; nil when it was not.
    public var downloadPath: String?
    /// The transport, move or serialization error, if any.
    public var error: ClientError?
    /// Timings and byte counts of the last exchange, taken when the task completed (its body included, where
    /// `response.metrics` are as of the response head).
    public var metrics: HTTPClientMetrics.Snapshot? {
        get { metricsBox?.value }
        set { metricsBox = newValue.map(MetricsBox.init) }
    }
    private var metricsBox: MetricsBox?

    /// Creates completion information.
    public init(
        response: ClientResponse? = nil, value: (any Sendable)? = nil, data: Data? = nil, downloadPath: String? = nil,
        error: ClientError? = nil, metrics: HTTPClientMetrics.Snapshot? = nil
    ) {
        self.response = response
        self.value = value
        self.data = data
        self.downloadPath = downloadPath
        self.error = error
        self.metrics = metrics
    }

    /// Completion information whose metrics are boxed already (shared, not copied into a box of their own).
    init(
        response: ClientResponse?, value: (any Sendable)?, data: Data?, downloadPath: String?, error: ClientError?,
        metricsBox: MetricsBox?
    ) {
        self.response = response
        self.value = value
        self.data = data
        self.downloadPath = downloadPath
        self.error = error
        self.metricsBox = metricsBox
    }
}

/// Receives a manager's `TaskEvent`s, on the manager's delegate queue, in per-task order; only the events of the
/// manager it was given to (the role of AFNetworking's `taskDescription` check).
public protocol SessionEventMonitor: Sendable {
    /// Called once per event.
    /// - Parameters:
    ///   - event: What happened.
    ///   - manager: The manager whose task (or session) it happened to.
    func manager(_ manager: SessionManager, didEmit event: TaskEvent)

    /// Called once per connection that a report-only security policy let through despite a pin mismatch.
    func manager(_ manager: SessionManager, didRecordPinMismatch report: PinMismatchReport)
}
