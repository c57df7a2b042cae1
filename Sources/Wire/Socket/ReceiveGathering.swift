/// Whether a stream lets a body's bytes gather in the kernel before it is woken for them (`SO_RCVLOWAT`), and how
/// many: the receive side's half of a bulk transfer.
///
/// Without it, a reader faster than its peer is woken for every segment the peer's kernel hands over (64 KiB on
/// loopback) and the sender's CPU pays for each of those wake-ups; against nginx sending a file without
/// `tcp_nopush`, the sender then delivers about a third less per second. With a low watermark the reader sleeps
/// until a full read's worth is queued.
///
/// Gathering only ever waits for bytes that are certain to come (the rest of a Content-Length body or of a chunk,
/// as the consumer says with `expect`), so the end of a body is never waited for. It starts only once a read came
/// back full at the largest size without it (the peer is ahead of the reader), and it stops when a check finds no
/// read since the previous one (the peer slowed below a read's worth per check interval) or when reading is paused
/// (the consumer is behind, so the reader is not the one to spare): then the bytes queued are read at once, and it
/// takes another full read, not the first after a pause, to start again.
///
/// A value with no I/O: the stream applies the watermarks it returns and runs the checks on a timer.
package struct ReceiveGathering: Sendable, Equatable {
    /// The low watermark the socket has now; 1 is the kernel's default (wake for any byte).
    package private(set) var watermark = 1
    /// A read filled the largest read size with gathering off: bytes are arriving faster than they are read.
    private var peerIsAhead = false
    /// Reads since the last check, while gathering.
    private var readSinceCheck = false
    /// Reading was paused since the last read: the next read drains a backlog, which says nothing of the peer.
    private var resumedAfterPause = false

    /// False once the socket refused a watermark: the stream then delivers as bytes come, for the rest of its life.
    package private(set) var isAvailable = true

    package init() {}

    /// Whether bytes are gathering (the watermark is above 1): the stream keeps a check scheduled meanwhile.
    package var isGathering: Bool { watermark > 1 }

    /// A read returned `count` bytes of the `asked` it asked for; `largest` is the most a read ever asks for.
    package mutating func didRead(_ count: Int, asked: Int, largest: Int) {
        readSinceCheck = true
        if resumedAfterPause {
            resumedAfterPause = false
            return
        }
        if !isGathering && count >= asked && asked >= largest { peerIsAhead = true }
    }

    /// Reading was paused: the consumer is behind, and waiting for more bytes would only keep from it those already
    /// queued when it asks again. Returns 1 to set if gathering, or nil.
    package mutating func readingPaused() -> Int? {
        peerIsAhead = false
        resumedAfterPause = true
        guard isGathering else { return nil }
        watermark = 1
        return 1
    }

    /// The consumer is owed at least `due` more bytes (0 when nothing more is certain). Returns the watermark to
    /// set, or nil to leave the socket as it is.
    package mutating func expect(_ due: Int, largest: Int) -> Int? {
        guard isAvailable else { return nil }
        let wanted = peerIsAhead && due > 1 ? min(due, largest) : 1
        if wanted == 1 { peerIsAhead = false }
        guard wanted != watermark else { return nil }
        if !isGathering { readSinceCheck = false }
        watermark = wanted
        return wanted
    }

    /// The watermark `expect` just returned, to start gathering, is not to be set (the socket's buffer is still too
    /// small for it): back to 1, until another full read.
    package mutating func declined() {
        watermark = 1
        peerIsAhead = false
    }

    /// The socket refused a watermark: no gathering on this stream any more.
    package mutating func becameUnavailable() {
        declined()
        isAvailable = false
    }

    /// The periodic check while gathering. Returns the watermark to set (1: stop gathering), or nil to keep it and
    /// check again later.
    package mutating func check() -> Int? {
        guard isGathering else { return nil }
        if readSinceCheck {
            readSinceCheck = false
            return nil
        }
        peerIsAhead = false
        watermark = 1
        return 1
    }
}
