import CWireLinux
import Glibc

/// What `fstat(2)` said of a regular file when it was opened.
struct RegularFileStatus: Sendable, Hashable {
    /// The size in bytes.
    let size: Int
    /// The last modification, in whole seconds since the Unix epoch.
    let modifiedSeconds: Int
}

extension Posix {
    /// Opens `path` and checks that it names a regular file: the one way `FileReader`, `AsyncFile` and `RegularFile`
    /// open files. The caller owns the descriptor returned.
    ///
    /// `O_NONBLOCK` is always added: should the path name a FIFO, `open(2)` must not wait for a writer (`fstat(2)`
    /// then refuses it); reads of a regular file are unaffected.
    /// - Parameters:
    ///   - path: The file's path.
    ///   - flags: `O_RDONLY`, or write flags; `O_CLOEXEC | O_NONBLOCK` are added.
    ///   - mode: The permissions of a file that `O_CREAT` makes.
    /// - Returns: The descriptor and what `fstat(2)` said.
    /// - Throws: `IOError` from `open(2)` or `fstat(2)`; `open` with `EISDIR` for anything but a regular file.
    static func openRegularFile(
        _ path: String, flags: CInt, mode: mode_t = 0o644
    ) throws(IOError) -> (descriptor: CInt, status: RegularFileStatus) {
        let fd = try systemCall("open") { Glibc.open(path, flags | O_CLOEXEC | O_NONBLOCK, mode) }
        var info = stat()
        do throws(IOError) {
            _ = try systemCall("fstat") { fstat(fd, &info) }
        } catch {
            try? close(fd)
            throw error
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            try? close(fd)
            throw IOError(syscall: "open", errno: Errno(rawValue: EISDIR))
        }
        return (fd, RegularFileStatus(size: Int(info.st_size), modifiedSeconds: Int(info.st_mtim.tv_sec)))
    }

    /// Reads up to `count` bytes at `offset` without moving the file's position (`pread(2)`), across short reads.
    /// - Returns: The bytes; fewer than `count` only at the end of the file.
    static func read(_ fd: CInt, at offset: Int, upTo count: Int) throws(IOError) -> ByteBuffer {
        var buffer = ByteBuffer(capacity: count)
        while buffer.readableBytes < count {
            let done = buffer.readableBytes
            let read = try buffer.withUnsafeWritableBytes { (space) throws(IOError) -> Int in
                try systemCall("pread") { pread(fd, space.baseAddress, min(space.count, count - done), off_t(offset + done)) }
            }
            if read == 0 { break }
            buffer.moveWriterIndex(forwardBy: read)
        }
        return buffer
    }
}
