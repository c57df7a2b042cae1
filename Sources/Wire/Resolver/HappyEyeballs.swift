/// Connection racing per RFC 8305 (Happy Eyeballs v2), as a pure state machine.
///
/// Addresses are tried in RFC 8305 §4 order, families interleaved and IPv6 first. A new
/// attempt starts when the previous one fails or when `attemptDelay` (250 ms, RFC 8305 §5) passes
/// without a winner, whichever comes first. The first attempt to connect wins; the others are
/// cancelled. It takes events and returns actions; the shell (`Connector`) does the I/O.
package struct HappyEyeballs {
    /// What the shell must do.
    package enum Action: Equatable {
        /// Open a socket and start connecting attempt `attempt` to `address`.
        case startAttempt(attempt: Int, address: SocketAddress)
        /// Call `attemptDelayElapsed` at this time (replacing any earlier such timer).
        case scheduleNextAttempt(at: Deadline)
        /// Connected through `attempt`: keep it, close the others (`cancel`), stop the timer.
        case succeed(attempt: Int, cancel: [Int])
        /// Every attempt failed (or none was possible): give up with these failures.
        case fail([Failure])
    }

    /// One address that could not be connected, and why.
    package struct Failure: Equatable {
        var address: SocketAddress
        var error: IOError

        package init(address: SocketAddress, error: IOError) {
            self.address = address
            self.error = error
        }
    }

    private enum State {
        /// Attempts `inFlight` are connecting; `next` is the index of the next address to try.
        case racing(next: Int, inFlight: Set<Int>, failures: [Failure])
        case finished
    }

    let addresses: [SocketAddress]
    let attemptDelay: Duration
    private var state: State

    /// Prepares a race over `addresses`, reordered per RFC 8305 §4.
    package init(addresses: [SocketAddress], attemptDelay: Duration = .milliseconds(250)) {
        self.addresses = Self.interleaved(addresses)
        self.attemptDelay = attemptDelay
        state = .racing(next: 0, inFlight: [], failures: [])
    }

    /// Starts the first attempt.
    package mutating func start(now: Deadline) -> [Action] {
        guard case .racing(let next, let inFlight, let failures) = state, next == 0, inFlight.isEmpty else {
            preconditionFailure("HappyEyeballs.start called twice (\(state))")
        }
        return launchNext(next: next, inFlight: inFlight, failures: failures, now: now)
    }

    /// Attempt `attempt` connected.
    package mutating func attemptSucceeded(_ attempt: Int) -> [Action] {
        switch state {
        case .racing(_, var inFlight, _):
            guard inFlight.remove(attempt) != nil else { return [] }
            state = .finished
            return [.succeed(attempt: attempt, cancel: inFlight.sorted())]
        case .finished:
            return []
        }
    }

    /// Attempt `attempt` failed: start the next address at once (RFC 8305 §5: no need to wait).
    package mutating func attemptFailed(_ attempt: Int, error: IOError, now: Deadline) -> [Action] {
        switch state {
        case .racing(let next, var inFlight, var failures):
            guard inFlight.remove(attempt) != nil else { return [] }
            failures.append(Failure(address: addresses[attempt], error: error))
            return launchNext(next: next, inFlight: inFlight, failures: failures, now: now)
        case .finished:
            return []
        }
    }

    /// The attempt delay passed with no winner: start the next address alongside.
    package mutating func attemptDelayElapsed(now: Deadline) -> [Action] {
        switch state {
        case .racing(let next, let inFlight, let failures):
            guard next < addresses.count else { return [] }
            return launchNext(next: next, inFlight: inFlight, failures: failures, now: now)
        case .finished:
            return []
        }
    }

    private mutating func launchNext(next: Int, inFlight: Set<Int>, failures: [Failure], now: Deadline) -> [Action] {
        guard next < addresses.count else {
            if inFlight.isEmpty {
                state = .finished
                return [.fail(failures)]
            }
            state = .racing(next: next, inFlight: inFlight, failures: failures)
            return []
        }
        var inFlight = inFlight
        inFlight.insert(next)
        state = .racing(next: next + 1, inFlight: inFlight, failures: failures)
        var actions: [Action] = [.startAttempt(attempt: next, address: addresses[next])]
        if next + 1 < addresses.count { actions.append(.scheduleNextAttempt(at: now + attemptDelay)) }
        return actions
    }

    /// RFC 8305 §4: alternate address families, starting with IPv6, keeping each family's order.
    package static func interleaved(_ addresses: [SocketAddress]) -> [SocketAddress] {
        let v6 = addresses.filter { $0.family == .ipv6 }
        let others = addresses.filter { $0.family != .ipv6 }
        var result: [SocketAddress] = []
        result.reserveCapacity(addresses.count)
        for index in 0..<max(v6.count, others.count) {
            if index < v6.count { result.append(v6[index]) }
            if index < others.count { result.append(others[index]) }
        }
        return result
    }
}
