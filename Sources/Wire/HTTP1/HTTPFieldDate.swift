/// HTTP-date field values (RFC 9110 §5.6.7) as Unix seconds: formatted as IMF-fixdate, parsed from IMF-fixdate and,
/// as recipients should accept, from the obsolete RFC 850 and asctime forms. For Last-Modified, If-Modified-Since,
/// If-Range and the like; the server's own `Date` line comes from `HTTPDate`.
package enum HTTPFieldDate {
    /// `Sun, 06 Nov 1994 08:49:37 GMT` for `seconds` since the Unix epoch.
    package static func format(unixSeconds seconds: Int) -> String {
        HTTPDate.imfFixdate(unixSeconds: seconds)
    }

    /// The Unix seconds of an HTTP-date in any of its three forms; nil for anything else (RFC 9110 §13.1.3 says an
    /// invalid date in a precondition is ignored). The text must hold the date alone, without surrounding space.
    ///
    /// - Parameter now: Unix seconds of the present, which places an RFC 850 two-digit year: a date more than 50
    ///   years ahead of it means the most recent past year with those digits (RFC 9110 §5.6.7).
    package static func parse(_ text: String, now: Int? = nil) -> Int? {
        var scanner = DateScanner(Array(text.utf8))
        guard let parts = scanner.imfFixdate() ?? scanner.rfc850(now: now ?? Posix.wallClockSeconds())
            ?? scanner.asctime()
        else { return nil }
        return parts.unixSeconds
    }

    static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Days since 1970-01-01 of a proleptic Gregorian date, by the inverse of `HTTPDate.civilDate` (Howard Hinnant's
    /// days_from_civil).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
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
            let currentYear = HTTPDate.civilDate(daysSinceEpoch: now >= 0 ? now / 86_400 : (now - 86_399) / 86_400).year
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
