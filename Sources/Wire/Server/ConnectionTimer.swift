/// A connection's one timer (idle, header, body read, send or linger), re-armed lazily.
///
/// Arming only records a kind and a deadline; the loop timer already scheduled is kept when it fires no later than
/// the new deadline, and when it fires early it is scheduled again for the recorded deadline. A keep-alive
/// connection serving many requests thus moves its idle deadline with a clock read, not a timer-heap operation.
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

    private let loop: EventLoop
    private var armed: (kind: Kind, deadline: Deadline)?
    private var scheduled: (id: TimerQueue<() -> Void>.ID, at: Deadline)?
    /// Called on the loop when the loop timer fires; the owner then calls `loopTimerFired()`. The timer is a value,
    /// so the loop's closure cannot reach it directly; the owner sets this from a weak reference to itself.
    var onLoopTimer: () -> Void = {}

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// Arms the timer for `kind`, replacing whatever was armed.
    /// - Parameters:
    ///   - kind: What the timer guards.
    ///   - delay: Nanoseconds from now, converted from a `Duration` once per server rather than per request (the
    ///     conversion's 128-bit arithmetic showed in the profile).
    mutating func arm(_ kind: Kind, afterNanoseconds delay: Int64) {
        let now = Posix.monotonicNanoseconds()
        let (sum, overflow) = now.addingReportingOverflow(UInt64(max(0, delay)))
        let deadline = overflow ? Deadline.distantFuture : Deadline(uptimeNanoseconds: sum)
        armed = (kind, deadline)
        if let scheduled {
            if scheduled.at <= deadline { return }
            loop.cancelOnLoop(scheduled.id)
        }
        schedule(at: deadline)
    }

    /// Disarms the timer; the loop timer, if any, finds nothing to do when it fires.
    mutating func disarm() {
        armed = nil
    }

    /// Cancels everything; for a closed connection.
    mutating func cancel() {
        armed = nil
        if let scheduled { loop.cancelOnLoop(scheduled.id) }
        scheduled = nil
        onLoopTimer = {}
    }

    /// The loop timer fired: returns the kind that expired, or nil if nothing was due (disarmed, or armed later,
    /// in which case the loop timer is scheduled again).
    mutating func loopTimerFired() -> Kind? {
        scheduled = nil
        guard let armed else { return nil }
        if Deadline.now() < armed.deadline {
            schedule(at: armed.deadline)
            return nil
        }
        self.armed = nil
        return armed.kind
    }

    private mutating func schedule(at deadline: Deadline) {
        let callback = onLoopTimer
        scheduled = (loop.scheduleOnLoop(at: deadline, callback), deadline)
    }
}
