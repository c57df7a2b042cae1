import Testing
import Wire

struct ByteBufferTests {
    @Test func writesAndReadsInOrder() {
        var buffer = ByteBuffer()
        buffer.writeString("hello ")
        buffer.writeBytes(Array("world".utf8))
        #expect(buffer.readableBytes == 11)
        #expect(buffer.readBytes(6) == Array("hello ".utf8))
        #expect(buffer.readableBytesArray == Array("world".utf8))
    }

    @Test func growsAndCompactsInsteadOfGrowingWhenConsumedSpaceSuffices() {
        var buffer = ByteBuffer(capacity: 64)
        buffer.writeBytes(repeatElement(1, count: 60))
        buffer.moveReaderIndex(forwardBy: 50)
        buffer.reserveWritableBytes(40)
        #expect(buffer.capacity == 64, "10 readable bytes moved to the front make room for 40")
        #expect(buffer.readerIndex == 0 && buffer.readableBytes == 10)
        buffer.reserveWritableBytes(1000)
        #expect(buffer.capacity >= 1010)
        #expect(buffer.readableBytesArray == Array(repeating: 1, count: 10))
    }

    @Test func slicesShareStorageAndCopyOnWrite() {
        var buffer = ByteBuffer(string: "abcdef")
        let slice = buffer.slice(at: 2, length: 3)
        #expect(slice.readableBytesArray == Array("cde".utf8))
        buffer.writeString("g")
        #expect(slice.readableBytesArray == Array("cde".utf8), "writing the original does not change the slice")
        var taken = buffer
        let head = taken.readSlice(2)
        #expect(head == ByteBuffer(string: "ab"))
        #expect(taken == ByteBuffer(string: "cdefg"))
    }

    @Test func consumingEverythingRewindsAndReleasingFreesMemory() {
        var buffer = ByteBuffer(string: "xyz")
        buffer.moveReaderIndex(forwardBy: 3)
        #expect(buffer.readerIndex == 0 && buffer.writerIndex == 0)
        buffer.releaseStorage()
        #expect(buffer.capacity == 0)
    }

    @Test func spanViewSeesReadableBytesOnly() {
        var buffer = ByteBuffer(string: "--payload")
        buffer.moveReaderIndex(forwardBy: 2)
        let count = buffer.withReadableSpan { $0.count }
        let first = buffer.withReadableSpan { $0[0] }
        #expect(count == 7 && first == UInt8(ascii: "p"))
    }
}

struct ByteBufferStorageTests {
    @Test func storageIsUniqueUntilASliceSharesIt() {
        var buffer = ByteBuffer()
        var unique = buffer.hasUniqueStorage()
        #expect(!unique, "no storage yet")
        buffer.writeString("abcdef")
        unique = buffer.hasUniqueStorage()
        #expect(unique)
        let slice = buffer.slice(at: 1, length: 3)
        unique = buffer.hasUniqueStorage()
        #expect(!unique, "the slice shares it")
        buffer.writeString("gh")
        unique = buffer.hasUniqueStorage()
        #expect(unique, "writing copied it")
        #expect(slice.readableBytesArray == Array("bcd".utf8))
        #expect(buffer.readableBytesArray == Array("abcdefgh".utf8))
    }

    @Test func writingIntoSharedSpaceDoesNotChangeTheOtherCopy() {
        var original = ByteBuffer(capacity: 64)
        original.writeString("head")
        var copy = original
        copy.withUnsafeWritableBytes { space in space[0] = UInt8(ascii: "X") }
        copy.moveWriterIndex(forwardBy: 1)
        original.writeString("!")
        #expect(copy.readableBytesArray == Array("headX".utf8))
        #expect(original.readableBytesArray == Array("head!".utf8))
    }

    @Test func equalityAndHashingSeeOnlyReadableBytes() {
        var first = ByteBuffer(string: "--payload")
        first.moveReaderIndex(forwardBy: 2)
        let second = ByteBuffer(bytes: Array("payload".utf8))
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(ByteBuffer() == ByteBuffer(capacity: 16))
    }
}
