/// Polls `condition` every millisecond until it holds or `seconds` pass; returns whether it held.
/// For states that announce nothing (a thread ending, a port closing): a deadline, never a bare sleep.
func eventually(within seconds: Double = 5, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return try await condition()
}
