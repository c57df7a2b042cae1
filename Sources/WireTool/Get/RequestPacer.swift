/// Spaces request starts for `--rate`: each start waits until one interval after the previous start (or goes at
/// once when the previous transfer took longer than that).
struct RequestPacer {
    private let interval: Duration?
    private let clock = ContinuousClock()
    private var nextStart: ContinuousClock.Instant?

    /// A pacer allowing one start per `interval`; nil for no limit.
    init(interval: Duration?) { self.interval = interval }

    /// Waits for the next start's turn and books the one after it.
    mutating func waitForTurn() async {
        guard let interval else { return }
        if let nextStart, clock.now < nextStart {
            // Cancellation only shortens the wait; the transfer that follows then fails as cancelled.
            try? await clock.sleep(until: nextStart)
        }
        nextStart = clock.now + interval
    }
}
