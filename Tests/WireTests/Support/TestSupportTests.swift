import Testing

/// The helpers every network test waits through: a wait that runs out fails its own test and leaves the run going.
@Suite struct TestSupportTests {
    /// `withTimeout` cancels the operation it gives up on; an `AsyncStreamBox` waited on there then sees its stream end
    /// (a cancelled iterator gives nil). It used to trap on that ("stream finished"), ending every test of the run
    /// under a sanitizer that slowed one test past its limit.
    @Test func aStreamWaitCutShortByItsTimeoutThrowsInsteadOfTrapping() async throws {
        let box = AsyncStreamBox<Int>()
        await #expect(throws: TestTimeout.self) {
            try await withTimeout(seconds: 0.05) { try await box.next() }
        }
    }

    @Test func aCancelledStreamWaitThrowsCancellation() async throws {
        let box = AsyncStreamBox<Int>()
        let waiter = Task { try await box.next() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
    }
}
