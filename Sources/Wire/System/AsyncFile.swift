import CWireLinux
import Glibc
import Synchronization

/// A regular file whose every operation runs on a blocking-call thread, never on an event loop or a Swift
/// concurrency thread: for downloads written to disk, a disk cache, bodies read at an offset.
///
/// ```swift
/// let file = try await AsyncFile.open("/var/cache/app/entry.partial", mode: .truncate)
/// for try await chunk in response.body { try await file.write(chunk) }
/// try await file.sync()
/// try await file.close()
/// try await AsyncFile.rename("/var/cache/app/entry.partial", to: "/var/cache/app/entry")   // whole or absent
/// ```
///
/// The file owns its descriptor and closes it exactly once: on `close()`, or when the last reference goes. An
/// operation that is under way when `close()` is called finishes first (the descriptor is never closed under it, so
/// its number cannot be reused by another file mid-call); operations called after `close()` throw `EBADF`.
/// Operations called concurrently run in no particular order; call them one at a time for a sequential file.
public final class AsyncFile: Sendable {
    /// How a file is opened.
    public enum Mode: Sendable, Hashable {
        /// Reading only; the file must exist.
        case read
        /// Writing at the end; created (mode 0644) if missing, kept if present. The resumption of a download.
        case append
        /// Writing from the start; created if missing, emptied if present.
        case truncate
        /// Writing a new file; fails with `EEXIST` if one is there (`O_EXCL`).
        case createNew
    }

    private struct State {
        /// The descriptor, or -1 once closed.
        var descriptor: CInt
        /// Operations between taking the descriptor and giving it back.
        var inFlight = 0
        /// `close()` was called while operations were under way: the last one closes.
        var closeRequested = false
    }

    /// The path the file was opened with.
    public let path: String
    private let state: Lock<State>
    private let pool: BlockingPool

    private init(path: String, descriptor: CInt, pool: BlockingPool) {
        self.path = path
        self.pool = pool
        state = Lock(State(descriptor: descriptor))
    }

    deinit {
        let descriptor = state.withLock { $0.descriptor }
        if descriptor >= 0 { try? Posix.close(descriptor) }
    }

    /// Opens `path`.
    /// - Parameters:
    ///   - path: The file's path.
    ///   - mode: Reading, appending, truncating or creating.
    ///   - permissions: The mode bits a file created here gets (before the umask); 0644 by default, 0600 for a file
    ///     only its owner may read (a download in progress in a shared temporary directory).
    /// - Returns: The open file.
    /// - Throws: `IOError` from `open(2)` or `fstat(2)`; `EISDIR` for anything but a regular file.
    public static func open(_ path: String, mode: Mode, permissions: mode_t = 0o644) async throws(IOError) -> AsyncFile {
        let pool = BlockingPool.files
        let descriptor = try await pool.run { () throws(IOError) -> CInt in
            let flags: CInt =
                switch mode {
                case .read: O_RDONLY
                case .append: O_WRONLY | O_CREAT | O_APPEND
                case .truncate: O_WRONLY | O_CREAT | O_TRUNC
                case .createNew: O_WRONLY | O_CREAT | O_EXCL
                }
            return try Posix.openRegularFile(path, flags: flags, mode: permissions).descriptor
        }
        return AsyncFile(path: path, descriptor: descriptor, pool: pool)
    }

    /// Writes all of `bytes` at the current position (the end, for `.append`).
    /// - Throws: `IOError` from `write(2)` (`ENOSPC` when the disk is full).
    public func write(_ bytes: ByteBuffer) async throws(IOError) {
        guard bytes.readableBytes > 0 else { return }
        try await perform { (fd) throws(IOError) in
            try bytes.withUnsafeReadableBytes { (all) throws(IOError) in
                var offset = 0
                while offset < all.count {
                    offset += try systemCall("write") { Glibc.write(fd, all.baseAddress! + offset, all.count - offset) }
                }
            }
        }
    }

    /// Reads up to `count` bytes at `offset`, without moving the file's position.
    /// - Returns: The bytes; fewer than `count` only at the end of the file, none past it.
    /// - Throws: `IOError` from `pread(2)`.
    public func read(at offset: Int, upTo count: Int) async throws(IOError) -> ByteBuffer {
        guard count > 0, offset >= 0 else { return ByteBuffer() }
        return try await perform { (fd) throws(IOError) -> ByteBuffer in try Posix.read(fd, at: offset, upTo: count) }
    }

    /// The file's size now.
    /// - Throws: `IOError` from `fstat(2)`.
    public func size() async throws(IOError) -> Int {
        try await perform { (fd) throws(IOError) -> Int in
            var info = stat()
            _ = try systemCall("fstat") { fstat(fd, &info) }
            return Int(info.st_size)
        }
    }

