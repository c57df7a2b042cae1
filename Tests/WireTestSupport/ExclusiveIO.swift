import Glibc
import Testing

/// A test that must be the only I/O test running: one that compares the process's descriptors before and after
/// (`/proc/self/fd`), measures its memory, changes the umask or counts threads.
///
/// All test targets run in one process, and Swift Testing runs suites in parallel, so a socket another test opens at
/// the same moment would look like a leak (or hide one). Such a test carries `.exclusiveIO`: it waits until no other
/// I/O test runs, and none starts until it ends. Tests that open sockets, threads or files without looking at the
/// process as a whole carry `.sharedIO` and run a few at a time beside each other. Tests without I/O (codecs, state
/// machines, serializers) carry neither and stay fully parallel.
///
/// Both traits bound each test's run in time, counted from the moment it has the gate (stretched under a sanitizer by
/// `Sanitizer.timeScale`). Swift Testing's `.timeLimit` would count the wait in the gate's queue too, and every I/O
/// test of the run queues at its start, so I/O suites carry their limit here instead.
public struct ExclusiveIOTrait: SuiteTrait, TestTrait, TestScoping {
    /// The longest one test may run once it has the gate.
    public let limit: Duration

    /// Applies to every test of a suite that carries it, nested suites included.
    public var isRecursive: Bool { true }

    /// Runs one test while holding the whole I/O gate; a suite passes through (its tests take the gate).
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard !test.isSuite, IOGate.heldHere == nil else {
            try await function()
            return
        }
        try await IOGate.shared.run(.exclusive) {
            try await timed(test, "exclusive") { try await runWithinLimit(limit, function) }
        }
    }
}

/// A test that does I/O (sockets, threads, files, child processes) but looks only at its own: it may run beside other
/// `.sharedIO` tests, at most `IOGate.sharedWidth` at once, and never beside an `.exclusiveIO` one.
public struct SharedIOTrait: SuiteTrait, TestTrait, TestScoping {
    /// The longest one test may run once it has its place.
    public let limit: Duration

    /// Applies to every test of a suite that carries it, nested suites included.
    public var isRecursive: Bool { true }

    /// Runs one test while holding one share of the I/O gate; a test that is also `.exclusiveIO` (its own trait or a
    /// nested suite's) leaves the gate to that trait.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard !test.isSuite, IOGate.heldHere == nil, !test.traits.contains(where: { $0 is ExclusiveIOTrait }) else {
            try await function()
            return
        }
        try await IOGate.shared.run(.shared) { try await timed(test, "shared") { try await runWithinLimit(limit, function) } }
    }
}

/// Runs `function`, and when `WIRE_IO_TIMES` names a file, appends how long it held the gate: `seconds mode test` per
/// line, so that the tests that hold the run up can be found (`sort -rn`).
func timed(_ test: Test, _ mode: String, _ function: @Sendable () async throws -> Void) async throws {
    guard let path = getenv("WIRE_IO_TIMES").map({ String(cString: $0) }), !path.isEmpty else {
        return try await function()
    }
    let start = ContinuousClock.now
    defer {
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let line = "\(seconds) \(mode) \(test.id)\n"
        if let file = fopen(path, "a") {
            fputs(line, file)
            fclose(file)
        }
    }
    try await function()
}

/// Runs `function`, recording an issue and cancelling it when it runs longer than `limit` (times the sanitizer's
/// slowdown), as Swift Testing's `.timeLimit` does.
func runWithinLimit(_ limit: Duration, _ function: @Sendable () async throws -> Void) async throws {
    let scaled = limit * Sanitizer.timeScale
    // The task group ends before this function returns, so `function` does not really escape.
    try await withoutActuallyEscaping(function) { function in
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await function()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: scaled)
                return false
            }
            defer { group.cancelAll() }
            let finished = try await group.next() ?? true
            if !finished, !Task.isCancelled {
                Issue.record("Time limit was exceeded: \(scaled) after the test had the I/O gate")
            }
        }
    }
}

extension Trait where Self == ExclusiveIOTrait {
    /// This suite's (or test's) tests run alone among the package's I/O tests, each for at most two minutes.
    public static var exclusiveIO: ExclusiveIOTrait { ExclusiveIOTrait(limit: .seconds(120)) }

