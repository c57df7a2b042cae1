import Testing
import Wire

/// `Deadline`'s arithmetic with `Duration`: whole nanoseconds, truncated toward zero, saturating at both ends.
@Suite struct DeadlineTests {
    private let start = Deadline(uptimeNanoseconds: 5_000_000_000)

    @Test func addingADurationCountsWholeNanoseconds() {
        #expect((start + .seconds(2)).uptimeNanoseconds == 7_000_000_000)
        #expect((start + .milliseconds(1_500)).uptimeNanoseconds == 6_500_000_000)
        #expect((start + .nanoseconds(1)).uptimeNanoseconds == 5_000_000_001)
        // Less than a nanosecond is nothing, either way.
        #expect((start + Duration(attoseconds: 999_999_999)).uptimeNanoseconds == 5_000_000_000)
        #expect((start + Duration(attoseconds: -999_999_999)).uptimeNanoseconds == 5_000_000_000)
        #expect((start + Duration(attoseconds: 1_999_999_999)).uptimeNanoseconds == 5_000_000_001)
    }

    @Test func aNegativeDurationGoesBackAndStopsAtZero() {
        #expect((start + .seconds(-1)).uptimeNanoseconds == 4_000_000_000)
        #expect((start + .milliseconds(-2_500)).uptimeNanoseconds == 2_500_000_000)
        #expect((start + .seconds(-6)).uptimeNanoseconds == 0)
        #expect((start + .seconds(Int64.min)).uptimeNanoseconds == 0)
    }

    @Test func aHugeDurationSaturatesAtInt64sNanosecondsAndTheSumAtTheDistantFuture() {
        #expect((start + .seconds(9_000_000_000)).uptimeNanoseconds == 9_000_000_005_000_000_000)
        let longest = UInt64(Int64.max)
        #expect((start + .seconds(Int64.max)).uptimeNanoseconds == 5_000_000_000 + longest)
        #expect((start + .seconds(9_300_000_000)).uptimeNanoseconds == 5_000_000_000 + longest)
        #expect(Deadline(uptimeNanoseconds: .max - 1) + .nanoseconds(2) == .distantFuture)
        #expect(Deadline(uptimeNanoseconds: longest + 1) + .seconds(Int64.max) == .distantFuture)
    }

    @Test func theDifferenceOfTwoDeadlinesIsSigned() {
        let later = start + .milliseconds(250)
        #expect(later - start == .milliseconds(250))
        #expect(start - later == .milliseconds(-250))
    }
}
