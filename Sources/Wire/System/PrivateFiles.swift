import CWireLinux
import Glibc

/// Files that may hold secrets (cookie jars, cache entries): created readable by their owner only, rewritten whole
/// without losing the mode the user gave them.
extension LocalFiles {
    /// Replaces the content of the file at `path` with `bytes` so that a reader sees the old file or the new one,
    /// never a part: the bytes go to a new file beside it (`O_EXCL`), which is synced, closed and renamed over it.
    ///
    /// A new file gets `permissions` (0600 by default, less what the umask removes). An existing regular file keeps
    /// its permission bits exactly, and its owner and group where the process may keep them (a group that cannot be
    /// kept loses its bits rather than pass them to another group): `rename(2)` puts a new inode in its place, which
    /// would otherwise take the default mode, as curl keeps a cookie jar's. A symbolic link stays and the file it
    /// names is replaced; something that is not a regular file (`/dev/stdout`, a FIFO) is written in place, as curl
    /// writes there.
    ///
    /// - Throws: `IOError` from `open(2)`, `write(2)`, `fsync(2)`, `close(2)` or `rename(2)`; the temporary file is
    ///   removed then.
    package static func replaceContents(atPath path: String, with bytes: [UInt8], permissions: mode_t = 0o600) throws(IOError) {
        var target = path
        var info = stat()
        var existing: stat?
        if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK, let resolved = realPath(path) { target = resolved }
        if stat(target, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFREG else {
                var file = FileDescriptor(owning: try systemCall("open") { open(target, O_WRONLY | O_TRUNC | O_CLOEXEC) })
                do { try writeAll(bytes, to: file.rawValue) } catch {
                    try? file.close()
                    throw error
                }
                try file.close()
                return
            }
            existing = info
        }
        let slash = target.utf8.lastIndex(of: UInt8(ascii: "/"))
        let directory = slash.map { String(target[...$0]) } ?? ""
        let name = slash.map { String(target[target.utf8.index(after: $0)...]) } ?? target
        let temporary = directory + "." + name + "." + String(UInt64.random(in: 0 ... .max), radix: 16) + ".tmp"
        var file = FileDescriptor(
            owning: try systemCall("open") {
                open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, permissions)
            })
        do throws(IOError) {
            if let existing { try copyOwnershipAndMode(of: existing, to: file.rawValue) }
            try writeAll(bytes, to: file.rawValue)
            _ = try systemCall("fsync") { fsync(file.rawValue) }
            try file.close()
            _ = try systemCall("rename") { rename(temporary, target) }
        } catch {
            if file.isOpen { try? file.close() }
            unlink(temporary)
            throw error
        }
    }

    /// Gives the new file `descriptor` the owner, group and permission bits of the old one (`existing`); the set-ID
    /// bits are not copied.
    private static func copyOwnershipAndMode(of existing: stat, to descriptor: CInt) throws(IOError) {
        var mode = existing.st_mode & 0o1777
        var created = stat()
        _ = try systemCall("fstat") { fstat(descriptor, &created) }
        if created.st_uid != existing.st_uid || created.st_gid != existing.st_gid {
            // Only root gives a file away; the group is kept when the process is in it. What cannot be kept is
            // left as the new file has it.
            _ = fchown(descriptor, existing.st_uid, existing.st_gid)
            _ = try systemCall("fstat") { fstat(descriptor, &created) }
            if created.st_gid != existing.st_gid { mode &= ~0o070 }
        }
        _ = try systemCall("fchmod") { fchmod(descriptor, mode) }
    }

    /// Creates the directory `path` and every missing directory above it with `permissions` (0700 by default, less
    /// what the umask removes); directories already there are left as they are.
    ///
    /// - Throws: `IOError` from `mkdir(2)`: `EEXIST` when something other than a directory has one of the names,
    ///   `EACCES`, `ENOENT` for an empty path.
    package static func makeDirectories(atPath path: String, permissions: mode_t = 0o700) throws(IOError) {
        if kind(atPath: path) == .directory { return }
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        if let slash = trimmed.utf8.lastIndex(of: UInt8(ascii: "/")), slash != trimmed.startIndex {
            let parent = String(trimmed[..<slash])
            if kind(atPath: parent) == nil { try makeDirectories(atPath: parent, permissions: permissions) }
        }
        if mkdir(String(trimmed), permissions) == 0 { return }
        let failure = Errno.current
        // Another process may have made it in between.
        guard failure.rawValue == EEXIST, kind(atPath: String(trimmed)) == .directory else {
            throw IOError(syscall: "mkdir", errno: failure)
        }
    }
}