    /// This suite's (or test's) tests run alone among the package's I/O tests, each for at most `minutes`.
    public static func exclusiveIO(minutes: Int) -> ExclusiveIOTrait { ExclusiveIOTrait(limit: .seconds(60 * minutes)) }
}

extension Trait where Self == SharedIOTrait {
    /// This suite's (or test's) tests run beside a few other I/O tests, never beside an exclusive one, each for at
    /// most two minutes.
    public static var sharedIO: SharedIOTrait { SharedIOTrait(limit: .seconds(120)) }

    /// This suite's (or test's) tests run beside a few other I/O tests, never beside an exclusive one, each for at
    /// most `minutes`.
    public static func sharedIO(minutes: Int) -> SharedIOTrait { SharedIOTrait(limit: .seconds(60 * minutes)) }
}

/// A first-come, first-served gate with `sharedWidth` places: a shared test takes one, an exclusive test all of them.
/// Waiting tests suspend, they do not block a thread; an exclusive test at the head of the queue holds back the shared
/// ones behind it, so it is not starved.
actor IOGate {
    /// How the running test holds the gate.
    enum Mode: Sendable {
        case shared, exclusive
    }

    static let shared = IOGate()

    /// How many `.sharedIO` tests run at once: twice the processors, at least four, or `WIRE_IO_WIDTH`. Most of an I/O
    /// test's time is spent waiting for a peer process or a timer, so a few at once keep the machine busy without
    /// starving one of them.
    static let sharedWidth =
        getenv("WIRE_IO_WIDTH").flatMap { Int(String(cString: $0)) }.map { max(1, $0) }
        ?? max(4, 2 * Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))

    /// The mode the current task's test holds, so that a nested trait does not take the gate twice.
    @TaskLocal static var heldHere: Mode?

    private var inUse = 0
    private var waiters: [(places: Int, first: Bool, continuation: CheckedContinuation<Void, Never>)] = []

    nonisolated func run<T: Sendable>(_ mode: Mode, _ function: @Sendable () async throws -> T) async throws -> T {
        let places = mode == .exclusive ? Self.sharedWidth : 1
        await acquire(places)
        do {
            let value = try await Self.$heldHere.withValue(mode) { try await function() }
            await release(places)
            return value
        } catch {
            await release(places)
            throw error
        }
    }

    /// Runs `function` alone from a test that holds one shared place: the place is given back while it waits, it waits
    /// ahead of every test that has not started (they would wait on it otherwise, and its time limit is running),
    /// and it keeps one place when it is done, so that it never queues twice.
    nonisolated func upgrade<T: Sendable>(_ function: @Sendable () async throws -> T) async throws -> T {
        await release(1)
        await acquire(Self.sharedWidth, first: true)
        do {
            let value = try await Self.$heldHere.withValue(.exclusive) { try await function() }
            await release(Self.sharedWidth - 1)
            return value
        } catch {
            await release(Self.sharedWidth - 1)
            throw error
        }
    }

    private func acquire(_ places: Int, first: Bool = false) async {
        if waiters.isEmpty, inUse + places <= Self.sharedWidth {
            inUse += places
            return
        }
        await withCheckedContinuation { continuation in
            let position = first ? (waiters.firstIndex { !$0.first } ?? waiters.endIndex) : waiters.endIndex
            waiters.insert((places, first, continuation), at: position)
        }
    }

    private func release(_ places: Int) {
        inUse -= places
        while let next = waiters.first, inUse + next.places <= Self.sharedWidth {
            waiters.removeFirst()
            inUse += next.places
            next.continuation.resume()
        }
    }
}

/// Runs `body` as the only I/O test, from inside a test that may hold a shared place (a helper that compares the
/// process's descriptors around its work, called by `.sharedIO` tests): the shared place is given back while waiting,
/// so two such helpers cannot wait on each other, and taken again afterwards.
public func withExclusiveIO<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
    switch IOGate.heldHere {
    case .exclusive:
        return try await body()
    case .shared:
        return try await IOGate.shared.upgrade(body)
    case nil:
        return try await IOGate.shared.run(.exclusive, body)
    }
}
