import Glibc

/// A file opened for sequential reading: request bodies and static files.
final class FileReader {
    private var descriptor: FileDescriptor
    /// The file's size when opened.
    let size: Int

    /// Opens `path` read-only.
    ///
    /// - Throws: `IOError` from `open(2)` or `fstat(2)`.
    init(path: String) throws(IOError) {
        let fd = try systemCall("open") { open(path, O_RDONLY | O_CLOEXEC) }
        var opened = FileDescriptor(owning: fd)
        var info = stat()
        do {
            _ = try systemCall("fstat") { fstat(fd, &info) }
        } catch {
            try? opened.close()
            throw error
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            try? opened.close()
            throw IOError(syscall: "open", errno: Errno(rawValue: EISDIR))
        }
        size = Int(info.st_size)
        descriptor = opened
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