    /// Writes what the kernel holds of the file to the disk (`fsync(2)`), so it survives a crash.
    public func sync() async throws(IOError) {
        try await perform { (fd) throws(IOError) in _ = try systemCall("fsync") { fsync(fd) } }
    }

    /// Closes the file once the operations under way are done. Closing twice does nothing.
    public func close() async throws(IOError) {
        let descriptor = state.withLock { state -> CInt in
            guard state.descriptor >= 0, !state.closeRequested else { return -1 }
            guard state.inFlight == 0 else {
                state.closeRequested = true
                return -1
            }
            defer { state.descriptor = -1 }
            return state.descriptor
        }
        guard descriptor >= 0 else { return }
        try await pool.run { () throws(IOError) in try Posix.close(descriptor) }
    }

    /// Renames `source` to `destination`, replacing it atomically (`rename(2)`): readers see the old file or the new
    /// one, never a part; then, unless told not to, syncs the destination's directory so the rename survives a crash
    /// of the system (a caller that checks what it reads back, such as a cache, can skip that journal commit).
    /// - Throws: `IOError` from `rename(2)`, or from opening and syncing the directory.
    public static func rename(_ source: String, to destination: String, syncingDirectory: Bool = true) async throws(IOError) {
        try await BlockingPool.files.run { () throws(IOError) in
            _ = try systemCall("rename") { Glibc.rename(source, destination) }
            guard syncingDirectory else { return }
            let directory =
                destination.lastIndex(of: "/").map { destination[..<$0].isEmpty ? "/" : String(destination[..<$0]) } ?? "."
            let fd = try systemCall("open") { Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
            defer { try? Posix.close(fd) }
            _ = try systemCall("fsync") { fsync(fd) }
        }
    }

    /// Gives the file at `source` the name `destination` too (`link(2)`), never replacing one: with `remove(source)`
    /// after it, a move that refuses to overwrite, which `rename(2)` cannot do.
    /// - Throws: `IOError` from `link(2)`: `EEXIST` when `destination` exists, `EXDEV` across file systems, `EPERM`
    ///   where the file system has no hard links.
    public static func link(_ source: String, to destination: String) async throws(IOError) {
        try await BlockingPool.files.run { () throws(IOError) in _ = try systemCall("link") { Glibc.link(source, destination) } }
    }

    /// Creates the directory `path` with `permissions` (before the umask) unless a directory is already there.
    /// - Throws: `IOError` from `mkdir(2)` (`EEXIST` only when something other than a directory has the name),
    ///   or from `stat(2)`.
    public static func makeDirectory(_ path: String, permissions: mode_t = 0o755) async throws(IOError) {
        try await BlockingPool.files.run { () throws(IOError) in
            if Glibc.mkdir(path, permissions) == 0 { return }
            let failure = Errno(rawValue: errno)
            var info = stat()
            guard failure.rawValue == EEXIST, stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                throw IOError(syscall: "mkdir", errno: failure)
            }
        }
    }

    /// Removes the file at `path` (`unlink(2)`).
    /// - Throws: `IOError` (`ENOENT` when there is none).
    public static func remove(_ path: String) async throws(IOError) {
        try await BlockingPool.files.run { () throws(IOError) in _ = try systemCall("unlink") { unlink(path) } }
    }

    /// Runs `body` with the descriptor on a pool thread, keeping it open until `body` returns.
    private func perform<T: Sendable>(_ body: @escaping @Sendable (CInt) throws(IOError) -> T) async throws(IOError) -> T {
        let descriptor = state.withLock { state -> CInt in
            guard state.descriptor >= 0, !state.closeRequested else { return -1 }
            state.inFlight += 1
            return state.descriptor
        }
        guard descriptor >= 0 else { throw IOError(syscall: "close", errno: Errno(rawValue: EBADF)) }
        let result = await pool.run { () -> Result<T, IOError> in Result { () throws(IOError) -> T in try body(descriptor) } }
        let closeNow = state.withLock { state -> CInt in
            state.inFlight -= 1
            guard state.inFlight == 0, state.closeRequested, state.descriptor >= 0 else { return -1 }
            defer { state.descriptor = -1 }
            return state.descriptor
        }
        if closeNow >= 0 { try? Posix.close(closeNow) }
        return try result.get()
    }
}

extension BlockingPool {
    /// The threads that run `AsyncFile`'s calls, apart from name resolution's.
    static let files = BlockingPool(name: "wire-files", maxThreads: 4)
}
