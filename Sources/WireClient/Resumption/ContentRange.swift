/// A `Content-Range` field value (RFC 9110 §14.4): `bytes first-last/complete`, `bytes first-last/*`, or the
/// unsatisfied form of a 416, `bytes */complete`.
///
/// Parsing is total: any text a peer sends gives a value or nil, never a trap (numbers that overflow `Int64`, a last
/// position before the first, or one at or past the complete length are nil).
package struct ContentRange: Sendable, Hashable, CustomStringConvertible {
    /// The bytes the body carries, first and last position inclusive; nil for the unsatisfied form (`bytes */N`).
    package var range: ClosedRange<Int64>?
    /// The representation's whole length; nil when the server wrote `*` (unknown).
    package var completeLength: Int64?

    /// A satisfied range: `first...last` of `completeLength` bytes (nil: unknown).
    package init(range: ClosedRange<Int64>, completeLength: Int64?) {
        self.range = range
        self.completeLength = completeLength
    }

    /// The unsatisfied form of a 416: the representation is `completeLength` bytes long.
    package init(unsatisfiedOf completeLength: Int64) {
        range = nil
        self.completeLength = completeLength
    }

    /// Parses a field value; nil unless it is one of the three forms with the `bytes` unit (case-insensitive) and
    /// consistent numbers. Whitespace around the value is ignored.
    package init?(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        let unit = Array("bytes ".utf8)
        guard bytes.count > unit.count,
            zip(bytes.prefix(unit.count), unit).allSatisfy({ Self.lowercased($0) == $1 })
        else { return nil }
        bytes = bytes.dropFirst(unit.count)
        guard let slash = bytes.firstIndex(of: 0x2F) else { return nil }
        let rangePart = bytes[..<slash]
        let lengthPart = bytes[bytes.index(after: slash)...]
        let complete: Int64?
        if lengthPart.elementsEqual([0x2A]) {
            complete = nil
        } else {
            guard let length = Self.number(lengthPart) else { return nil }
            complete = length
        }
        if rangePart.elementsEqual([0x2A]) {
            // `bytes */*` says nothing at all.
            guard let complete else { return nil }
            self.init(unsatisfiedOf: complete)
            return
        }
        guard let dash = rangePart.firstIndex(of: 0x2D),
            let first = Self.number(rangePart[..<dash]),
            let last = Self.number(rangePart[rangePart.index(after: dash)...]),
            first <= last
        else { return nil }
        if let complete, last >= complete { return nil }
        self.init(range: first...last, completeLength: complete)
    }

    /// The field value, as a server writes it.
    package var description: String {
        let length = completeLength.map { String($0) } ?? "*"
        guard let range else { return "bytes */\(length)" }
        return "bytes \(range.lowerBound)-\(range.upperBound)/\(length)"
    }

    /// One or more ASCII digits as a non-negative `Int64`; nil for anything else or an overflow.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int64? {
        guard !digits.isEmpty else { return nil }
        var value: Int64 = 0
        for digit in digits {
            guard digit >= 0x30, digit <= 0x39 else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(digit - 0x30))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
    }
}
