import Glibc
import Wire

/// A failed read of a served file.
struct FileReadError: Error, CustomStringConvertible {
    let path: String
    let errno: Int32
    var description: String { "reading \(path) failed (errno \(errno), or the file shrank)" }
}

/// A regular file opened for reading at offsets. Reads block the loop briefly; served files are expected to sit in
/// the page cache, as with nginx without aio.
final class OpenFile {
    let path: String
    private let descriptor: Int32
    let size: Int
    let modifiedSeconds: Int

    init?(path: String) {
        // O_NONBLOCK: should the path have become a FIFO since it was resolved, open must not wait for a writer
        // (fstat below then refuses it); reads of a regular file are unaffected.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            Glibc.close(descriptor)
            return nil
        }
        self.path = path
        self.descriptor = descriptor
        self.size = Int(info.st_size)
        self.modifiedSeconds = Int(info.st_mtim.tv_sec)
    }

    /// Reads up to `count` bytes at `offset`.
    func read(at offset: Int, count: Int) throws -> ByteBuffer {
        guard count > 0 else { return ByteBuffer() }
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let result = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + filled, count - filled, off_t(offset + filled))
            }
            if result < 0 && errno == EINTR { continue }
            guard result >= 0 else { throw FileReadError(path: path, errno: errno) }
            if result == 0 { break }
            filled += result
        }
        bytes.removeLast(count - filled)
        return ByteBuffer(bytes: bytes)
    }

    func close() {
        Glibc.close(descriptor)
    }
}
