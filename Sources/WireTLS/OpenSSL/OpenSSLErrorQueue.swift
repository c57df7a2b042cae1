import CWireOpenSSL

/// OpenSSL's per-thread error queue, read and emptied after every failing call so no entry is
/// left for the next connection on the same loop thread to misread.
enum OpenSSLErrorQueue {
    /// One queued error.
    struct Entry {
        /// The packed code.
        let code: UInt
        /// The library that raised it (`ERR_LIB_SSL`, `ERR_LIB_X509`...).
        let library: Int32
        /// The reason within that library (`SSL_R_*`; alerts are `SSL_AD_REASON_OFFSET + alert`).
        let reason: Int32
        /// OpenSSL's text for it, `error:0A000086:SSL routines::certificate verify failed`.
        let text: String
    }

    /// Takes every queued entry, oldest first, leaving the queue empty.
    static func drain() -> [Entry] {
        var entries: [Entry] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var text = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &text, text.count)
            let length = text.firstIndex(of: 0) ?? text.count
            entries.append(
                Entry(
                    code: code, library: c_wire_tls_error_library(code), reason: c_wire_tls_error_reason(code),
                    text: String(decoding: text[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        return entries
    }

    /// Drops whatever is queued.
    static func clear() {
        ERR_clear_error()
    }
}
