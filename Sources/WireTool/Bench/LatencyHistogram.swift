import Histogram
import Wire
import WireLoad

/// A loop's latencies in an HDR histogram (nanoseconds, three significant digits, up to an hour):
/// recording is an index computation and an increment, with no lock and no allocation.
struct LatencyHistogram: LatencyRecorder {
    /// The latencies of intervals already taken (`takeInterval()`).
    private var earlier = LatencyHistogram.makeHistogram()
    /// The latencies recorded since the last interval was taken: each request is recorded here
    /// only, and an interval's end adds them to `earlier` (once a second, not per request).
    private var current = LatencyHistogram.makeHistogram()
    /// Latencies above the histogram's range (over an hour), counted apart.
    private(set) var overflowCount = 0

    /// The largest latency tracked: one hour.
    static let highestTrackable: UInt64 = 3_600 * 1_000_000_000

    static func makeHistogram() -> Histogram<UInt64> {
        Histogram(lowestDiscernibleValue: 1, highestTrackableValue: highestTrackable, numberOfSignificantValueDigits: .three)
    }

    init() {}

    mutating func record(nanoseconds: UInt64) {
        if !current.record(nanoseconds) { overflowCount += 1 }
    }

    mutating func reset() {
        earlier.reset()
        current.reset()
        overflowCount = 0
    }

    func summary() -> Histogram<UInt64> {
        var all = earlier
        all.add(current)
        return all
    }

    mutating func takeInterval() -> Histogram<UInt64> {
        let interval = current
        earlier.add(interval)
        current.reset()
        return interval
    }

    /// Merges each loop's histogram into one.
    static func merged(_ parts: [Histogram<UInt64>]) -> Histogram<UInt64> {
        var total = makeHistogram()
        for part in parts { total.add(part) }
        return total
    }
}
