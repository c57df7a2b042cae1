/// How much a stream's next read(2) asks for: more while reads fill what they asked for (a bulk transfer, where
/// each read is a system call and a wake-up of the consumer), back down once reads come in small again.
///
/// A value type with no I/O, eight bytes (every connection carries one, idle or not). The size only says how
/// large a buffer the next read borrows from its loop's pool: an idle stream holds no buffer, whatever the size.
package struct ReadSizer {
    private var minimumSize: UInt32
    private var currentSize: UInt32

    /// Reads from `minimum` (1 byte to 1 GiB).
    package init(minimum: Int) {
        minimumSize = UInt32(Swift.min(Swift.max(1, minimum), 1 << 30))
        currentSize = minimumSize
    }

    /// The size reads start at and never fall below.
    var minimum: Int { Int(minimumSize) }

    /// What the next read asks for.
    package var current: Int { Int(currentSize) }

    /// Notes that a read of `current` bytes returned `count`: a full read doubles the size up to `maximum`; a read
    /// that would have fit in a quarter of it halves it, down to `minimum` (the last read of a burst is usually
    /// short, but rarely that short, and a halving wrongly made costs one read before a full one doubles it back).
    package mutating func record(_ count: Int, maximum: Int) {
        let current = Int(currentSize)
        if count >= current {
            currentSize = UInt32(Swift.max(Swift.min(current * 2, maximum, 1 << 30), current))
        } else if count <= current / 4 {
            currentSize = Swift.max(currentSize / 2, minimumSize)
        }
    }
}
