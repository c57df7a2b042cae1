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
    // The storage array's count is its capacity, so the socket layer can read(2) straight into
    // its tail. Bytes past `writerIndex` are unspecified (never zero-filled) and never read.
    private var storage: [UInt8]
    /// The position of the first readable byte.
    public private(set) var readerIndex: Int
    /// The position after the last readable byte, where the next write lands.
    public private(set) var writerIndex: Int

    /// An empty buffer that allocates nothing until written.
    public init() {
        storage = []
        readerIndex = 0
        writerIndex = 0
    }

    /// An empty buffer with room for `capacity` bytes.
    public init(capacity: Int) {
        // Uninitialized for the same reason as in `reserveWritableBytes`.
        storage = [UInt8](unsafeUninitializedCapacity: capacity) { _, initialized in initialized = capacity }
        readerIndex = 0
        writerIndex = 0
    }

    /// A buffer whose readable bytes are `bytes`.
    public init(bytes: some Sequence<UInt8>) {
        storage = Array(bytes)
        readerIndex = 0
        writerIndex = storage.count
    }

    /// A buffer holding the UTF-8 bytes of `string`.
    public init(string: String) {
        self.init(bytes: string.utf8)
    }

    /// How many bytes can be read.
    public var readableBytes: Int { writerIndex - readerIndex }

    /// How many bytes can be written before the buffer must grow.
    public var writableBytes: Int { storage.count - writerIndex }

    /// Whether no bytes are readable.
    public var isEmpty: Bool { readerIndex == writerIndex }

    /// The allocated size.
    public var capacity: Int { storage.count }

    /// Makes room for at least `count` more bytes, first by moving the readable bytes to the
    /// front (when that alone is enough), otherwise by growing to the next power of two.
    public mutating func reserveWritableBytes(_ count: Int) {
        guard writableBytes < count else { return }
        if readerIndex > 0 && storage.count - readableBytes >= count && readableBytes <= storage.count / 2 {
            discardReadBytes()
            return
        }
        // Grow into a new allocation holding only the readable bytes, at the front. The tail is
        // left as the allocator returned it: no byte past `writerIndex` is ever read before
        // read(2) or a write has filled it, so zero-filling 64 KiB per socket read would be
        // pure waste (and, unoptimised, a per-element loop).
        let readable = readableBytes
        var newCapacity = Swift.max(storage.count, 64)
        while newCapacity < readable + count { newCapacity *= 2 }
        let start = readerIndex
        let grown = storage.withUnsafeBufferPointer { old in
            [UInt8](unsafeUninitializedCapacity: newCapacity) { fresh, initialized in
                if readable > 0 { fresh.baseAddress!.initialize(from: old.baseAddress! + start, count: readable) }
                initialized = newCapacity
            }
        }
        storage = grown
        readerIndex = 0
        writerIndex = readable
    }

    /// Moves the readable bytes to the start of the storage, reclaiming consumed space.
    public mutating func discardReadBytes() {
        guard readerIndex > 0 else { return }
        let count = readableBytes
        if count > 0 {
            storage.withUnsafeMutableBytes { bytes in
                bytes.baseAddress!.copyMemory(from: bytes.baseAddress! + readerIndex, byteCount: count)
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
        storage = []
        readerIndex = 0
        writerIndex = 0
    }

    /// Appends bytes.
    public mutating func writeBytes(_ bytes: some Collection<UInt8>) {
        let count = bytes.count
        reserveWritableBytes(count)
        let start = writerIndex
        storage.withUnsafeMutableBufferPointer { destination in
            _ = UnsafeMutableBufferPointer(rebasing: destination[start..<(start + count)]).initialize(from: bytes)
        }
        writerIndex += count
    }

    /// Appends the readable bytes of another buffer.
    public mutating func writeBuffer(_ other: ByteBuffer) {
        other.withUnsafeReadableBytes { bytes in writeBytes(bytes) }
    }

    /// Appends the UTF-8 bytes of a string.
    public mutating func writeString(_ string: String) {
        var string = string
        string.withUTF8 { writeBytes($0) }
    }

    /// Appends one byte.
    public mutating func writeInteger(_ byte: UInt8) {
        reserveWritableBytes(1)
        storage[writerIndex] = byte
        writerIndex += 1
    }

    /// Marks `count` readable bytes as consumed.
    public mutating func moveReaderIndex(forwardBy count: Int) {
        precondition(count >= 0 && count <= readableBytes, "moveReaderIndex(forwardBy: \(count)) past \(readableBytes) readable bytes")
        readerIndex += count
        if readerIndex == writerIndex {
            // Nothing left: start over at the front so the next read needs no compaction.
            readerIndex = 0
            writerIndex = 0
        }
    }

    /// Marks `count` bytes written directly into the writable space as readable.
    package mutating func moveWriterIndex(forwardBy count: Int) {
        precondition(count >= 0 && count <= writableBytes, "moveWriterIndex(forwardBy: \(count)) past \(writableBytes) writable bytes")
        writerIndex += count
    }

    /// Removes and returns up to `count` readable bytes.
    public mutating func readBytes(_ count: Int) -> [UInt8] {
        let taken = Swift.min(count, readableBytes)
        let bytes = Array(storage[readerIndex..<(readerIndex + taken)])
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

    /// The readable bytes as an array (a copy).
    public var readableBytesArray: [UInt8] { Array(storage[readerIndex..<writerIndex]) }

    /// Calls `body` with a view of the readable bytes.
    public func withReadableSpan<R, E: Error>(_ body: (Span<UInt8>) throws(E) -> R) throws(E) -> R {
        let span = storage.span.extracting(readerIndex..<writerIndex)
        return try body(span)
    }

    /// The readable byte at `offset` from `readerIndex`.
    public subscript(readable offset: Int) -> UInt8 {
        storage[readerIndex + offset]
    }

    /// Calls `body` with a pointer to the readable bytes. System layer and WireTLS's OpenSSL layer only.
    package func withUnsafeReadableBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let range = readerIndex..<writerIndex
        // Array's accessor is `rethrows`, not typed: carry the typed error out in a Result.
        let result = storage.withUnsafeBytes { bytes in
            Result { () throws(E) -> R in try body(UnsafeRawBufferPointer(rebasing: bytes[range])) }
        }
        return try result.get()
    }

    /// Calls `body` with a pointer to the writable space. System layer and WireTLS's OpenSSL layer only.
    package mutating func withUnsafeWritableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let range = writerIndex..<storage.count
        let result = storage.withUnsafeMutableBytes { bytes in
            Result { () throws(E) -> R in try body(UnsafeMutableRawBufferPointer(rebasing: bytes[range])) }
        }
        return try result.get()
    }

    /// Two buffers are equal when their readable bytes are.
    public static func == (lhs: ByteBuffer, rhs: ByteBuffer) -> Bool {
        lhs.readableBytes == rhs.readableBytes && lhs.storage[lhs.readerIndex..<lhs.writerIndex].elementsEqual(rhs.storage[rhs.readerIndex..<rhs.writerIndex])
    }

    /// Hashes the readable bytes.
    public func hash(into hasher: inout Hasher) {
        withUnsafeReadableBytes { hasher.combine(bytes: $0) }
    }

    /// `ByteBuffer(readable: N, capacity: M)`.
    public var description: String { "ByteBuffer(readable: \(readableBytes), capacity: \(capacity))" }
}
