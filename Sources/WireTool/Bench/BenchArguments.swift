import ArgumentParser
import FoundationEssentials
import Wire

/// Argument values of `wire bench` that need more than a number: durations and header lines.
package enum BenchArguments {
    /// Parses `10s`, `1.5s`, `250ms`, `2m`, `1h` or a bare number of seconds.
    package static func duration(_ text: String) -> Duration? {
        let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("us", 0.000_001), ("s", 1), ("m", 60), ("h", 3600)]
        var number = Substring(text)
        var scale = 1.0
        for unit in units where text.hasSuffix(unit.suffix) {
            number = text.dropLast(unit.suffix.count)
            scale = unit.seconds
            break
        }
        guard let value = Double(number), value.isFinite, value >= 0 else { return nil }
        let nanoseconds = value * scale * 1e9
        guard nanoseconds < 1e18 else { return nil }
        return .nanoseconds(Int64(nanoseconds.rounded()))
    }

    /// Splits `Name: value` at the first colon; the value loses its surrounding blanks.
    package static func header(_ text: String) -> (name: String, value: String)? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = String(text[..<colon])
        let value = text[text.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
        guard !name.isEmpty, !name.contains(" ") else { return nil }
        var trimmed = String(value)
        while trimmed.last == " " || trimmed.last == "\t" { trimmed.removeLast() }
        return (name, trimmed)
    }

    /// Reads an instant as seconds since the Unix epoch: RFC 3339 (`2026-11-30T12:00:00Z`, with a
    /// fraction of a second or an offset such as `+01:00`) or a number of seconds (`1764504000.5`).
    package static func instant(_ text: String) -> Double? {
        if let seconds = Double(text), seconds.isFinite, seconds >= 0, text.allSatisfy({ $0.isNumber || $0 == "." }) {
            return seconds
        }
        for style in [Date.ISO8601FormatStyle(includingFractionalSeconds: true), Date.ISO8601FormatStyle()] {
            if let date = try? style.parse(text) { return date.timeIntervalSince1970 }
        }
        return nil
    }

    /// `1.5 s`, `250 ms`, `40 µs`: a duration in the unit that reads best.
    static func describe(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        if seconds >= 1 { return formatted(seconds, "s") }
        if seconds >= 0.001 { return formatted(seconds * 1e3, "ms") }
        return formatted(seconds * 1e6, "µs")
    }

    private static func formatted(_ value: Double, _ unit: String) -> String {
        let rounded = (value * 100).rounded() / 100
        let text = rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
        return "\(text) \(unit)"
    }
}
