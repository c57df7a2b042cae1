/// The error work meets when its loop has shut down: `EventLoop.submit` on a closed loop, and a stream whose loop
/// shut down underneath it.
public struct EventLoopClosedError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The loop's name.
    public let loopName: String
    /// `event loop wire-loop-0 shut down`.
    public var description: String { "event loop \(loopName) shut down" }
}
