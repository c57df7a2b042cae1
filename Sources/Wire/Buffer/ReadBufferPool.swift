/// The read buffers one event loop lends its streams, kept for reuse even while their bytes are still out.
///
/// A stream hands what it reads to its delegate as slices of its read buffer (a response body chunk shares the
/// storage it was read into), so the next read would find that storage shared and copy on write into a fresh
/// allocation: one allocation per read, and freeing the last one trimmed the allocator's heap (`madvise`), so
/// the next read faulted its pages back in. Instead a stream gives a buffer whose storage is still shared back
/// to the pool and takes one nobody else holds any more; the pool keeps up to `maximumCount` of them, so a
/// transfer cycles through the same few allocations from start to end. A stream that goes idle gives its
/// buffer back too: the memory belongs to the loop, never to an idle connection.
///
/// A value type with no I/O: the loop owns one and uses it on its thread only.
package struct ReadBufferPool {
    /// Buffers given back, oldest first; their storage may still be shared with slices handed out.
    private var buffers: [ByteBuffer] = []
    /// How many buffers are kept at most.
    let maximumCount: Int
    /// The largest buffer kept: a larger one (grown for an oversized head) is released.
    let maximumCapacity: Int

    /// A pool keeping at most `maximumCount` buffers of at most `maximumCapacity` bytes each.
    package init(maximumCount: Int, maximumCapacity: Int) {
        self.maximumCount = maximumCount
        self.maximumCapacity = maximumCapacity
    }

    /// How many buffers `take` handed out, and how many of those it had to allocate.
    package private(set) var taken = 0
    package private(set) var created = 0

    /// How many buffers are kept, shared or not.
    package var count: Int { buffers.count }

    /// The bytes the kept buffers hold.
    package var retainedBytes: Int { buffers.reduce(0) { $0 + $1.capacity } }

    /// An empty buffer of at least `minimumCapacity` bytes whose storage nobody else holds: the most recently
    /// returned such buffer, or a new one when every kept buffer is still shared or too small. Free buffers too
    /// small for it are released then (reads have grown past them), so they do not crowd out the larger ones.
    package mutating func take(minimumCapacity: Int) -> ByteBuffer {
        taken += 1
        var index = buffers.count - 1
        while index >= 0 {
            if buffers[index].capacity >= minimumCapacity && buffers[index].hasUniqueStorage() {
                var buffer = buffers.remove(at: index)
                buffer.clear()
                return buffer
            }
            index -= 1
        }
        index = buffers.count - 1
        while index >= 0 {
            if buffers[index].capacity < minimumCapacity && buffers[index].hasUniqueStorage() { buffers.remove(at: index) }
            index -= 1
        }
        created += 1
        return ByteBuffer(capacity: minimumCapacity)
    }

    /// Takes back a buffer with no unread bytes, leaving `buffer` empty with no storage. When the pool is full
    /// it forgets its smallest buffer, the oldest of those (a shared one's holder keeps its bytes).
    package mutating func give(_ buffer: inout ByteBuffer) {
        defer { buffer.releaseStorage() }
        guard buffer.isEmpty, buffer.capacity > 0, buffer.capacity <= maximumCapacity, maximumCount > 0 else { return }
        if buffers.count >= maximumCount {
            var victim = 0
            for index in buffers.indices where buffers[index].capacity < buffers[victim].capacity { victim = index }
            buffers.remove(at: victim)
        }
        var kept = ByteBuffer()
        swap(&kept, &buffer)
        buffers.append(kept)
    }
}
