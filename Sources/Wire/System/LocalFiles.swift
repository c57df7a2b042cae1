import CWireLinux
import Glibc

/// What a path names, after following symbolic links (`stat(2)`).
package enum LocalFileKind: Equatable, Sendable {
    case regular
    case directory
    /// A device, socket, FIFO…
    case other
}

/// Blocking file-system calls for the command-line tool: whole-file reads and writes, standard streams, real paths.
/// They block the calling thread, so they are not for an event loop.
package enum LocalFiles {
    /// Writes all of `bytes` to `descriptor`, across partial writes.
    ///
    /// - Throws: `IOError` from `write(2)` (EPIPE when the reader went away and SIGPIPE is ignored, ENOSPC…).
    package static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: CInt) throws(IOError) {
        guard var next = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = try systemCall("write") { Glibc.write(descriptor, next, remaining) }
            next += written
            remaining -= written
        }
    }

    /// Writes all of `bytes` to `descriptor`.
    ///
    /// - Throws: `IOError` from `write(2)`.
    package static func writeAll(_ bytes: [UInt8], to descriptor: CInt) throws(IOError) {
        try bytes.withUnsafeBufferPointer { (buffer) throws(IOError) in
            try writeAll(UnsafeRawBufferPointer(buffer), to: descriptor)
        }
    }

    /// Reads `descriptor` to end of file (standard input, a pipe, a file).
    ///
    /// - Throws: `IOError` from `read(2)`.
    package static func readToEnd(_ descriptor: CInt) throws(IOError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = try chunk.withUnsafeMutableBufferPointer { (buffer) throws(IOError) in
                try systemCall("read") { Glibc.read(descriptor, buffer.baseAddress, buffer.count) }
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    /// The whole content of the file at `path`.
    ///
    /// - Throws: `IOError` from `open(2)` or `read(2)`.
    package static func contents(atPath path: String) throws(IOError) -> [UInt8] {
        var file = FileDescriptor(owning: try systemCall("open") { open(path, O_RDONLY | O_CLOEXEC) })
        defer { try? file.close() }
        return try readToEnd(file.rawValue)
    }

    /// The whole content of the regular file at `path` if it holds at most `maximumSize` bytes, read on the calling
    /// thread with as few calls as it takes: `open`, `fstat`, one `read` into an array of the file's size (more only
    /// if the kernel returns less) and `close`; when its modification time is more than `touchingAfter` seconds old,
    /// `futimens(2)` sets its times to now in between (a disk cache records a use that way, without a second path
    /// lookup, and at most once per interval). nil when it cannot be opened or read, is not a regular file, is larger,
    /// or ends before its size (it shrank while read).
    package static func smallFileContents(atPath path: String, maximumSize: Int, touchingAfter seconds: Int? = nil) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var file = FileDescriptor(owning: fd)
        defer { try? file.close() }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size >= 0, info.st_size <= maximumSize
        else { return nil }
        let size = Int(info.st_size)
        var complete = true
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            initialized = 0
            while initialized < size {
                let count = read(fd, buffer.baseAddress! + initialized, size - initialized)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    complete = false
                    return
                }
                initialized += count
            }
        }
        guard complete else { return nil }
        if let seconds, Int(time(nil)) - Int(info.st_mtim.tv_sec) > seconds { _ = futimens(fd, nil) }
        return bytes
    }

    /// Creates or truncates the file at `path` (mode 0644 before the umask) and writes `bytes` to it.
    ///
    /// - Throws: `IOError` from `open(2)`, `write(2)` or `close(2)` (where a deferred write error may show).
    package static func write(_ bytes: [UInt8], toPath path: String) throws(IOError) {
        var file = FileDescriptor(
            owning: try systemCall("open") {
                open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            })
        do {
            try writeAll(bytes, to: file.rawValue)
        } catch {
            try? file.close()
            throw error
        }
        try file.close()
    }

    /// The size in bytes of the file at `path`, following symbolic links; nil when nothing is there (or it cannot be
    /// reached).
    package static func size(atPath path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_size)
    }

    /// The size and modification time (Unix seconds) of the regular file `path` names without following a final
    /// symbolic link (`lstat(2)`); nil for anything else, or when nothing does. A disk cache's index is built from it.
    package static func regularFileStatus(atPath path: String) -> (size: Int, modified: Double)? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return (Int(info.st_size), Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
    }

    /// Sets the access and modification times of `path` to now (`utimensat(2)`); false when that fails. A disk
    /// cache records a use this way.
    package static func touch(atPath path: String) -> Bool {
        utimensat(AT_FDCWD, path, nil, 0) == 0
    }

    /// What `path` names, following symbolic links; nil when nothing does (or it cannot be reached).
    package static func kind(atPath path: String) -> LocalFileKind? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regular
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    /// `realpath(3)`: the absolute path with every symbolic link, `.` and `..` resolved; nil when a component is
    /// missing or cannot be searched.
    package static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The real path (`realpath(3)`) of the directory `path` names.
    ///
    /// - Throws: `IOError` from `realpath` (`ENOENT`, `EACCES`…), or `ENOTDIR` when the path names something else.
    package static func directoryRealPath(_ path: String) throws(IOError) -> String {
        guard let resolved = realpath(path, nil) else { throw IOError(syscall: "realpath", errno: .current) }
        defer { free(resolved) }
        let real = String(cString: resolved)
        guard kind(atPath: real) == .directory else { throw IOError(syscall: "realpath", errno: Errno(rawValue: ENOTDIR)) }
        return real
    }

    /// The working directory (`getcwd(3)`); nil if it was removed or its path is too long.
    package static func currentDirectory() -> String? {
        guard let path = getcwd(nil, 0) else { return nil }
        defer { free(path) }
        return String(cString: path)
    }
}
