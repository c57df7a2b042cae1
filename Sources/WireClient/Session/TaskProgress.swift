/// How far one direction of a task's transfer is (NSProgress, reduced to what WireClient counts).
///
/// Download: `totalUnitCount` is the response's `Content-Length` once the head arrived (−1 when absent or chunked),
/// `completedUnitCount` the body bytes received on the wire. Upload: the body's length when known, else the
/// request's `Content-Length`, else −1; completed = body bytes written to the socket.
public struct TaskProgress: Sendable, Hashable {
    /// Units (bytes) done so far; never decreases.
    public var completedUnitCount: Int64
    /// Units (bytes) expected, or −1 when unknown.
    public var totalUnitCount: Int64

    /// Progress with `completed` of `total` units (−1: unknown).
    public init(completedUnitCount: Int64 = 0, totalUnitCount: Int64 = -1) {
        self.completedUnitCount = completedUnitCount
        self.totalUnitCount = totalUnitCount
    }

    /// `completed / total` in 0...1; 0 while the total is unknown or zero.
    public var fractionCompleted: Double {
        guard totalUnitCount > 0 else { return 0 }
        return min(1, Double(max(0, completedUnitCount)) / Double(totalUnitCount))
    }
}
