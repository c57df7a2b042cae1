import FoundationEssentials
import Wire

/// A `Retry-After` field value (RFC 9110 §10.2.3): delta-seconds or an HTTP-date.
public enum RetryAfter: Sendable, Hashable {
    /// Wait this many seconds.
    case seconds(Int)
    /// Wait until this time (Unix seconds).
    case date(unixSeconds: Int)

    /// The longest delta-seconds kept; longer values saturate here (about 31 million years), so no digit string
    /// overflows.
    static let longestSeconds = 1_000_000_000_000_000

    /// Parses a field value; nil for anything that is neither form (an empty value, a sign, a fraction, a bad date).
    /// - Parameter text: The field value; surrounding spaces and tabs are ignored.
    public init?(_ text: String) {
        let trimmed = text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
        let value = String(trimmed)
        guard !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // Digits only: delta-seconds, saturated rather than overflowing.
            self = .seconds(value.utf8.count > 16 ? Self.longestSeconds : min(Int(value)!, Self.longestSeconds))
        } else if let seconds = HTTPFieldDate.parse(value) {
            self = .date(unixSeconds: seconds)
        } else {
            return nil
        }
    }

    /// How long to wait from `now`: never negative (a date in the past means at once).
    /// - Parameter now: The present (wall-clock time).
    public func delay(from now: Date) -> Duration {
        switch self {
        case .seconds(let seconds):
            return .seconds(seconds)
        case .date(let unixSeconds):
            let interval = Double(unixSeconds) - now.timeIntervalSince1970
            return interval > 0 ? .seconds(interval) : .zero
        }
    }
}
