/// The outcome of a non-blocking operation: it was done, or it would have blocked.
///
/// Would-block is the normal state of a non-blocking socket, not an error, so it is a value
/// here and never thrown.
@frozen
package enum IOResult<Value> {
    /// The operation completed with this value.
    case processed(Value)
    /// The operation would have blocked; wait for readiness and try again.
    case wouldBlock
}

extension IOResult: Sendable where Value: Sendable {}
extension IOResult: Equatable where Value: Equatable {}
