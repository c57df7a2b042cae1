import Glibc
@_spi(Locking) import Wire

/// Where a transfer's bytes go: standard output, standard error, or a file opened for one transfer.
///
/// Each write goes straight to the descriptor with `write(2)`, in the chunk it came in: no buffer in between, so a
/// body of any size streams through in flat memory and a reader of standard output sees bytes as they arrive. The one
/// exception is `holdingStandardOutput()`, for `-Z`: a transfer's standard output kept whole until it ends, so that
/// transfers running at once never mix their bodies.
///
/// Sendable: its fields never change after `init`, `write(2)` may be called from any thread, and the held bytes are
/// behind a lock.
final class OutputSink: Sendable {
    /// Standard output, for bodies and `--json-summary`.
    static var standardOutput: OutputSink {
        OutputSink(descriptor: STDOUT_FILENO, path: "standard output", owned: false)
    }
    /// Standard error, for `-v`, the progress bar and failure lines.
    static var standardError: OutputSink { OutputSink(descriptor: STDERR_FILENO, path: "standard error", owned: false) }

    /// The descriptor written to.
    let descriptor: CInt
    /// What the sink is, for messages.
    let path: String
    private let owned: Bool
    /// Whether writes are kept in `held` until `release()` instead of going to the descriptor.
    private let holds: Bool
    private let held = Lock<[UInt8]>([])
    /// Held output is released under this lock, so two transfers' bodies never interleave on standard output.
    private static let releasing = Lock(())

    private init(descriptor: CInt, path: String, owned: Bool, holds: Bool = false) {
        self.descriptor = descriptor
        self.path = path
        self.owned = owned
        self.holds = holds
    }

    /// Standard output for one transfer among several running at once (`-Z`): every write is kept in memory, and
    /// `release()` writes them out in one piece when the transfer is over.
    static func holdingStandardOutput() -> OutputSink {
        OutputSink(descriptor: STDOUT_FILENO, path: "standard output", owned: false, holds: true)
    }

    /// Writes the bytes kept so far (for a sink of `holdingStandardOutput()`) to standard output, whole.
    ///
    /// - Throws: `TransferFailure` with status 23.
    func release() throws(TransferFailure) {
        guard holds else { return }
        let bytes = held.withLock { held in
            let bytes = held
            held = []
            return bytes
        }
        guard !bytes.isEmpty else { return }
        try Self.releasing.withLock { _ throws(TransferFailure) in
            try bytes.withUnsafeBufferPointer { bytes throws(TransferFailure) in try writeThrough(bytes) }
        }
    }

    /// Creates or truncates the file at `path` (`-` is standard output); with `appending`, opens it to write at its
    /// end instead (`-C -`); with `exclusive`, fails when the file is there already (`-J`).
    ///
    /// - Throws: `TransferFailure` with curl's write-error status (23), naming the system error.
    static func file(_ path: String, appending: Bool = false, exclusive: Bool = false) throws(TransferFailure) -> OutputSink {
        if path == "-" { return .standardOutput }
        let mode = exclusive ? O_EXCL : appending ? O_APPEND : O_TRUNC
        let descriptor = open(path, O_WRONLY | O_CREAT | mode | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            throw TransferFailure(status: ExitStatus.writeError, message: "cannot create \(path): \(systemErrorText(code))")
        }
        return OutputSink(descriptor: descriptor, path: path, owned: true)
    }

    deinit {
        if owned { close(descriptor) }
    }

    /// Cuts the file back to its first `length` bytes (`ftruncate(2)`): an append undone.
    ///
    /// - Throws: `TransferFailure` with status 23.
    func truncate(to length: Int) throws(TransferFailure) {
        guard ftruncate(descriptor, off_t(length)) == 0 else {
            let code = errno
            throw TransferFailure(status: ExitStatus.writeError, message: "cannot restore \(path): \(systemErrorText(code))")
        }
    }

    /// Whether the descriptor is a terminal.
    var isTerminal: Bool { isatty(descriptor) == 1 }

    /// Writes the buffer's readable bytes.
    ///
    /// - Throws: `TransferFailure` with status 23 (a full disk, a closed pipe).
    func write(_ buffer: ByteBuffer) throws(TransferFailure) {
        try buffer.withReadableSpan { span throws(TransferFailure) in
            try span.withUnsafeBufferPointer { bytes throws(TransferFailure) in try write(bytes) }
        }
    }

    /// Writes `bytes`.
    ///
    /// - Throws: `TransferFailure` with status 23.
    func write(_ bytes: [UInt8]) throws(TransferFailure) {
        try bytes.withUnsafeBufferPointer { bytes throws(TransferFailure) in try write(bytes) }
    }

    /// Writes a string's UTF-8 bytes.
    ///
    /// - Throws: `TransferFailure` with status 23.
    func write(_ text: String) throws(TransferFailure) {
        try write(Array(text.utf8))
    }

    private func write(_ bytes: UnsafeBufferPointer<UInt8>) throws(TransferFailure) {
        if holds {
            held.withLock { $0.append(contentsOf: bytes) }
            return
        }
        try writeThrough(bytes)
    }

    private func writeThrough(_ bytes: UnsafeBufferPointer<UInt8>) throws(TransferFailure) {
        do {
            try LocalFiles.writeAll(UnsafeRawBufferPointer(bytes), to: descriptor)
        } catch {
            // The tool ignores SIGPIPE, so a reader that went away shows up here as EPIPE, as in curl.
            throw TransferFailure(
                status: ExitStatus.writeError,
                message: "failure writing to \(path): \(systemErrorText(error.errno.rawValue))")
        }
    }
}

/// `strerror(3)`: the system's words for an errno value, read right after the call that failed (anything run in
/// between, even building a message, may change `errno`).
func systemErrorText(_ code: CInt) -> String {
    String(cString: strerror(code))
}
