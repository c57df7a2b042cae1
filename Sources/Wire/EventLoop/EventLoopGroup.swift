import Synchronization

/// A fixed set of event loops, one thread each; connections are spread over them round-robin.
///
/// ```swift
/// let group = try EventLoopGroup()          // one loop per core
/// defer { group.shutdown() }
/// let loop = group.next()
/// ```
///
/// A group released without `shutdown()` stops its loops itself (their threads end on their own, unjoined:
/// the last reference may be dropped on one of them) and says so once on standard error.
public final class EventLoopGroup: Sendable {
    /// The loops, in creation order.
    public let loops: [EventLoop]
    private let cursor = Atomic<Int>(0)
    /// Whether the group started its loops (and so stops them); false for a view of loops another group owns.
    private let ownsLoops: Bool

    /// Starts `loopCount` loops (default: the number of online cores).
    ///
    /// - Throws: `ConfigurationError` when `loopCount` is less than 1; `IOError` if a loop cannot be
    ///   created (loops already started are stopped).
    public init(loopCount: Int = EventLoopGroup.coreCount, namePrefix: String = "wire-loop") throws {
        try ConfigurationError.require("loopCount", loopCount, atLeast: 1)
        var loops: [EventLoop] = []
        do {
            for index in 0..<loopCount { loops.append(try EventLoop(name: "\(namePrefix)-\(index)")) }
        } catch {
            for loop in loops { loop.shutdown() }
            throw error
        }
        self.loops = loops
        ownsLoops = true
    }

    /// A group over loops another group owns, which it never stops (`shutdown()` and release leave them running):
    /// so that a client placed on it opens its connections on exactly these loops (`wire bench` through a proxy,
    /// one client per bench loop).
    package init(sharing loops: [EventLoop]) {
        precondition(!loops.isEmpty, "a group needs a loop")
        self.loops = loops
        ownsLoops = false
    }

    /// The number of online cores, as `sysconf(_SC_NPROCESSORS_ONLN)` reports.
    public static var coreCount: Int { Posix.onlineCoreCount() }

    /// The next loop, round-robin.
    public func next() -> EventLoop {
        let index = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
        return loops[index % loops.count]
    }

    /// Shuts every loop down and joins their threads. Call from outside the loops.
    public func shutdown() {
        guard ownsLoops else { return }
        for loop in loops { loop.shutdown() }
    }

    /// Asks every loop to stop without waiting for their threads (see `EventLoop.stopWithoutWaiting()`).
    /// - Returns: Whether any loop was still running.
    @discardableResult
    package func stopWithoutWaiting() -> Bool {
        guard ownsLoops else { return false }
        var stoppedAny = false
        for loop in loops where loop.stopWithoutWaiting() { stoppedAny = true }
        return stoppedAny
    }

    deinit {
        if stopWithoutWaiting() { ImplicitShutdownWarning.emit(for: "EventLoopGroup") }
    }

    /// Shuts every loop down without blocking the calling task's thread.
    public func shutdownGracefully() async {
        guard ownsLoops else { return }
        for loop in loops { await loop.shutdownGracefully() }
    }
}
