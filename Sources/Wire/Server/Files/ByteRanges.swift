/// Byte ranges of a `Range: bytes=…` field (RFC 9110 §14.1.2).
package enum ByteRanges: Equatable {
    /// Not a bytes range we understand: serve the whole file (RFC 9110 §14.2 lets a server ignore Range).
    case ignore
    /// No range overlaps the file: 416.
    case unsatisfiable
    /// The ranges to send, clipped to the file, in request order.
    case satisfiable([ClosedRange<Int>])

    /// At most this many ranges per request; more is a denial-of-service shape (RFC 9110 §14.2), served whole.
    package static let maxRanges = 16

    /// The ranges `field` asks of a file of `size` bytes. Several ranges that together ask for more bytes than the
    /// file holds must overlap (`bytes=0-,0-,0-…`): answered in parts they would send the file up to `maxRanges`
    /// times for one small request, so they are ignored and the file is served once, whole (RFC 9110 §14.2 lets a
    /// server ignore overlapping ranges).
    package static func parse(_ field: String, size: Int) -> ByteRanges {
        let trimmed = field.trimmingOWS
        guard trimmed.lowercased().hasPrefix("bytes=") else { return .ignore }
        let specs = trimmed.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false)
        guard !specs.isEmpty, specs.count <= maxRanges else { return .ignore }
        var ranges: [ClosedRange<Int>] = []
        for spec in specs {
            let parts = spec.trimmingOWS.split(
                separator: "-", maxSplits: 1,
                omittingEmptySubsequences: false)
            guard parts.count == 2 else { return .ignore }
            let first = parts[0], last = parts[1]
            guard first.allSatisfy(\.isASCIIDigitCharacter), last.allSatisfy(\.isASCIIDigitCharacter) else {
                return .ignore
            }
            if first.isEmpty {
                // suffix-range: the last N bytes.
                guard let suffix = Int(last) else { return .ignore }
                if suffix > 0 && size > 0 { ranges.append(max(0, size - suffix)...(size - 1)) }
                continue
            }
            guard let start = Int(first) else { return .ignore }
            let end: Int
            if last.isEmpty {
                end = size - 1
            } else {
                guard let value = Int(last), value >= start else { return .ignore }
                end = min(value, size - 1)
            }
            if start < size { ranges.append(start...end) }
        }
        guard !ranges.isEmpty else { return .unsatisfiable }
        // Each range is clipped to the file, so the sum cannot overflow (at most `maxRanges` times the size).
        guard ranges.count == 1 || ranges.reduce(0, { $0 + $1.count }) <= size else { return .ignore }
        return .satisfiable(ranges)
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
