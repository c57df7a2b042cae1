import Testing

/// One test at a time across every test target of the package, for tests that open sockets, threads or files.
///
/// All test targets run in one process, and Swift Testing runs suites in parallel. WireTests' `IOSuite` compares the
/// process's descriptor count before and after each test, so a WireClient test opening sockets at the same moment
/// would look like a leak (or hide one). Suites that do I/O carry `.exclusiveIO`; each of their tests waits for the
/// tests of the others to finish. Tests without I/O (codecs, state machines, serializers) stay parallel.
public struct ExclusiveIOTrait: SuiteTrait, TestTrait, TestScoping {
    /// Applies to every test of a suite that carries it, nested suites included.
    public var isRecursive: Bool { true }

    /// Runs one test while holding the process-wide I/O gate; a suite passes through (its tests take the gate).
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard !test.isSuite else {
            try await function()
            return
        }
        await IOGate.shared.acquire()
        do {
            try await function()
        } catch {
            await IOGate.shared.release()
            throw error
        }
        await IOGate.shared.release()
    }
}

extension Trait where Self == ExclusiveIOTrait {
    /// This suite's (or test's) tests run alone among the package's I/O tests.
    public static var exclusiveIO: ExclusiveIOTrait { ExclusiveIOTrait() }
}

/// A first-come, first-served asynchronous mutex: waiting tests suspend, they do not block a thread.
actor IOGate {
    static let shared = IOGate()

    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty {
            held = false
        } else {
            waiters.removeFirst().resume()
        }
    }
}
