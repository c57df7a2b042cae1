import Glibc

/// A file opened for sequential reading: request bodies sent from a file.
final class FileReader {
    private var descriptor: FileDescriptor
    /// The file's size when opened.
    let size: Int

    /// Opens `path` read-only.
    ///
    /// - Throws: `IOError` from `open(2)` or `fstat(2)`.
    init(path: String) throws(IOError) {
        let opened = try Posix.openRegularFile(path, flags: O_RDONLY)
        size = opened.status.size
        descriptor = FileDescriptor(owning: opened.descriptor)
    }

    /// Reads up to `count` bytes; an empty buffer at end of file.
    func read(upTo count: Int) throws(IOError) -> ByteBuffer {
        var buffer = ByteBuffer(capacity: count)
        let fd = descriptor.rawValue
        while true {
            switch try Posix.read(fd, into: &buffer, maxBytes: count) {
            case .processed: return buffer
            case .wouldBlock: continue  // regular files never block; kept for completeness
            }
        }
    }
}
