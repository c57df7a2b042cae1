import FoundationEssentials
import Wire

/// The cookie date algorithm of RFC 6265 §5.1.1: the tokens of any common date format (RFC 1123, RFC 850 with a
/// two-digit year, asctime, and the variants servers send) in any order, UTC.
enum CookieDate {
    /// The date in `text`, or nil when a part is missing or out of range (such an `Expires` is ignored).
    static func parse(_ text: String) -> Date? {
        var time: (hour: Int, minute: Int, second: Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        for token in tokens(of: text) {
            if time == nil, let found = parseTime(token) {
                time = found
            } else if day == nil, let found = leadingDigits(token, from: 1, to: 2) {
                day = found
            } else if month == nil, let found = parseMonth(token) {
                month = found
            } else if year == nil, let found = leadingDigits(token, from: 2, to: 4) {
                year = found
            }
        }
        guard let time, let day, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard year >= 1601, time.hour <= 23, time.minute <= 59, time.second <= 59,
            day >= 1, day <= HTTPFieldDate.daysInMonth(month, year: year)
        else { return nil }
        let days = HTTPFieldDate.daysSinceEpoch(year: year, month: month, day: day)
        let seconds = days * 86_400 + time.hour * 3_600 + time.minute * 60 + time.second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Splits at the delimiters of RFC 6265 §5.1.1 (%x09, %x20-2F, %x3B-40, %x5B-60, %x7B-7E).
    private static func tokens(of text: String) -> [Substring.UTF8View] {
        text.utf8.split { byte in
            byte == 0x09 || (0x20...0x2F).contains(byte) || (0x3B...0x40).contains(byte)
                || (0x5B...0x60).contains(byte) || (0x7B...0x7E).contains(byte)
        }.map { Substring($0).utf8 }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// `from`…`to` digits at the start of the token, followed by nothing or a non-digit.
    private static func leadingDigits(_ token: Substring.UTF8View, from: Int, to: Int) -> Int? {
        var value = 0
        var count = 0
        for byte in token {
            guard isDigit(byte) else { break }
            count += 1
            guard count <= to else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return count >= from ? value : nil
    }

    /// `h:m:s` with one or two digits each, then nothing or a non-digit.
    private static func parseTime(_ token: Substring.UTF8View) -> (hour: Int, minute: Int, second: Int)? {
        let parts = token.split(separator: 0x3A, maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var values: [Int] = []
        for (position, part) in parts.enumerated() {
            var value = 0
            var count = 0
            for byte in part {
                guard isDigit(byte) else { break }
                count += 1
                // Checked before the multiplication: a long run of digits must not overflow.
                guard count <= 2 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            // Only the last part may carry trailing non-digits.
            guard (1...2).contains(count), position == 2 || count == part.count else { return nil }
            values.append(value)
        }
        return (values[0], values[1], values[2])
    }

    /// A month from the token's first three letters.
    private static func parseMonth(_ token: Substring.UTF8View) -> Int? {
        guard token.count >= 3 else { return nil }
        let prefix = String(decoding: token.prefix(3), as: UTF8.self).lowercased()
        return monthNames.firstIndex(of: prefix).map { $0 + 1 }
    }
}
