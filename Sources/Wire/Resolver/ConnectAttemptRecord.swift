/// One address a connect tried (a Happy Eyeballs attempt), as its observer is told of it: once when it starts
/// (`isOver` false), once when it ends.
package struct ConnectAttemptRecord: Hashable, Sendable {
    /// The address connected to.
    package var address: SocketAddress
    /// When the attempt's socket started connecting.
    package var started: Deadline
    /// When it connected or failed; nil while under way, and for an attempt abandoned (another won first, the
    /// connect timed out, the loop closed).
    package var ended: Deadline?
    /// Why it failed; nil when it connected, is under way, or was abandoned.
    package var error: IOError?
    /// Whether the attempt is over (connected, failed or abandoned).
    package var isOver = false

    package init(address: SocketAddress, started: Deadline) {
        self.address = address
        self.started = started
    }
}
