import Foundation
import Glibc
import Synchronization
import Testing
import WireTestSupport
@_spi(Locking) import Wire

/// Tests that open sockets, threads, files or child processes. They run a few at a time beside the package's other I/O
/// tests (`.sharedIO`); a suite or test inside that compares the process's descriptors from `/proc/self/fd`, measures
/// its memory or changes the umask carries `.exclusiveIO` and runs alone.
@Suite(.sharedIO)
struct IOSuite {}

/// The process's open descriptors at one moment: each number with what it refers to (`socket:[inode]`, a path,
/// `anon_inode:[eventpoll]`), as `/proc/self/fd` shows them.
struct DescriptorTable: Equatable, Sendable {
    let entries: [Int32: String]

    /// The descriptors open now that were not open, as the same file, when this table was taken, as sorted
    /// "number → target" lines: empty when the code under test left nothing open. Descriptors that something else
    /// closed meanwhile (a previous test's loop finishing its shutdown on its own thread, which a sanitizer slows
    /// down) do not count, as a bare count would; a leaked socket has a new inode, so a reused number still shows.
    ///
    /// A run loop Foundation starts on a thread of its own (it watches child processes with them, on threads it picks)
    /// holds an eventfd, an epoll instance and a timerfd for the thread's life. Wire never opens a timerfd, so each
    /// new timerfd stands for such a run loop, and one new eventfd and one new epoll instance go with it; a leaked
    /// Wire loop (an epoll instance and an eventfd, no timerfd) still shows.
    func newlyOpened() -> [String] {
        var opened = openDescriptors().entries.filter { entries[$0.key] != $0.value }.sorted { $0.key < $1.key }
        let runLoops = opened.filter { $0.value == "anon_inode:[timerfd]" }.count
        var (eventFDs, epolls) = (runLoops, runLoops)
        opened.removeAll { $0.value == "anon_inode:[timerfd]" }
        opened.removeAll { entry in
            if entry.value == "anon_inode:[eventfd]", eventFDs > 0 {
                eventFDs -= 1
                return true
            }
            if entry.value == "anon_inode:[eventpoll]", epolls > 0 {
                epolls -= 1
                return true
            }
            return false
        }
        return opened.map { "\($0.key) → \($0.value)" }
    }

    /// `newlyOpened()` once it has settled: read again (for at most `timeout`) until it is empty, and returned as last
    /// read. For tests that run child processes: Foundation's `Process` closes the socket pair it watches a child with
    /// on its own thread, after it has called the termination handler, so a test that has just seen its child exit
    /// can find that socket still open for a moment. A leaked descriptor stays open and is returned.
    func newlyOpenedOnceSettled(within timeout: Duration = .seconds(2)) async -> [String] {
        _ = await eventually(within: timeout) { newlyOpened().isEmpty }
        return newlyOpened()
    }
}

/// This process's open descriptors, without the directory stream that lists them.
func openDescriptors() -> DescriptorTable {
    guard let directory = opendir("/proc/self/fd") else { return DescriptorTable(entries: [:]) }
    defer { closedir(directory) }
    let own = dirfd(directory)
    var entries: [Int32: String] = [:]
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard let number = Int32(name), number != own else { continue }
        var target = [CChar](repeating: 0, count: 256)
        let length = readlink("/proc/self/fd/\(name)", &target, target.count - 1)
        // Gone between the listing and the look: another thread's descriptor that closed meanwhile (a suite that does
        // not compare descriptors may run beside one that does). A leaked descriptor stays, so it is never skipped.
        if length < 0 && errno == ENOENT { continue }
        entries[number] = length > 0 ? String(decoding: target[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
    }
    return DescriptorTable(entries: entries)
}

/// The descriptors to compare against after a test: first lets the Swift runtime open the
/// descriptors it opens lazily on first use of a timer (libdispatch's), which would otherwise
/// show up as a "leak" in whichever test happens to run first.
func descriptorBaseline() async -> DescriptorTable {
    processMachineryStarted.wait()
    // A previous test's descriptors may still be closing on another thread (a child process's
    // pipes, a loop being torn down): wait until the table holds still, for at most 200 ms.
    var table = openDescriptors()
    for _ in 0..<200 {
        try? await Task.sleep(for: .milliseconds(1))
        let next = openDescriptors()
        if next == table { return table }
        table = next
    }
    return table
}

/// Foundation's `Process` starts a thread with a run loop of its own on its first launch (an eventfd, an epoll
/// instance, a timerfd and a socket pair that live as long as the process): launched once here, before the first
/// baseline, so that a test that happens to run the first child process of the run (a sanitizer's run of a few suites,
/// a filtered run) does not count them as its leak.
private let processMachineryStarted = ProcessMachineryWarmUp()

private final class ProcessMachineryWarmUp: Sendable {
    init() {
        let process = Foundation.Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        if (try? process.run()) != nil { process.waitUntilExit() }
    }

    /// Does nothing: touching the global is what runs `init` once.
    func wait() {}
}

/// Runs `body` with a fresh loop and shuts the loop down afterwards.
func withLoop<T>(_ body: (EventLoop) async throws -> T) async throws -> T {
    let loop = try EventLoop(name: "test-loop")
    do {
        let result = try await body(loop)
        await loop.shutdownGracefully()
        return result
    } catch {
        await loop.shutdownGracefully()
        throw error
    }
}

/// A failure of `withTimeout`: the operation did not finish in time.
struct TestTimeout: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "operation did not finish within \(seconds)s" }
}

