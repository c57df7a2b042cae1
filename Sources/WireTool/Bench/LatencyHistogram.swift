import Histogram
import Wire
import WireLoad

/// A loop's latencies in an HDR histogram (nanoseconds, three significant digits, up to an hour):
/// recording is an index computation and an increment, with no lock and no allocation.
struct LatencyHistogram: LatencyRecorder {
    /// The recorded latencies.
    private(set) var histogram = LatencyHistogram.makeHistogram()
    /// Latencies above the histogram's range (over an hour), counted apart.
    private(set) var overflowCount = 0

    /// The largest latency tracked: one hour.
    static let highestTrackable: UInt64 = 3_600 * 1_000_000_000

    static func makeHistogram() -> Histogram<UInt64> {
        Histogram(lowestDiscernibleValue: 1, highestTrackableValue: highestTrackable, numberOfSignificantValueDigits: .three)
    }

    init() {}

    mutating func record(nanoseconds: UInt64) {
        if !histogram.record(nanoseconds) { overflowCount += 1 }
    }

    mutating func reset() {
        histogram.reset()
        overflowCount = 0
    }

    func summary() -> Histogram<UInt64> { histogram }

    /// Merges each loop's histogram into one.
    static func merged(_ parts: [Histogram<UInt64>]) -> Histogram<UInt64> {
        var total = makeHistogram()
        for part in parts { total.add(part) }
        return total
    }
}
