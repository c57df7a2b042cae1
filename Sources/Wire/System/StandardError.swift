import Glibc

extension Posix {
    /// Writes `text` to standard error in one `write(2)`, ignoring failure: for warnings that must not
    /// themselves fail (a closed or full standard error loses the warning, nothing else).
    package static func writeToStandardError(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
