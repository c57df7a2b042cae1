/// A connection's one timer (idle, header, body read, send or linger), re-armed lazily.
///
/// Arming only records a kind and a deadline; a wake-up already due no later than the new deadline is kept, and when
/// it comes early the connection is woken again at the recorded deadline. A keep-alive connection serving many
/// requests thus moves its idle deadline with a clock read, not a heap operation. The wake-ups themselves are the
/// loop's (`ServerLoopContext`'s `ConnectionDeadlines`); this value only decides. Pure value type: time is passed in.
struct ConnectionTimer {
    /// What the timer guards.
    enum Kind: Equatable {
        /// Waiting for the next request on a kept-alive connection.
        case idle
        /// Waiting for a new connection's first request head, or the rest of a head.
        case header
        /// Waiting for more of a request body the server is reading; moved on by every read.
        case bodyRead
        /// A writer waiting for queued response bytes to drain; checked for progress when it fires.
        case send
        /// Waiting for the peer's end of stream after the last response.
        case linger
    }

    // Three fields rather than two optional tuples: 17 bytes instead of 32, in every connection.
    /// When what is armed expires (meaningless while `armedKind` is nil).
    private var armedDeadline = Deadline(uptimeNanoseconds: 0)
    /// When the loop is due to wake the connection (its place in the loop's `ConnectionDeadlines`); 0 when it is not.
    private var wakeNanoseconds: UInt64 = 0
    /// What is armed, if anything.
    private var armedKind: Kind?

    init() {}

    /// What is armed, and when it expires.
    var armed: (kind: Kind, deadline: Deadline)? { armedKind.map { ($0, armedDeadline) } }

    /// When the loop is due to wake the connection, if it is.
    var wakeAt: Deadline? { wakeNanoseconds == 0 ? nil : Deadline(uptimeNanoseconds: wakeNanoseconds) }

    /// Arms the timer for `kind`, replacing whatever was armed; returns the time the loop must wake the connection
    /// at, or nil when a wake-up already due no later than `deadline` will do.
    mutating func arm(_ kind: Kind, at deadline: Deadline) -> Deadline? {
        armedKind = kind
        armedDeadline = deadline
        if wakeNanoseconds != 0 && wakeNanoseconds <= deadline.uptimeNanoseconds { return nil }
        // A deadline at uptime 0 cannot be asked for (now is later); 1 stands in for it if it ever were.
        wakeNanoseconds = max(deadline.uptimeNanoseconds, 1)
        return deadline
    }

    /// The deadline `delay` nanoseconds after `now`, the distant future if that overflows. A delay converted from a
    /// `Duration` once per server rather than per request (the conversion's 128-bit arithmetic showed in the profile).
    static func deadline(afterNanoseconds delay: Int64, from now: UInt64) -> Deadline {
        let (sum, overflow) = now.addingReportingOverflow(UInt64(max(0, delay)))
        return overflow ? Deadline.distantFuture : Deadline(uptimeNanoseconds: sum)
    }

    /// Disarms the timer; the wake-up, if any, finds nothing to do.
    mutating func disarm() {
        armedKind = nil
    }

    /// Cancels everything; for a closed connection (whose owner also leaves the loop's deadlines).
    mutating func cancel() {
        armedKind = nil
        wakeNanoseconds = 0
    }

    /// What a wake-up finds.
    enum Wake: Equatable {
        /// Nothing armed: the connection needs no wake-up until it is armed again.
        case nothing
        /// This kind expired.
        case expired(Kind)
        /// Armed for later (moved on since the wake-up was due): wake the connection again then.
        case later(Deadline)
    }

    /// The loop woke the connection at `now`.
    mutating func woke(at now: Deadline) -> Wake {
        wakeNanoseconds = 0
        guard let kind = armedKind else { return .nothing }
        if now < armedDeadline {
            wakeNanoseconds = max(armedDeadline.uptimeNanoseconds, 1)
            return .later(armedDeadline)
        }
        armedKind = nil
        return .expired(kind)
    }
}
