import Glibc

/// A regular file opened read-only, as a server sends it: its size and modification time as opened, reads at
/// offsets, and regions of it that a response body can carry (`FileRegion`), which plain connections hand to the
/// kernel with `sendfile(2)`.
///
/// ```swift
/// let file = try RegularFile(path: "/srv/site/video.mp4")
/// try await response.respond(HTTPResponseHead(status: .ok), file: file.region())
/// ```
///
/// The file owns its descriptor and closes it exactly once, when the last reference goes: the handler's and those of
/// the regions still queued on a connection (a connection drops its regions when it closes, whether the peer reset
/// it or the server shut down). Opening and reading block the calling thread briefly: served files are expected to
/// sit in the page cache, as with nginx without aio.
public final class RegularFile: Sendable {
    /// The path the file was opened with.
    public let path: String
    /// The size in bytes when the file was opened.
    public let size: Int
    /// The last modification when the file was opened, in whole seconds since the Unix epoch.
    public let modifiedSeconds: Int
    private let descriptor: FileDescriptor

    /// Opens `path` read-only.
    /// - Parameter path: The file's path.
    /// - Throws: `IOError` from `open(2)` or `fstat(2)`; `open` with `EISDIR` for anything but a regular file
    ///   (a directory, a FIFO, a device), which is never opened in a way that could block.
    public init(path: String) throws(IOError) {
        let opened = try Posix.openRegularFile(path, flags: O_RDONLY)
        self.path = path
        self.size = opened.status.size
        self.modifiedSeconds = opened.status.modifiedSeconds
        self.descriptor = FileDescriptor(owning: opened.descriptor)
    }

    /// The raw descriptor, for the system calls that send the file; open for the object's whole life.
    package var rawDescriptor: CInt { descriptor.rawValue }

    /// Reads up to `count` bytes at `offset`, without moving any file position.
    /// - Parameters:
    ///   - offset: Where to start, from the file's beginning.
    ///   - count: How many bytes at most.
    /// - Returns: The bytes; fewer than `count` only at the end of the file, none past it.
    /// - Throws: `IOError` from `pread(2)`.
    public func read(at offset: Int, upTo count: Int) throws(IOError) -> ByteBuffer {
        guard count > 0, offset >= 0 else { return ByteBuffer() }
        return try Posix.read(descriptor.rawValue, at: offset, upTo: count)
    }

    /// A region of the file, by default all of it as opened.
    /// - Parameter range: The byte offsets; must lie within `0...size`.
    /// - Returns: The region.
    public func region(_ range: Range<Int>? = nil) -> FileRegion {
        let range = range ?? 0..<size
        precondition(range.lowerBound >= 0 && range.upperBound <= size, "region \(range) outside a file of \(size) bytes")
        return FileRegion(file: self, offset: range.lowerBound, count: range.count)
    }
}

/// Bytes of a `RegularFile`, from `offset` for `count` bytes: a response body (`HTTPResponseWriter.write(_:)`) that a
/// plain connection sends with `sendfile(2)` and a TLS connection reads and encrypts. A region keeps its file open.
public struct FileRegion: Sendable {
    /// The file.
    public let file: RegularFile
    /// Where the region starts.
    public let offset: Int
    /// How many bytes it holds.
    public let count: Int
}

/// A file that ended before a region of it could be sent: it shrank after it was opened.
public struct FileTruncatedError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file's path.
    public let path: String
    /// The offset at which it ended, where bytes of the region were still due.
    public let offset: Int

    package init(path: String, offset: Int) {
        self.path = path
        self.offset = offset
    }

    /// `/srv/a.bin ended at byte 4096, inside the region being sent`.
    public var description: String { "\(path) ended at byte \(offset), inside the region being sent" }
}
