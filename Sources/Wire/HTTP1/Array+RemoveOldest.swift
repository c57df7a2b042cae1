extension Array {
    /// Removes and returns the first element, as `removeFirst()` does, without its general path when it is the only
    /// one. A connection's queues (requests in flight, methods awaiting their responses) almost always hold one
    /// element; `removeFirst()` shifts the rest through `replaceSubrange` (about 150 instructions each time) where
    /// `removeLast()` takes a few. The array must not be empty.
    @inline(__always)
    mutating func removeOldest() -> Element {
        count == 1 ? removeLast() : removeFirst()
    }
}
