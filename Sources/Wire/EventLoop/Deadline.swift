/// A point on the monotonic clock (`CLOCK_MONOTONIC`), unaffected by changes to wall time.
public struct Deadline: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since an arbitrary fixed point (boot).
    public let uptimeNanoseconds: UInt64

    /// A deadline at the given monotonic time.
    public init(uptimeNanoseconds: UInt64) { self.uptimeNanoseconds = uptimeNanoseconds }

    /// The current time.
    public static func now() -> Deadline { Deadline(uptimeNanoseconds: Posix.monotonicNanoseconds()) }

    /// The current time as of the clock's last tick (at most a few milliseconds behind `now()`, never ahead of it),
    /// at a fraction of `now()`'s cost: for stamps taken often and compared against timeouts of their own, such as
    /// an idle timer's last activity. A deadline computed from it must add `coarseLagNanoseconds`, or it may come
    /// before its interval has passed since the stamp.
    package static func coarseNow() -> Deadline { Deadline(uptimeNanoseconds: Posix.coarseMonotonicNanoseconds()) }

    /// How far `coarseNow()` may read behind `now()`: two ticks of the coarse clock (its `clock_getres`, read
    /// once). The kernel advances the coarse clock at each tick to the last whole tick it accounted for, so it is up
    /// to one tick behind just after the update and up to two just before the next one (one tick, the resolution
    /// alone, was passed by 30% of readings on a loaded two-core VM; two, by none of 150 million).
    package static let coarseLagNanoseconds: UInt64 = 2 * Posix.coarseMonotonicResolutionNanoseconds()

    /// A deadline that never comes.
    public static let distantFuture = Deadline(uptimeNanoseconds: .max)

    /// `now() + duration`.
    public static func after(_ duration: Duration) -> Deadline { now() + duration }

    /// The deadline `duration` later, saturating at `distantFuture`.
    public static func + (lhs: Deadline, rhs: Duration) -> Deadline {
        let delta = rhs.nanoseconds
        // `magnitude`, not `-delta`: negating `Int64.min` (a duration saturated below) traps.
        if delta <= 0 { return Deadline(uptimeNanoseconds: lhs.uptimeNanoseconds - min(lhs.uptimeNanoseconds, delta.magnitude)) }
        let (sum, overflow) = lhs.uptimeNanoseconds.addingReportingOverflow(UInt64(delta))
        return overflow ? .distantFuture : Deadline(uptimeNanoseconds: sum)
    }

    /// The time from `rhs` to `lhs` (negative when `lhs` is earlier).
    public static func - (lhs: Deadline, rhs: Deadline) -> Duration {
        if lhs.uptimeNanoseconds >= rhs.uptimeNanoseconds {
            return .nanoseconds(Int64(clamping: lhs.uptimeNanoseconds - rhs.uptimeNanoseconds))
        }
        return .nanoseconds(-Int64(clamping: rhs.uptimeNanoseconds - lhs.uptimeNanoseconds))
    }

    /// Orders deadlines by time.
    public static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.uptimeNanoseconds < rhs.uptimeNanoseconds }

    /// The uptime in seconds.
    public var description: String { "Deadline(\(Double(uptimeNanoseconds) / 1e9)s)" }
}

extension Duration {
    /// The duration in whole nanoseconds, saturating at `Int64`'s range.
    package var nanoseconds: Int64 {
        // From the 128-bit count, truncating toward zero as `components` does: `components` is a call into the
        // runtime that divides by 10¹⁸ first (about 190 instructions against 50, and a request adds two timeouts).
        Int64(clamping: attoseconds / 1_000_000_000)
    }

    /// The duration in seconds as a floating-point number.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