/// Runs `operation`, failing with `TestTimeout` if it takes longer than `seconds`: every test
/// that waits on the network waits through this, so none can hang. The operation runs in its
/// own task, cancelled (and abandoned, not awaited) on timeout: a task group would wait for a
/// child that ignores cancellation, which is exactly the bug a timeout must survive.
func withTimeout<T: Sendable>(
    seconds: Double = 10,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let outcome = TimeoutOutcome<T>()
    let work = Task { try await operation() }
    // A sanitizer slows the code several times over: the limit grows with it (the error still names `seconds`).
    let limit = seconds * Sanitizer.timeScale
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            outcome.continuation.withLock { $0 = continuation }
            Task {
                let result = await work.result
                outcome.continuation.withLock { $0.take() }?.resume(with: result)
            }
            Task {
                try? await Task.sleep(for: .milliseconds(Int(limit * 1000)))
                if let pending = outcome.continuation.withLock({ $0.take() }) {
                    work.cancel()
                    pending.resume(throwing: TestTimeout(seconds: seconds))
                }
            }
        }
    } onCancel: {
        work.cancel()
    }
}

/// The one continuation `withTimeout` resumes, by whichever finishes first.
final class TimeoutOutcome<T: Sendable>: Sendable {
    let continuation = Lock<CheckedContinuation<T, any Error>?>(nil)
}

/// A stream delegate that records what happens and lets a test wait for a condition.
final class RecordingDelegate: ByteStreamDelegate {
    var received: [UInt8] = []
    var receivedCount = 0
    var keepsBytes = true
    var reachedEnd = false
    var closed = false
    var closeError: (any Error)?
    var drained = 0
    /// How many reads' bytes to keep as slices of the stream's buffer (the newest), as a body consumer that lags
    /// behind the socket does; 0 keeps none.
    var slicesHeld = 0
    private(set) var heldSlices: [ByteBuffer] = []
    /// A body of this many bytes in all: after each read the stream is told how many are still due
    /// (`expectAtLeast`), as a connection does with a Content-Length body.
    var expectedTotal: Int?
    /// The stream's receive low watermark after each read, the highest seen.
    private(set) var highestWatermark = 1
    /// How many reads delivered bytes, and the most one delivered.
    private(set) var reads = 0
    private(set) var largestRead = 0
    private var waiters: [(condition: (RecordingDelegate) -> Bool, resume: () -> Void)] = []

    func stream(_ stream: any ByteStream, didRead buffer: inout ByteBuffer) {
        receivedCount += buffer.readableBytes
        reads += 1
        largestRead = max(largestRead, buffer.readableBytes)
        if slicesHeld > 0 {
            heldSlices.append(buffer.slice(at: 0, length: buffer.readableBytes))
            if heldSlices.count > slicesHeld { heldSlices.removeFirst() }
        }
        if keepsBytes { received += buffer.readableBytesArray }
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        if let expectedTotal {
            stream.expectAtLeast(max(0, expectedTotal - receivedCount))
            if let socketStream = stream as? SocketStream {
                highestWatermark = max(highestWatermark, socketStream.receiveLowWatermark)
            }
        }
        check()
    }

    func streamDidReachEnd(_ stream: any ByteStream) {
        reachedEnd = true
        check()
    }

    func streamDidDrainWrites(_ stream: any ByteStream) {
        drained += 1
        check()
    }

