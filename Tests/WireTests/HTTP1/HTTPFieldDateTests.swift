import Testing
import Wire

/// HTTP-date (RFC 9110 §5.6.7): IMF-fixdate out; IMF-fixdate, RFC 850 and asctime in; anything else nil.
struct HTTPFieldDateTests {
    /// RFC 9110's own example instant, 1994-11-06 08:49:37 UTC.
    static let example = 784_111_777
    /// 2025-01-01 00:00:00 UTC, the "now" that places RFC 850 two-digit years.
    static let now2025 = 1_735_689_600

    @Test func formatsIMFFixdate() {
        #expect(HTTPFieldDate.format(unixSeconds: Self.example) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPFieldDate.format(unixSeconds: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPFieldDate.format(unixSeconds: 951_782_400) == "Tue, 29 Feb 2000 00:00:00 GMT")
    }

    @Test func formatsEveryWeekdayAndTimesBeforeTheEpoch() {
        let week = (0..<7).map { HTTPFieldDate.format(unixSeconds: $0 * 86_400).prefix(3) }
        #expect(week == ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"])
        #expect(HTTPFieldDate.format(unixSeconds: -1) == "Wed, 31 Dec 1969 23:59:59 GMT")
        #expect(HTTPFieldDate.format(unixSeconds: -2_208_988_800) == "Mon, 01 Jan 1900 00:00:00 GMT")
    }

    /// The calendar arithmetic that the `Date` line and WireTLS's certificate times share.
    @Test func calendarArithmetic() {
        #expect(HTTPFieldDate.daysAndSecondOfDay(unixSeconds: 0) == (0, 0))
        #expect(HTTPFieldDate.daysAndSecondOfDay(unixSeconds: 86_399) == (0, 86_399))
        #expect(HTTPFieldDate.daysAndSecondOfDay(unixSeconds: -1) == (-1, 86_399))
        #expect(HTTPFieldDate.daysAndSecondOfDay(unixSeconds: -86_400) == (-1, 0))
        #expect(HTTPFieldDate.civilDate(daysSinceEpoch: 0) == (1970, 1, 1))
        #expect(HTTPFieldDate.civilDate(daysSinceEpoch: 11_016) == (2000, 2, 29))
        #expect(HTTPFieldDate.civilDate(daysSinceEpoch: -719_468) == (0, 3, 1))
        for days in stride(from: -800_000, to: 800_000, by: 997) {
            let (year, month, day) = HTTPFieldDate.civilDate(daysSinceEpoch: days)
            #expect(HTTPFieldDate.daysSinceEpoch(year: year, month: month, day: day) == days, "\(days)")
            #expect((1...HTTPFieldDate.daysInMonth(month, year: year)).contains(day))
        }
    }

    @Test func parsesTheThreeFormsOfRFC9110sExample() {
        #expect(HTTPFieldDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Self.example)
        #expect(HTTPFieldDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: Self.now2025) == Self.example)
        #expect(HTTPFieldDate.parse("Sun Nov  6 08:49:37 1994") == Self.example)
        #expect(HTTPFieldDate.parse("Sun Nov 16 08:49:37 1994") == Self.example + 10 * 86_400)
    }

    @Test func roundTripsAcrossCenturiesAndLeapDays() {
        for seconds in [0, 1, 86_399, 86_400, 951_782_400, 4_107_542_399, 253_402_300_799, -1, -2_208_988_800] {
            #expect(HTTPFieldDate.parse(HTTPFieldDate.format(unixSeconds: seconds)) == seconds, "\(seconds)")
        }
        // Every day for ten years, at a time of day that moves.
        for day in stride(from: 10_950, to: 14_600, by: 1) {
            let seconds = day * 86_400 + (day * 7_919) % 86_400
            #expect(HTTPFieldDate.parse(HTTPFieldDate.format(unixSeconds: seconds)) == seconds)
        }
    }

    /// A two-digit year more than 50 years ahead means the most recent past year with those digits.
    @Test func placesRFC850TwoDigitYears() {
        let seventySix = HTTPFieldDate.parse("Thursday, 01-Jan-76 00:00:00 GMT", now: Self.now2025)
        #expect(seventySix.map { HTTPFieldDate.format(unixSeconds: $0) } == "Thu, 01 Jan 1976 00:00:00 GMT")
        // Exactly 50 years ahead is not more than 50.
        let seventyFive = HTTPFieldDate.parse("Tuesday, 01-Jan-75 00:00:00 GMT", now: Self.now2025)
        #expect(seventyFive.map { HTTPFieldDate.format(unixSeconds: $0) } == "Tue, 01 Jan 2075 00:00:00 GMT")
        let seventyFour = HTTPFieldDate.parse("Tuesday, 01-Jan-74 00:00:00 GMT", now: Self.now2025)
        #expect(seventyFour.map { HTTPFieldDate.format(unixSeconds: $0) } == "Mon, 01 Jan 2074 00:00:00 GMT")
        let thirty = HTTPFieldDate.parse("Tuesday, 01-Jan-30 00:00:00 GMT", now: Self.now2025)
        #expect(thirty.map { HTTPFieldDate.format(unixSeconds: $0) } == "Tue, 01 Jan 2030 00:00:00 GMT")
        // From 2090, "10" is 2110 (20 years ahead), not 2010.
        let from2090 = HTTPFieldDate.daysSinceEpoch(year: 2090, month: 1, day: 1) * 86_400
        let ten = HTTPFieldDate.parse("Monday, 01-Jan-10 00:00:00 GMT", now: from2090)
        #expect(ten.map { HTTPFieldDate.format(unixSeconds: $0) }?.hasSuffix(" 2110 00:00:00 GMT") == true)
    }

    @Test(arguments: [
        "",
        "Sun, 06 Nov 1994 08:49:37 UTC",  // only GMT
        "Sun, 06 Nov 1994 08:49:37 GMT ",  // trailing space (the caller trims OWS)
        "sun, 06 Nov 1994 08:49:37 GMT",  // names are case-sensitive
        "Sun, 6 Nov 1994 08:49:37 GMT",  // IMF-fixdate days have two digits
        "Sun, 31 Nov 1994 08:49:37 GMT",  // November has 30 days
        "Sun, 29 Feb 1900 08:49:37 GMT",  // 1900 is not a leap year
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 06 Xyz 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49 GMT",
        "Sun, 06-Nov-94 08:49:37 GMT",  // RFC 850 takes the long day name
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sun Nov 6 08:49:37 1994",  // asctime pads a one-digit day with a space
        "Sun Nov  6 08:49:37 94",
        "1994-11-06T08:49:37Z",
        "784111777",
    ])
    func refusesWhatIsNotAnHTTPDate(_ text: String) {
        #expect(HTTPFieldDate.parse(text, now: Self.now2025) == nil)
    }

    @Test func acceptsALeapSecond() {
        #expect(HTTPFieldDate.parse("Sat, 31 Dec 2016 23:59:60 GMT") == 1_483_228_800)
    }
}
