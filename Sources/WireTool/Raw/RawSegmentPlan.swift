/// How `wire request --raw` cuts its bytes into writes, and how long it waits before each.
///
/// The inline syntax (`--split`) and the segments file (`--segments`) share one grammar: items separated by commas
/// or line ends (in a file, `#` starts a comment), each one of
///
/// | item | meaning |
/// |---|---|
/// | `N` | a write starts at byte offset `N` (of the bytes as sent) |
/// | `N@DELAY` | a write starts at `N`, after waiting `DELAY` |
/// | `@DELAY` or `0@DELAY` | wait `DELAY` before the first write |
/// | `*N` or `*N@DELAY` | from the last offset on, a write every `N` bytes (each after `DELAY`): trickling |
///
/// Offsets rise strictly. `DELAY` is a number with a unit: `us`, `ms` or `s` (`250us`, `50ms`, `1.5s`; `0` alone is
/// no wait). A write without its own delay waits `--delay` (default none).
struct RawSegmentPlan: Equatable, Sendable {
    /// One item of the grammar.
    enum Item: Equatable, Sendable {
        /// A write starts at this offset, after the delay (nil: the default delay).
        case offset(Int, delay: Duration?)
        /// From the previous offset to the end, a write every `size` bytes, each after the delay.
        case every(size: Int, delay: Duration?)
    }

    /// One write: the bytes' range and the wait before it.
    struct Write: Equatable, Sendable {
        /// Where the write's bytes are in the payload.
        var range: Range<Int>
        /// How long to wait before writing them.
        var delay: Duration
    }

    /// The items, in order.
    var items: [Item] = []

    /// Parses the grammar; `option` names the source in errors.
    init(parsing text: String, option: String) throws(FetchUsageError) {
        for rawLine in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            for word in line.split(separator: ",") {
                let item = word.trimmingSpaces
                guard !item.isEmpty else { continue }
                items.append(try Self.item(item, option: option))
            }
        }
    }

    /// A plan of the given items.
    init(items: [Item] = []) {
        self.items = items
    }

    private static func item(_ text: Substring, option: String) throws(FetchUsageError) -> Item {
        let parts = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        let delay = parts.count == 2 ? try duration(parts[1], option: option) : nil
        var position = parts[0]
        if position.hasPrefix("*") {
            position = position.dropFirst()
            guard let size = Int(position), size > 0 else {
                throw FetchUsageError(message: "\(option): '*N' needs a positive size, not '\(text)'")
            }
            return .every(size: size, delay: delay)
        }
        if position.isEmpty && delay != nil { return .offset(0, delay: delay) }
        guard let offset = Int(position), offset >= 0 else {
            throw FetchUsageError(message: "\(option): '\(text)' is not N, N@DELAY, @DELAY or *N[@DELAY]")
        }
        return .offset(offset, delay: delay)
    }

    /// `250us`, `50ms`, `1.5s`, or `0`.
    static func duration(_ text: Substring, option: String) throws(FetchUsageError) -> Duration {
        let units: [(String, Double)] = [("us", 1e-6), ("ms", 1e-3), ("s", 1)]
        if text == "0" { return .zero }
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            if let value = Double(text.dropLast(suffix.count)), value.isFinite, value >= 0 {
                return .nanoseconds(Int64((value * scale * 1e9).rounded()))
            }
        }
        throw FetchUsageError(message: "\(option): '\(text)' is not a delay (a number and us, ms or s)")
    }

    /// The writes for a payload of `length` bytes, each without a delay of its own waiting `defaultDelay` (the
    /// first write waits only its own).
    func writes(length: Int, defaultDelay: Duration) throws(FetchUsageError) -> [Write] {
        // Start offsets with their delays; the first write starts at 0.
        var starts: [(offset: Int, delay: Duration?)] = [(0, nil)]
        for item in items {
            switch item {
            case .offset(let offset, let delay):
                if offset == 0 {
                    guard starts.count == 1 else { throw FetchUsageError(message: "offset 0 comes first in a split") }
                    starts[0].delay = delay
                    continue
                }
                guard offset > starts[starts.count - 1].offset else {
                    throw FetchUsageError(message: "split offsets must rise: \(offset) after \(starts[starts.count - 1].offset)")
                }
                guard offset < length else {
                    throw FetchUsageError(message: "split offset \(offset) is not inside the \(length) bytes sent")
                }
                starts.append((offset, delay))
            case .every(let size, let delay):
                var offset = starts[starts.count - 1].offset + size
                while offset < length {
                    starts.append((offset, delay))
                    offset += size
                }
            }
        }
        var writes: [Write] = []
        for (index, start) in starts.enumerated() {
            let end = index + 1 < starts.count ? starts[index + 1].offset : length
            guard end > start.offset else { continue }
            writes.append(Write(range: start.offset..<end, delay: start.delay ?? (index == 0 ? .zero : defaultDelay)))
        }
        return writes
    }

    /// Removes every `mark` from `payload` and returns the bytes with a plan starting a write where each mark was.
    static func cutting(_ payload: [UInt8], at mark: [UInt8]) -> (payload: [UInt8], plan: RawSegmentPlan) {
        guard !mark.isEmpty else { return (payload, RawSegmentPlan()) }
        var output: [UInt8] = []
        output.reserveCapacity(payload.count)
        var items: [Item] = []
        var index = 0
        while index < payload.count {
            if index + mark.count <= payload.count && payload[index..<index + mark.count].elementsEqual(mark) {
                if !output.isEmpty && items.last != .offset(output.count, delay: nil) {
                    items.append(.offset(output.count, delay: nil))
                }
                index += mark.count
            } else {
                output.append(payload[index])
                index += 1
            }
        }
        // A mark at the very end starts no write.
        if case .offset(let last, _)? = items.last, last >= output.count { items.removeLast() }
        return (output, RawSegmentPlan(items: items))
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
