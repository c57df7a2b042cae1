import Glibc

/// A file that whole records are appended to from any thread, such as a TLS key log.
///
/// Each `append` is written with `write(2)` on an `O_APPEND` descriptor under one lock, so records from concurrent
/// writers never interleave, and other processes appending to the same file (two programs sharing one
/// `SSLKEYLOGFILE`) do not overwrite them. A new file is created readable by its owner only (0600, less the umask):
/// what is appended may be secret. An existing file keeps its mode and its contents.
package final class AppendingFile: Sendable {
    /// The path it was opened at.
    package let path: String
    private let descriptor: Lock<FileDescriptor>

    /// Opens `path` for appending, creating it with `permissions` when it does not exist.
    /// - Throws: `IOError` from `open(2)`.
    package init(path: String, permissions: mode_t = 0o600) throws(IOError) {
        self.path = path
        let raw = try systemCall("open") { open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, permissions) }
        descriptor = Lock(FileDescriptor(owning: raw))
    }

    /// Appends `bytes` whole.
    /// - Throws: `IOError` from `write(2)` (a full disk, a file removed from under a FUSE mount).
    package func append(_ bytes: [UInt8]) throws(IOError) {
        try descriptor.withLock { (file) throws(IOError) in try LocalFiles.writeAll(bytes, to: file.rawValue) }
    }
}
