/// Polls `condition` every millisecond until it holds or `timeout` passes; returns whether it held.
/// For states that announce nothing (a thread ending, a port closing, a server's log): a deadline, never a bare sleep.
/// Under a sanitizer the deadline grows by `Sanitizer.timeScale`.
public func eventually(within timeout: Duration = .seconds(5), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout * Sanitizer.timeScale
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return try await condition()
}
