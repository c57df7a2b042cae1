import CWireOpenSSL
import Glibc
import Wire

/// `SSLKEYLOGFILE`: when the variable names a file, every TLS connection Wire makes or accepts appends its secrets
/// there in the NSS key log format (one `LABEL client_random secret` line per secret), which Wireshark and `tshark`
/// read to decrypt a capture. A debugging aid, as in curl, Firefox and Chrome: anyone who can read the file can
/// read the traffic, so it is created 0600 and nothing is logged unless the variable is set.
///
/// The variable is read once, when the first TLS context is made; a file that cannot be opened is reported once on
/// standard error and the connections go on without a key log.
enum TLSKeyLog {
    /// The open key log, or nil when the variable is unset, empty, or names a file that cannot be opened.
    static let file: AppendingFile? = {
        guard let path = ProcessEnvironment.value("SSLKEYLOGFILE"), !path.isEmpty else { return nil }
        do {
            return try AppendingFile(path: path)
        } catch {
            Posix.writeToStandardError("wire: SSLKEYLOGFILE: cannot open \(path): \(error); TLS secrets are not logged\n")
            return nil
        }
    }()

    /// Logs the secrets of every connection made from `context`, when there is a key log.
    static func install(on context: OpaquePointer) {
        guard file != nil else { return }
        SSL_CTX_set_keylog_callback(context) { _, line in
            guard let line else { return }
            TLSKeyLog.append(line)
        }
    }

    /// Appends one line OpenSSL gave (NUL-terminated, without its newline). A write that fails loses that line
    /// only: the connection is not the log's to break.
    private static func append(_ line: UnsafePointer<CChar>) {
        let length = strlen(line)
        var record = [UInt8](repeating: 0x0A, count: length + 1)
        line.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
            for index in 0..<length { record[index] = bytes[index] }
        }
        try? file?.append(record)
    }
}
