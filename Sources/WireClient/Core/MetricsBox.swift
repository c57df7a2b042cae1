import Wire

/// An exchange's metrics as a response or a completion carries them: Wire's record of an exchange that ended (read
/// when asked: it no longer changes), or a snapshot (a cache's response, metrics set by hand). Reading the record
/// only when asked spares every task a copy of the whole snapshot (its addresses, timings and request head) that
/// most callers never look at. One reference either way: Wire's record is a class already, so a completed task's
/// metrics cost no allocation, and a copy is one retain. Equal and hashed by the metrics it gives.
enum MetricsBox: Sendable, Hashable {
    /// Wire's record of an exchange whose body ended, read each time the metrics are asked for.
    case record(HTTPClientMetrics)
    /// Metrics as given.
    case snapshot(Boxed<HTTPClientMetrics.Snapshot>)

    /// The metrics of an exchange whose body ended.
    init(finished record: HTTPClientMetrics) {
        self = .record(record)
    }

    /// Metrics as given.
    init(_ snapshot: HTTPClientMetrics.Snapshot) {
        self = .snapshot(Boxed(snapshot))
    }

    /// The metrics.
    var value: HTTPClientMetrics.Snapshot {
        switch self {
        case .record(let record): record.snapshot
        case .snapshot(let box): box.value
        }
    }

    static func == (lhs: MetricsBox, rhs: MetricsBox) -> Bool {
        switch (lhs, rhs) {
        case (.record(let left), .record(let right)) where left === right: true
        case (.snapshot(let left), .snapshot(let right)) where left === right: true
        default: lhs.value == rhs.value
        }
    }

    func hash(into hasher: inout Hasher) { hasher.combine(value) }
}
