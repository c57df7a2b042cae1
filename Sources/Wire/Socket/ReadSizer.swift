/// How much a stream's next read(2) asks for: more while reads fill what they asked for (a bulk transfer, where
/// each read is a system call and a wake-up of the consumer), back down once reads come in small again.
///
/// A value type with no I/O. The size only says how large a buffer the next read borrows from its loop's pool:
/// an idle stream holds no buffer, whatever the size.
struct ReadSizer {
    /// The size reads start at and never fall below.
    let minimum: Int
    /// The size reads never exceed.
    let maximum: Int
    /// What the next read asks for.
    private(set) var current: Int
    /// Whether the previous read was small enough to fit in half the current size.
    private var previousWasSmall = false

    /// Reads from `minimum` (at least 1) up to `maximum` (at least `minimum`).
    init(minimum: Int, maximum: Int) {
        self.minimum = Swift.max(1, minimum)
        self.maximum = Swift.max(self.minimum, maximum)
        current = self.minimum
    }

    /// Notes that a read of `current` bytes returned `count`: a full read doubles the size, and two reads in a
    /// row that would each have fit in half of it halve it (one short read at the end of a burst does not).
    mutating func record(_ count: Int) {
        if count >= current {
            current = Swift.min(current * 2, maximum)
            previousWasSmall = false
        } else if count <= current / 2 {
            if previousWasSmall && current > minimum {
                current = Swift.max(current / 2, minimum)
                previousWasSmall = false
            } else {
                previousWasSmall = true
            }
        } else {
            previousWasSmall = false
        }
    }
}
