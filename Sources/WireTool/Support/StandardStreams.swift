import Glibc
import Wire

/// Messages to standard output and standard error, written straight through with `write(2)` (no buffer to flush,
/// so a launcher waiting for `listening on …` sees it at once).
enum StandardStreams {
    /// Writes `text` to standard output. A failure (a closed pipe) is ignored: there is nowhere left to report it.
    static func output(_ text: String) {
        write(Array(text.utf8), to: STDOUT_FILENO)
    }

    /// Writes `text` to standard error, ignoring a failure as `output` does.
    static func error(_ text: String) {
        write(Array(text.utf8), to: STDERR_FILENO)
    }

    /// Writes `bytes` to standard output, ignoring a failure.
    static func output(_ bytes: [UInt8]) {
        write(bytes, to: STDOUT_FILENO)
    }

    private static func write(_ bytes: [UInt8], to descriptor: CInt) {
        try? LocalFiles.writeAll(bytes, to: descriptor)
    }
}
