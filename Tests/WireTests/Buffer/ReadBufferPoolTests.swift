import Testing
import Wire

struct ReadBufferPoolTests {
    /// Where an empty buffer's storage starts: its identity.
    private func storage(of buffer: inout ByteBuffer) -> UnsafeRawPointer? {
        buffer.withUnsafeWritableBytes { $0.baseAddress.map { UnsafeRawPointer($0) } }
    }

    @Test func aBufferGivenBackWhileSlicedIsReusedOnceTheSliceIsDropped() {
        var pool = ReadBufferPool(maximumCount: 4, maximumCapacity: 1024)
        var buffer = pool.take(minimumCapacity: 512)
        let first = storage(of: &buffer)
        buffer.writeString("a body chunk")
        var chunk: ByteBuffer? = buffer.readSlice(buffer.readableBytes)
        pool.give(&buffer)
        #expect(buffer.capacity == 0, "giving a buffer back leaves the stream none")
        #expect(pool.count == 1)

        var whileHeld = pool.take(minimumCapacity: 512)
        let second = storage(of: &whileHeld)
        #expect(second != first, "a storage still read through a slice is not handed out")
        #expect(chunk?.readableBytesArray == Array("a body chunk".utf8), "the slice's bytes are untouched")
        pool.give(&whileHeld)

        chunk = nil
        var one = pool.take(minimumCapacity: 512)
        var other = pool.take(minimumCapacity: 512)
        #expect(pool.created == 2 && pool.taken == 4, "both kept storages are handed out again, nothing allocated")
        #expect(Set([storage(of: &one), storage(of: &other)]) == Set([first, second]))
        #expect(one.isEmpty && other.isEmpty)
    }

    @Test func keepsAtMostItsCountAndNoOversizedBuffer() {
        var pool = ReadBufferPool(maximumCount: 2, maximumCapacity: 1024)
        var oversized = ByteBuffer(capacity: 4096)
        pool.give(&oversized)
        #expect(pool.count == 0 && oversized.capacity == 0)
        var unread = ByteBuffer(string: "not yet parsed")
        pool.give(&unread)
        #expect(pool.count == 0, "a buffer with unread bytes is never pooled")

        var held: [ByteBuffer] = []
        for _ in 0..<3 {
            var buffer = ByteBuffer(capacity: 256)
            buffer.writeString("x")
            held.append(buffer.readSlice(1))
            pool.give(&buffer)
        }
        #expect(pool.count == 2)
        #expect(pool.retainedBytes == 512)
        // Every kept buffer is still shared: taking allocates rather than hand out bytes a slice reads.
        let fresh = pool.take(minimumCapacity: 256)
        #expect(pool.created == 1 && fresh.capacity == 256)
        #expect(held.allSatisfy { $0.readableBytesArray == [UInt8(ascii: "x")] })
    }

    @Test func takesOnlyABufferLargeEnoughAndDropsFreeOnesTooSmall() {
        var pool = ReadBufferPool(maximumCount: 4, maximumCapacity: 1 << 20)
        var small = ByteBuffer(capacity: 64 * 1024)
        var heldSmall = ByteBuffer(capacity: 64 * 1024)
        heldSmall.writeString("x")
        let slice = heldSmall.readSlice(1)
        pool.give(&small)
        pool.give(&heldSmall)
        let large = pool.take(minimumCapacity: 256 * 1024)
        #expect(large.capacity == 256 * 1024 && pool.created == 1)
        #expect(pool.count == 1, "the free small buffer goes (reads grew past it); the shared one stays until evicted")
        #expect(slice.readableBytesArray == [UInt8(ascii: "x")])
    }

    @Test func aFullPoolEvictsItsSmallestBuffer() {
        var pool = ReadBufferPool(maximumCount: 2, maximumCapacity: 1 << 20)
        var small = ByteBuffer(capacity: 1024)
        var large = ByteBuffer(capacity: 8192)
        var larger = ByteBuffer(capacity: 16384)
        pool.give(&small)
        pool.give(&large)
        pool.give(&larger)
        #expect(pool.retainedBytes == 8192 + 16384)
    }
}
