/// A growable run of bytes with separate read and write positions: Wire's one buffer type for
/// socket reads, socket writes and the codec that parses in place.
///
/// ```
/// storage:  [ consumed | readable bytes | writable space ]
///           0      readerIndex      writerIndex      capacity
/// ```
///
/// It is a value type with copy-on-write storage: `slice` and plain copies share bytes until one
/// of them is written, so handing a body chunk to user code copies nothing.
public struct ByteBuffer: Sendable, Hashable, CustomStringConvertible {
    // Bytes past `writerIndex` are unspecified (never zero-filled) and never read, so the socket
    // layer can read(2) straight into the tail. nil until the first write: an empty buffer
    // allocates nothing.
    //
    // Sendable the way Array's storage is: a buffer writes bytes only into storage it just allocated or that
    // `makeUnique()` found unshared, so storage that two values (or threads) can see is never written again, only
    // read. `ByteStorage` is a `ManagedBuffer`, which the standard library marks as never Sendable, so the claim is
    // made here, on the one property that holds it.
    nonisolated(unsafe) private var storage: ByteStorage?
    /// The position of the first readable byte.
    public private(set) var readerIndex: Int
    /// The position after the last readable byte, where the next write lands.
    public private(set) var writerIndex: Int

    /// An empty buffer that allocates nothing until written.
    public init() {
        storage = nil
        readerIndex = 0
        writerIndex = 0
    }

    /// An empty buffer with room for `capacity` bytes.
    public init(capacity: Int) {
        storage = capacity > 0 ? ByteStorage.allocate(capacity: capacity) : nil
        readerIndex = 0
        writerIndex = 0
    }

    /// A buffer whose readable bytes are `bytes`.
    public init(bytes: some Sequence<UInt8>) {
        self.init()
        let copied: Void? = bytes.withContiguousStorageIfAvailable { writeBytes(UnsafeRawBufferPointer($0)) }
        if copied == nil { writeBytes(Array(bytes)) }
    }

    /// A buffer holding the UTF-8 bytes of `string`.
    public init(string: String) {
        self.init()
        writeString(string)
    }

    /// How many bytes can be read.
    public var readableBytes: Int { writerIndex - readerIndex }

    /// How many bytes can be written before the buffer must grow.
    public var writableBytes: Int { capacity - writerIndex }

    /// Whether no bytes are readable.
    public var isEmpty: Bool { readerIndex == writerIndex }

    /// The allocated size.
    public var capacity: Int { storage?.size ?? 0 }

    /// Makes room for at least `count` more bytes, first by moving the readable bytes to the
    /// front (when that alone is enough), otherwise by growing to the next power of two. The
    /// storage is this buffer's alone afterwards, ready to be written.
    public mutating func reserveWritableBytes(_ count: Int) {
        let capacity = self.capacity
        if capacity - writerIndex >= count {
            makeUnique()
            return
        }
        if readerIndex > 0 && capacity - readableBytes >= count && readableBytes <= capacity / 2 {
            discardReadBytes()
            return
        }
        // Grow into a new allocation holding only the readable bytes, at the front. The tail is
        // left as the allocator returned it: no byte past `writerIndex` is ever read before
        // read(2) or a write has filled it, so zero-filling 64 KiB per socket read would be waste.
        let readable = readableBytes
        var newCapacity = Swift.max(capacity, 64)
        while newCapacity < readable + count { newCapacity *= 2 }
        moveReadable(toStorageOf: newCapacity)
    }

    /// Copies the readable bytes to the front of a new storage of `newCapacity` bytes.
    private mutating func moveReadable(toStorageOf newCapacity: Int) {
        let fresh = ByteStorage.allocate(capacity: newCapacity)
        let readable = readableBytes
        if readable > 0, let storage {
            storage.withUnsafeMutablePointerToElements { old in
                fresh.withUnsafeMutablePointerToElements { new in
                    new.initialize(from: old + readerIndex, count: readable)
                }
            }
        }
        storage = fresh
        readerIndex = 0
        writerIndex = readable
    }

    /// Gives this buffer storage of its own before its bytes are written (copy on write).
    private mutating func makeUnique() {
        guard storage != nil, !isKnownUniquelyReferenced(&storage) else { return }
        moveReadable(toStorageOf: capacity)
    }

    /// Whether no other buffer shares this one's storage (a slice handed on keeps it shared), so
    /// that writing into it copies nothing: the socket layer recycles only such buffers.
    package mutating func hasUniqueStorage() -> Bool {
        storage != nil && isKnownUniquelyReferenced(&storage)
    }

