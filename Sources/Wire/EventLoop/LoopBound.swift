/// A value that may only be used on one event loop's thread, carried across threads as a token.
///
/// Connections, parsers and buffers are not `Sendable`: they are safe because only their loop
/// touches them. `LoopBound` states that in the type and checks it on every access, so a
/// closure can carry such a value to the loop (`loop.execute { bound.value.flush() }`) and any
/// use from the wrong thread traps instead of racing.
public struct LoopBound<Value>: @unchecked Sendable {
    // Safe because `value` is only reachable through accessors that check the loop's thread.
    /// The loop the value belongs to.
    public let loop: EventLoop
    private let storage: Value

    /// Wraps `value`; must be called on `loop`.
    public init(_ value: Value, loop: EventLoop) {
        loop.preconditionInEventLoop()
        self.loop = loop
        self.storage = value
    }

    /// The value; traps unless called on `loop`.
    public var value: Value {
        loop.preconditionInEventLoop()
        return storage
    }
}
