/// The `Date` field value in IMF-fixdate form (RFC 9110 §5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`, made from
/// Unix seconds without a calendar library.
package enum HTTPDate {
    /// Formats `seconds` since the Unix epoch (UTC).
    static func imfFixdate(unixSeconds seconds: Int) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // 1970-01-01 was a Thursday (index 4 with Sunday as 0).
        let weekday = ((days % 7) + 11) % 7
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return "\(weekdays[weekday]), \(twoDigits(day)) \(months[month - 1]) \(year) "
            + "\(twoDigits(secondOfDay / 3600)):\(twoDigits(secondOfDay / 60 % 60)):\(twoDigits(secondOfDay % 60)) GMT"
    }

    /// Year, month (1–12) and day (1–31) of the proleptic Gregorian calendar, by the era-based algorithm of
    /// Howard Hinnant's "chrono-Compatible Low-Level Date Algorithms".
    package static func civilDate(daysSinceEpoch: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = daysSinceEpoch + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : String(value)
    }
}

/// One loop's `Date` field line, rebuilt at most once per second: a response costs a clock read and a copy.
struct HTTPDateCache {
    private var second = Int.min
    private var line: [UInt8] = []

    /// Appends `Date: <now>\r\n`.
    mutating func appendLine(to buffer: inout ByteBuffer) {
        let now = Posix.wallClockSeconds()
        if now != second {
            second = now
            line = Array("Date: \(HTTPDate.imfFixdate(unixSeconds: now))\r\n".utf8)
        }
        line.withUnsafeBytes { buffer.writeBytes($0) }
    }
}
