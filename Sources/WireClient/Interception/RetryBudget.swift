/// A limit on retries as a share of requests over a sliding window, so that a failing backend is not stormed by
/// retries (Finagle's retry budget): at any moment the retries made in the last `window` may be at most
/// `minimumRetries` plus `ratio` times the requests made in it.
///
/// A value: time comes in as an argument (`now`, a monotonic reading from any fixed origin), so tests move it by
/// hand. Counts are kept in ten slots per window, so memory is fixed however many requests pass.
public struct RetryBudget: Sendable, Equatable {
    /// The share of requests that may be retried (0.2: one retry per five requests).
    public let ratio: Double
    /// Retries allowed in any window whatever the traffic, so a quiet client can still retry.
    public let minimumRetries: Int
    /// How far back requests and retries count.
    public let window: Duration

    private struct Slot: Sendable, Equatable {
        var index: Int64
        var requests = 0
        var retries = 0
    }

    private static let slotsPerWindow: Int64 = 10
    private var slots: [Slot] = []

    /// A budget.
    /// - Parameters:
    ///   - ratio: The share of requests that may be retried, 0 or more; 0.2 by default.
    ///   - minimumRetries: Retries always allowed per window, 0 or more; 10 by default.
    ///   - window: How far back counts reach, more than zero; 10 seconds by default.
    public init(ratio: Double = 0.2, minimumRetries: Int = 10, window: Duration = .seconds(10)) {
        precondition(ratio >= 0 && ratio.isFinite, "a retry budget's ratio is a finite number, 0 or more")
        precondition(minimumRetries >= 0, "a retry budget's minimum is 0 or more")
        precondition(window > .zero, "a retry budget's window is longer than zero")
        self.ratio = ratio
        self.minimumRetries = minimumRetries
        self.window = window
    }

    /// Counts a request sent at `now` (every attempt counts, retries included).
    /// - Parameter now: The present, on the budget's monotonic timeline.
    public mutating func recordRequest(at now: Duration) {
        update(at: now) { $0.requests += 1 }
    }

    /// How many more retries the budget allows at `now`.
    /// - Parameter now: The present, on the budget's monotonic timeline.
    public func available(at now: Duration) -> Int {
        let oldest = slotIndex(now) - Self.slotsPerWindow + 1
        var requests = 0
        var retries = 0
        for slot in slots where slot.index >= oldest {
            requests += slot.requests
            retries += slot.retries
        }
        let allowed = Double(minimumRetries) + ratio * Double(requests)
        let whole = allowed >= Double(Int.max) ? Int.max : Int(allowed.rounded(.down))
        return max(0, whole - retries)
    }

    /// Takes one retry from the budget if it allows one.
    /// - Parameter now: The present, on the budget's monotonic timeline.
    /// - Returns: Whether the retry may go ahead.
    public mutating func withdraw(at now: Duration) -> Bool {
        guard available(at: now) > 0 else { return false }
        update(at: now) { $0.retries += 1 }
        return true
    }

    private func slotIndex(_ now: Duration) -> Int64 {
        let width = window / Int(Self.slotsPerWindow)
        return Int64((now / width).rounded(.down))
    }

    private mutating func update(at now: Duration, _ change: (inout Slot) -> Void) {
        let index = slotIndex(now)
        slots.removeAll { $0.index <= index - Self.slotsPerWindow }
        if let last = slots.indices.last, slots[last].index == index {
            change(&slots[last])
        } else {
            var slot = Slot(index: index)
            change(&slot)
            slots.append(slot)
        }
    }
}
