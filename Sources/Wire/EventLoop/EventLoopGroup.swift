import Synchronization

/// A fixed set of event loops, one thread each; connections are spread over them round-robin.
///
/// ```swift
/// let group = try EventLoopGroup()          // one loop per core
/// defer { group.shutdown() }
/// let loop = group.next()
/// ```
public final class EventLoopGroup: Sendable {
    /// The loops, in creation order.
    public let loops: [EventLoop]
    private let cursor = Atomic<Int>(0)

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
        for loop in loops { loop.shutdown() }
    }

    /// Shuts every loop down without blocking the calling task's thread.
    public func shutdownGracefully() async {
        for loop in loops { await loop.shutdownGracefully() }
    }
}
