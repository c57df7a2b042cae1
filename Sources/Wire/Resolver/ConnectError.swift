/// Why a connection could not be established.
///
/// It says which of the usual causes it was (`reason`), and keeps every address tried with the
/// exact system error each gave, so a log line can tell "refused on ::1, timed out on 127.0.0.1".
public struct ConnectError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The cause, in the terms a user (and curl's exit codes) think in.
    public enum Reason: Hashable, Sendable {
        /// The host name does not resolve.
        case unknownHost
        /// Something answered, and refused the connection (RST).
        case refused
        /// No route to the host or its network.
        case unreachable
        /// No attempt connected before the connect timeout.
        case timedOut
        /// Every attempt failed for another reason (see `attempts`).
        case failed
        /// The event loop the connect ran on shut down before it finished (see `loopName`).
        case eventLoopClosed
    }

    /// One address tried and the error it gave.
    public struct Attempt: Hashable, Sendable {
        /// The address.
        public let address: SocketAddress
        /// What `connect` reported.
        public let error: IOError

        package init(address: SocketAddress, error: IOError) {
            self.address = address
            self.error = error
        }
    }

    /// The cause.
    public let reason: Reason
    /// The host name (or address) that was to be connected.
    public let host: String
    /// The port, or nil for a Unix socket.
    public let port: Int?
    /// Each failed attempt, in the order they failed.
    public let attempts: [Attempt]
    /// The resolver's error, for `.unknownHost`.
    public let resolutionError: NameResolutionError?
    /// The connect timeout that ran out, for `.timedOut`.
    public let timeout: Duration?
    /// The name of the loop that shut down, for `.eventLoopClosed`.
    public let loopName: String?

    package init(
        reason: Reason, host: String, port: Int?, attempts: [Attempt] = [], resolutionError: NameResolutionError? = nil,
        timeout: Duration? = nil,
        loopName: String? = nil
    ) {
        self.reason = reason
        self.host = host
        self.port = port
        self.attempts = attempts
        self.resolutionError = resolutionError
        self.timeout = timeout
        self.loopName = loopName
    }

    /// The connect to `host:port` was abandoned because `loop` shut down under it.
    static func loopClosed(_ loop: EventLoop, host: String, port: Int?, attempts: [Attempt] = []) -> ConnectError {
        ConnectError(reason: .eventLoopClosed, host: host, port: port, attempts: attempts, loopName: loop.name)
    }

    /// Classifies failed attempts: a refusal means the host is there; otherwise unreachable if
    /// any route was missing.
    static func classify(_ attempts: [Attempt]) -> Reason {
        if attempts.contains(where: { $0.error.errno == .connectionRefused || $0.error.errno == .noSuchFile }) { return .refused }
        if attempts.contains(where: { [.networkUnreachable, .hostUnreachable, .addressNotAvailable].contains($0.error.errno) }) {
            return .unreachable
        }
        if attempts.contains(where: { $0.error.errno == .timedOut }) { return .timedOut }
        return .failed
    }

    /// A one-line explanation naming the host and each attempt's error.
    public var description: String {
        let target = port.map { "\(host) port \($0)" } ?? host
        let detail = attempts.map { "\($0.address): \($0.error.errno)" }.joined(separator: "; ")
        switch reason {
        case .unknownHost: return resolutionError?.description ?? "could not resolve host \(host)"
        case .refused: return "connection to \(target) refused (\(detail))"
        case .unreachable: return "\(target) is unreachable (\(detail))"
        case .timedOut:
            let after = timeout.map { " after \($0.seconds)s" } ?? ""
            return "connection to \(target) timed out\(after)" + (detail.isEmpty ? "" : " (\(detail))")
        case .failed: return "could not connect to \(target) (\(detail))"
        case .eventLoopClosed: return "connection to \(target) abandoned: event loop \(loopName ?? "?") shut down"
        }
    }
}
