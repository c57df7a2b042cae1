/// One of `count` equal parts of a load run, for running it as `count` processes (k6's execution
/// segments, in their equal-split form): part `index` takes every `count`-th connection and every
/// `count`-th request slot of the whole run's schedule, starting at its own index.
///
/// Shares are stripes, not blocks, so nothing is lost to rounding: 10 connections over 3 parts are
/// connections 0, 3, 6, 9 / 1, 4, 7 / 2, 5, 8 (4, 3 and 3), and at a constant rate the slots
/// `k` (due `k / rate` seconds after the start) go to part `k % count`, so the parts' schedules
/// interleave into exactly the schedule of one run.
package struct LoadSegment: Sendable, Hashable, CustomStringConvertible {
    /// The part, from 0.
    package let index: Int
    /// The number of parts.
    package let count: Int

    /// The whole run: one part.
    package static let whole = LoadSegment(index: 0, count: 1)!

    /// Part `index` (from 0) of `count`; nil unless `0 <= index < count`.
    package init?(index: Int, count: Int) {
        guard count >= 1, index >= 0, index < count else { return nil }
        self.index = index
        self.count = count
    }

    /// Reads `i/n`, part `i` of `n` counted from 1 (`1/4` … `4/4`); nil for anything else.
    package init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) }),
            let number = Int(parts[0]), let count = Int(parts[1])
        else { return nil }
        self.init(index: number - 1, count: count)
    }

    /// `i/n`, counted from 1.
    package var description: String { "\(index + 1)/\(count)" }

    /// How many of `total` striped items (connections, requests) are this part's: those whose
    /// number `k` has `k % count == index`. The parts' shares add up to `total`.
    package func share(of total: Int) -> Int {
        total > index ? (total - index + count - 1) / count : 0
    }

    /// The whole run's number of this part's `local`-th item.
    package func globalNumber(ofLocal local: Int) -> Int { index + count * local }
}