    func stream(_ stream: any ByteStream, didCloseWith error: (any Error)?) {
        closed = true
        closeError = error
        check()
    }

    /// Calls `resume` (on the loop) once `condition` holds.
    func whenever(_ condition: @escaping (RecordingDelegate) -> Bool, resume: @escaping () -> Void) {
        if condition(self) { resume() } else { waiters.append((condition, resume)) }
    }

    private func check() {
        var remaining: [(condition: (RecordingDelegate) -> Bool, resume: () -> Void)] = []
        for waiter in waiters {
            if waiter.condition(self) { waiter.resume() } else { remaining.append(waiter) }
        }
        waiters = remaining
    }
}

/// A connected pair: a stream accepted by a listener and a stream that connected to it.
struct StreamPair: Sendable {
    let client: LoopBound<SocketStream>
    let clientDelegate: LoopBound<RecordingDelegate>
    let server: LoopBound<SocketStream>
    let serverDelegate: LoopBound<RecordingDelegate>
    let listener: LoopBound<SocketListener>

    /// Waits until the condition on one side's delegate holds.
    static func wait(
        _ delegate: LoopBound<RecordingDelegate>,
        until condition: @escaping @Sendable (RecordingDelegate) -> Bool
    ) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            delegate.loop.execute { delegate.value.whenever(condition) { continuation.resume() } }
        }
    }

    /// Closes everything still open.
    func close() async throws {
        try await client.loop.submit {
            client.value.close(error: nil)
            server.value.close(error: nil)
            listener.value.close()
        }
    }
}

/// Listens on `address` (port 0 for an ephemeral port), connects to it through the Connector,
/// and returns both ends wrapped as streams with recording delegates.
func makeStreamPair(listeningOn address: SocketAddress, loop: EventLoop) async throws -> StreamPair {
    let accepted = AsyncStreamBox<LoopBound<SocketStream>>()
    let (listener, serverDelegate) = try await loop.submit {
        () throws -> (LoopBound<SocketListener>, LoopBound<RecordingDelegate>) in
        let delegate = RecordingDelegate()
        let listener = try SocketListener(
            bindingTo: address, on: loop,
            onAccept: { connection in
                do {
                    let stream = try SocketStream(accepted: connection, on: loop)
                    stream.delegate = delegate
                    // Keep the delegate alive as long as the stream is referenced by the test.
                    accepted.yield(LoopBound(stream, loop: loop))
                } catch {
                    Issue.record("accepted socket could not be registered: \(error)")
                }
            })
        return (LoopBound(listener, loop: loop), LoopBound(delegate, loop: loop))
    }
    let bound = try await loop.submit { listener.value.localAddress }
    let socket: LoopBound<Socket>
    if case .unix = bound.storage {
        socket = try await Connector.connect(
            to: [bound], host: bound.host, port: nil, on: loop,
            deadline: .after(.seconds(5)), timeout: .seconds(5))
    } else {
        socket = try await Connector.connect(host: bound.host, port: bound.port!, on: loop, timeout: .seconds(5))
    }
    let (client, clientDelegate) = try await loop.submit { () throws -> (LoopBound<SocketStream>, LoopBound<RecordingDelegate>) in
        let stream = try SocketStream(socket: socket.value, on: loop)
        let delegate = RecordingDelegate()
        stream.delegate = delegate
        return (LoopBound(stream, loop: loop), LoopBound(delegate, loop: loop))
    }
    let server = try await accepted.next()
    return StreamPair(
        client: client, clientDelegate: clientDelegate, server: server, serverDelegate: serverDelegate, listener: listener)
}

/// A one-shot hand-over of values from a loop callback to an awaiting test.
final class AsyncStreamBox<Value: Sendable>: Sendable {
    private let stream: AsyncStream<Value>
    private let continuation: AsyncStream<Value>.Continuation

    init() { (stream, continuation) = AsyncStream.makeStream() }

    func yield(_ value: Value) { continuation.yield(value) }

    /// The next value. A stream's iterator gives nil when the waiting task is cancelled (a `withTimeout` that ran
    /// out): that throws, failing the one test, where a trap would end the whole run.
    func next() async throws -> Value {
        var iterator = stream.makeAsyncIterator()
        guard let value = await iterator.next() else {
            try Task.checkCancellation()
            throw StreamEnded()
        }
        return value
    }
}

/// An `AsyncStreamBox` ended with no value for the waiting test.
struct StreamEnded: Error, CustomStringConvertible {
    var description: String { "the stream ended before a value came" }
}
