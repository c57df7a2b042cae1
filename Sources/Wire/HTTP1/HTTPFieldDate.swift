/// HTTP-date field values (RFC 9110 §5.6.7) as Unix seconds: formatted as IMF-fixdate, parsed from IMF-fixdate and,
/// as recipients should accept, from the obsolete RFC 850 and asctime forms. For Last-Modified, If-Modified-Since,
/// If-Range and the like, and the server's own `Date` line (cached per loop by `HTTPDateCache`).
package enum HTTPFieldDate {
    /// `Sun, 06 Nov 1994 08:49:37 GMT` for `seconds` since the Unix epoch: IMF-fixdate, the form a sender
    /// generates (RFC 9110 §5.6.7).
    package static func format(unixSeconds seconds: Int) -> String {
        let (days, secondOfDay) = daysAndSecondOfDay(unixSeconds: seconds)
        // 1970-01-01 was a Thursday: index 3 in `dayNames`, which starts on Monday.
        let weekday = ((days % 7) + 10) % 7
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        return "\(dayNames[weekday]), \(twoDigits(day)) \(monthNames[month - 1]) \(year) "
            + "\(twoDigits(secondOfDay / 3600)):\(twoDigits(secondOfDay / 60 % 60)):\(twoDigits(secondOfDay % 60)) GMT"
    }

    /// The Unix seconds of an HTTP-date in any of its three forms; nil for anything else (RFC 9110 §13.1.3 says an
    /// invalid date in a precondition is ignored). The text must hold the date alone, without surrounding space.
    ///
    /// - Parameter now: Unix seconds of the present, which places an RFC 850 two-digit year: a date more than 50
    ///   years ahead of it means the most recent past year with those digits (RFC 9110 §5.6.7).
    package static func parse(_ text: String, now: Int? = nil) -> Int? {
        var scanner = DateScanner(Array(text.utf8))
        guard
            let parts = scanner.imfFixdate() ?? scanner.rfc850(now: now ?? Posix.wallClockSeconds())
                ?? scanner.asctime()
        else { return nil }
        return parts.unixSeconds
    }

    static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `value` (0–99) in two digits, as the times of an HTTP-date and of a certificate are written.
    package static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : String(value)
    }
}

/// The fields of a parsed date, checked for range.
private struct DateParts {
    var year, month, day, hour, minute, second: Int

    /// Nil when a field is out of range (day 31 of April, hour 24…). Second 60 is a leap second (RFC 5322 §3.3).
    init?(year: Int, month: Int, day: Int, time: (Int, Int, Int)) {
        guard (1...12).contains(month), (1...HTTPFieldDate.daysInMonth(month, year: year)).contains(day),
            (0...23).contains(time.0), (0...59).contains(time.1), (0...60).contains(time.2)
        else { return nil }
        (self.year, self.month, self.day) = (year, month, day)
        (hour, minute, second) = time
    }

    var unixSeconds: Int {
        HTTPFieldDate.daysSinceEpoch(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
    }
}

/// Reads one date form from the start of the bytes; each form rewinds on failure, so the next can be tried.
private struct DateScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`
    mutating func imfFixdate() -> DateParts? {
        attempt { scanner in
            guard scanner.name(in: HTTPFieldDate.dayNames) != nil, scanner.literal(", "),
                let day = scanner.digits(2), scanner.literal(" "), let month = scanner.month(), scanner.literal(" "),
                let year = scanner.digits(4), scanner.literal(" "), let time = scanner.timeOfDay(),
                scanner.literal(" GMT"), scanner.atEnd
            else { return nil }
            return DateParts(year: year, month: month, day: day, time: time)
        }
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`
    mutating func rfc850(now: Int) -> DateParts? {
        attempt { scanner in
            guard scanner.name(in: HTTPFieldDate.longDayNames) != nil, scanner.literal(", "),
                let day = scanner.digits(2), scanner.literal("-"), let month = scanner.month(), scanner.literal("-"),
                let twoDigitYear = scanner.digits(2), scanner.literal(" "), let time = scanner.timeOfDay(),
                scanner.literal(" GMT"), scanner.atEnd
            else { return nil }
            let currentYear = HTTPFieldDate.civilDate(
                daysSinceEpoch: HTTPFieldDate.daysAndSecondOfDay(unixSeconds: now).days
            ).year
            var year = currentYear - currentYear % 100 + twoDigitYear
            if year > currentYear + 50 { year -= 100 }
            // The year is the one with those digits in the century that ends 50 years from now.
            if year <= currentYear - 50, year + 100 <= currentYear + 50 { year += 100 }
            return DateParts(year: year, month: month, day: day, time: time)
        }
    }

    /// `Sun Nov  6 08:49:37 1994`
    mutating func asctime() -> DateParts? {
        attempt { scanner in
            guard scanner.name(in: HTTPFieldDate.dayNames) != nil, scanner.literal(" "), let month = scanner.month(),
                scanner.literal(" ")
            else { return nil }
            let day: Int
            if scanner.literal(" ") {
                guard let digit = scanner.digits(1) else { return nil }
                day = digit
            } else {
                guard let digits = scanner.digits(2) else { return nil }
                day = digits
            }
            guard scanner.literal(" "), let time = scanner.timeOfDay(), scanner.literal(" "),
                let year = scanner.digits(4), scanner.atEnd
            else { return nil }
            return DateParts(year: year, month: month, day: day, time: time)
        }
    }

    private mutating func attempt(_ form: (inout DateScanner) -> DateParts?) -> DateParts? {
        index = 0
        return form(&self)
    }

    var atEnd: Bool { index == bytes.count }

    /// `HH:MM:SS`
    mutating func timeOfDay() -> (Int, Int, Int)? {
        guard let hour = digits(2), literal(":"), let minute = digits(2), literal(":"), let second = digits(2) else {
            return nil
        }
        return (hour, minute, second)
    }

    /// A month name, as 1–12.
    mutating func month() -> Int? {
        name(in: HTTPFieldDate.monthNames).map { $0 + 1 }
    }

    /// The index of the name (case-sensitive, RFC 9110 §5.6.7) that comes next.
    mutating func name(in names: [String]) -> Int? {
        for (position, name) in names.enumerated() where literal(name) { return position }
        return nil
    }

    /// Exactly `count` ASCII digits.
    mutating func digits(_ count: Int) -> Int? {
        guard bytes.count - index >= count else { return nil }
        var value = 0
        for byte in bytes[index..<index + count] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        index += count
        return value
    }

    /// Consumes `text` if it comes next.
    mutating func literal(_ text: String) -> Bool {
        let expected = text.utf8
        guard bytes.count - index >= expected.count,
            bytes[index..<index + expected.count].elementsEqual(expected)
        else { return false }
        index += expected.count
        return true
    }
}