    /// Moves the readable bytes to the start of the storage, reclaiming consumed space.
    public mutating func discardReadBytes() {
        guard readerIndex > 0 else { return }
        guard isKnownUniquelyReferenced(&storage) else {
            moveReadable(toStorageOf: capacity)
            return
        }
        let count = readableBytes
        if count > 0, let storage {
            storage.withUnsafeMutablePointerToElements { bytes in
                UnsafeMutableRawPointer(bytes).copyMemory(from: bytes + readerIndex, byteCount: count)
            }
        }
        readerIndex = 0
        writerIndex = count
    }

    /// Forgets every byte; keeps the allocation.
    public mutating func clear() {
        readerIndex = 0
        writerIndex = 0
    }

    /// Forgets every byte and releases the allocation, so an idle connection holds no buffer.
    public mutating func releaseStorage() {
        storage = nil
        readerIndex = 0
        writerIndex = 0
    }

    /// Appends bytes.
    public mutating func writeBytes(_ bytes: some Collection<UInt8>) {
        let copied: Void? = bytes.withContiguousStorageIfAvailable { writeBytes(UnsafeRawBufferPointer($0)) }
        guard copied == nil else { return }
        let count = bytes.count
        reserveWritableBytes(count)
        storage!.withUnsafeMutablePointerToElements { base in
            _ = UnsafeMutableBufferPointer(start: base + writerIndex, count: count).initialize(from: bytes)
        }
        writerIndex += count
    }

    /// Appends raw bytes with one copy.
    package mutating func writeBytes(_ bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        guard count > 0 else { return }
        reserveWritableBytes(count)
        storage!.withUnsafeMutablePointerToElements { base in
            UnsafeMutableRawPointer(base + writerIndex).copyMemory(from: bytes.baseAddress!, byteCount: count)
        }
        writerIndex += count
    }

