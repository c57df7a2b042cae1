/// Reads a fuzz input as a script of events: one byte picks the next event, and the bytes after it give that event's
/// arguments. The state-machine targets use it, so a crashing input replays exactly the same sequence.
public struct EventScript {
    private let bytes: [UInt8]
    private var index = 0

    /// A script over `bytes`.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { index >= bytes.count }

    /// The next byte, or 0 past the end.
    public mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    /// A number in `0..<count` from the next byte.
    public mutating func choice(_ count: Int) -> Int {
        Int(byte()) % count
    }

    /// A flag from the next byte.
    public mutating func flag() -> Bool {
        byte() & 1 == 1
    }

    /// Up to `count` next bytes (fewer at the end).
    public mutating func take(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, index + count)
        defer { index = end }
        return Array(bytes[index..<end])
    }
}

/// Checks one invariant of a state machine under fuzzing; reports the broken property and the input on failure.
public struct InvariantChecker {
    /// The whole input, printed when a property fails.
    public let input: [UInt8]
    /// The events so far, newest last, printed when a property fails.
    public var trace: [String] = []

    /// A checker for one input.
    public init(input: [UInt8]) {
        self.input = input
    }

    /// Records the event about to be applied.
    public mutating func note(_ event: String) {
        trace.append(event)
    }

    /// Fails the run with `message`, the trace and the input when `condition` is false.
    public func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        guard !condition else { return }
        propertyFailed("\(message())\nevents: \(trace.suffix(40).joined(separator: ", "))", input: input)
    }
}