    /// Appends a literal's bytes with one copy.
    package mutating func writeLiteral(_ text: StaticString) {
        writeBytes(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends the readable bytes of another buffer.
    public mutating func writeBuffer(_ other: ByteBuffer) {
        other.withUnsafeReadableBytes { bytes in writeBytes(bytes) }
    }

    /// Appends the UTF-8 bytes of a string.
    public mutating func writeString(_ string: String) {
        var string = string
        string.withUTF8 { writeBytes(UnsafeRawBufferPointer($0)) }
    }

    /// Appends one byte.
    public mutating func writeInteger(_ byte: UInt8) {
        reserveWritableBytes(1)
        storage!.withUnsafeMutablePointerToElements { $0[writerIndex] = byte }
        writerIndex += 1
    }

    /// Marks `count` readable bytes as consumed.
    public mutating func moveReaderIndex(forwardBy count: Int) {
        precondition(
            count >= 0 && count <= readableBytes, "moveReaderIndex(forwardBy: \(count)) past \(readableBytes) readable bytes")
        readerIndex += count
        if readerIndex == writerIndex {
            // Nothing left: start over at the front so the next read needs no compaction.
            readerIndex = 0
            writerIndex = 0
        }
    }

    /// Marks `count` bytes written directly into the writable space as readable.
    package mutating func moveWriterIndex(forwardBy count: Int) {
        precondition(
            count >= 0 && count <= writableBytes, "moveWriterIndex(forwardBy: \(count)) past \(writableBytes) writable bytes")
        writerIndex += count
    }

    /// Removes and returns up to `count` readable bytes.
    public mutating func readBytes(_ count: Int) -> [UInt8] {
        let taken = Swift.min(count, readableBytes)
        let bytes = withUnsafeReadableBytes { Array($0.prefix(taken)) }
        moveReaderIndex(forwardBy: taken)
        return bytes
    }

    /// Removes and returns `count` readable bytes as a buffer that shares this one's storage.
    public mutating func readSlice(_ count: Int) -> ByteBuffer {
        let sliced = slice(at: 0, length: Swift.min(count, readableBytes))
        moveReaderIndex(forwardBy: sliced.readableBytes)
        return sliced
    }

    /// The readable bytes `offset..<offset+length` (relative to `readerIndex`) as a buffer that
    /// shares storage with this one: no bytes are copied.
    public func slice(at offset: Int, length: Int) -> ByteBuffer {
        precondition(offset >= 0 && length >= 0 && offset + length <= readableBytes, "slice out of readable range")
        var copy = self
        copy.readerIndex = readerIndex + offset
        copy.writerIndex = readerIndex + offset + length
        return copy
    }

    /// The readable bytes `offset..<offset+length` (relative to `readerIndex`) copied into a buffer of their own,
    /// exactly that large: unlike a slice, it keeps nothing else of this buffer's storage alive.
    package func copy(at offset: Int, length: Int) -> ByteBuffer {
        precondition(offset >= 0 && length >= 0 && offset + length <= readableBytes, "copy out of readable range")
        var copy = ByteBuffer(capacity: length)
        withUnsafeReadableBytes { bytes in copy.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])) }
        return copy
    }

    /// The readable bytes as an array (a copy).
    public var readableBytesArray: [UInt8] { withUnsafeReadableBytes { Array($0) } }

    /// Calls `body` with a view of the readable bytes.
    public func withReadableSpan<R, E: Error>(_ body: (Span<UInt8>) throws(E) -> R) throws(E) -> R {
        // `self` holds the storage for the whole call (it is borrowed), so the pointer stays valid.
        try body(UnsafeBufferPointer(start: storage?.base.advanced(by: readerIndex), count: readableBytes).span)
    }

    /// The readable byte at `offset` from `readerIndex`.
    public subscript(readable offset: Int) -> UInt8 {
        precondition(offset >= 0 && offset < readableBytes, "readable offset \(offset) out of \(readableBytes)")
        return storage!.withUnsafeMutablePointerToElements { $0[readerIndex + offset] }
    }

    /// Calls `body` with a pointer to the readable bytes. System layer and WireTLS's OpenSSL layer only.
    package func withUnsafeReadableBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        // `self` holds the storage for the whole call (it is borrowed), so the pointer stays valid.
        try body(UnsafeRawBufferPointer(start: storage?.base.advanced(by: readerIndex), count: readableBytes))
    }

    /// Calls `body` with a pointer to the writable space. System layer and WireTLS's OpenSSL layer only.
    package mutating func withUnsafeWritableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E)
        -> R
    {
        makeUnique()
        // Held in a local for the call: `body` cannot reach `self` (it is borrowed inout here).
        guard let storage else { return try body(UnsafeMutableRawBufferPointer(start: nil, count: 0)) }
        defer { withExtendedLifetime(storage) {} }
        return try body(UnsafeMutableRawBufferPointer(start: storage.base + writerIndex, count: storage.size - writerIndex))
    }

    /// Two buffers are equal when their readable bytes are.
    public static func == (lhs: ByteBuffer, rhs: ByteBuffer) -> Bool {
        lhs.readableBytes == rhs.readableBytes
            && lhs.withUnsafeReadableBytes { left in rhs.withUnsafeReadableBytes { right in left.elementsEqual(right) } }
    }

    /// Hashes the readable bytes.
    public func hash(into hasher: inout Hasher) {
        withUnsafeReadableBytes { hasher.combine(bytes: $0) }
    }

    /// `ByteBuffer(readable: N, capacity: M)`.
    public var description: String { "ByteBuffer(readable: \(readableBytes), capacity: \(capacity))" }
}

/// A `ByteBuffer`'s bytes and their count, in one allocation: the count is the header, the bytes are the tail.
///
/// A class of its own, not an `[UInt8]`, so that allocating one needs no generic metadata lookup (an array costs
/// several hundred instructions of it per allocation) and so that its uniqueness can be asked. Tail-allocated, not an
/// object pointing at a separate allocation: one `malloc` and one `free` per buffer instead of two (the bytes'
/// `allocate` went through `posix_memalign`), and the bytes sit beside the count they are read with.
final class ByteStorage: ManagedBuffer<Int, UInt8> {
    /// Storage for exactly `capacity` bytes, uninitialized; `header` holds `capacity`.
    static func allocate(capacity: Int) -> ByteStorage {
        unsafeDowncast(ByteStorage.create(minimumCapacity: capacity) { _ in capacity }, to: ByteStorage.self)
    }

    /// How many bytes the storage holds. Read through the header's pointer: `header` is a class's `var`, whose every
    /// read is checked for exclusive access at run time (about 60 instructions).
    @inline(__always)
    var size: Int { withUnsafeMutablePointerToHeader { $0.pointee } }

    /// The bytes' address: the tail of this object, fixed for its life (valid while the storage is held).
    @inline(__always)
    var base: UnsafeMutablePointer<UInt8> { withUnsafeMutablePointerToElements { $0 } }
}
