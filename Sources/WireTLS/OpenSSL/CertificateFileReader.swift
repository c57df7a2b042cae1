import CWireOpenSSL

/// Reads certificates from bytes whose encoding is not declared: PEM when a `-----BEGIN` line is
/// present (every CERTIFICATE block, in order), otherwise one DER certificate (AFNetworking's
/// `.cer` files). Anything else is a `TLSError` naming the source and what is wrong with it.
enum CertificateFileReader {
    /// The certificates of `contents`; `source` (a path) names them in errors.
    static func certificates(contents: [UInt8], source: String) throws(TLSError) -> [Certificate] {
        guard !contents.isEmpty else { throw TLSError(.localCertificate, "\(source) is empty, not a certificate") }
        if contains(contents, "-----BEGIN ") { return try pem(contents, source: source) }
        return try der(contents, source: source)
    }

    /// Every certificate block of PEM text; a malformed block is an error, never a silent end.
    private static func pem(_ contents: [UInt8], source: String) throws(TLSError) -> [Certificate] {
        let outcome = contents.withUnsafeBytes { bytes -> Result<[Certificate], TLSError> in
            OpenSSLErrorQueue.clear()
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(clamping: bytes.count)) else {
                return .failure(
                    TLSError(.localCertificate, "cannot buffer \(source)", openSSLErrors: OpenSSLErrorQueue.drain().map(\.text)))
            }
            defer { BIO_free(bio) }
            var result: [Certificate] = []
            while let x509 = PEM_read_bio_X509(bio, nil, nil, nil) {
                defer { X509_free(x509) }
                guard let certificate = X509Reader.certificate(x509) else {
                    return .failure(
                        TLSError(
                            .localCertificate, "certificate \(result.count + 1) of \(source) cannot be re-encoded",
                            openSSLErrors: OpenSSLErrorQueue.drain().map(\.text)))
                }
                result.append(certificate)
            }
            // Reading stops with "no start line" once no certificate block is left; any other
            // reason means a block that looked like a certificate is broken.
            let errors = OpenSSLErrorQueue.drain()
            if let last = errors.last, last.library != ERR_LIB_PEM || last.reason != PEM_R_NO_START_LINE {
                return .failure(
                    TLSError(
                        .localCertificate, "PEM certificate \(result.count + 1) of \(source) is malformed",
                        openSSLErrors: errors.map(\.text)))
            }
            guard !result.isEmpty else {
                return .failure(TLSError(.localCertificate, "\(source) is PEM but holds no CERTIFICATE block"))
            }
            return .success(result)
        }
        return try outcome.get()
    }

    /// One DER certificate that fills `contents` exactly.
    private static func der(_ contents: [UInt8], source: String) throws(TLSError) -> [Certificate] {
        // DER certificates are an ASN.1 SEQUENCE: any other first byte is neither encoding.
        guard contents[0] == 0x30 else {
            throw TLSError(
                .localCertificate,
                "\(source) is neither a PEM certificate (no -----BEGIN line) nor a DER one (no ASN.1 SEQUENCE at byte 0)")
        }
        OpenSSLErrorQueue.clear()
        let (x509, consumed) = contents.withUnsafeBufferPointer { buffer -> (OpaquePointer?, Int) in
            guard let start = buffer.baseAddress else { return (nil, 0) }
            var cursor: UnsafePointer<UInt8>? = start
            let x509 = d2i_X509(nil, &cursor, buffer.count)
            return (x509, cursor.map { $0 - start } ?? 0)
        }
        guard let x509 else {
            throw TLSError(
                .localCertificate, "\(source) is not a DER certificate (and not PEM: no -----BEGIN line)",
                openSSLErrors: OpenSSLErrorQueue.drain().map(\.text))
        }
        defer { X509_free(x509) }
        guard consumed == contents.count else {
            throw TLSError(
                .localCertificate,
                "\(source) has \(contents.count - consumed) bytes after its DER certificate (at byte \(consumed))")
        }
        guard let certificate = X509Reader.certificate(x509) else {
            throw TLSError(
                .localCertificate, "the certificate of \(source) cannot be re-encoded",
                openSSLErrors: OpenSSLErrorQueue.drain().map(\.text))
        }
        return [certificate]
    }

    /// Whether `bytes` contain the ASCII `marker`.
    private static func contains(_ bytes: [UInt8], _ marker: String) -> Bool {
        let needle = Array(marker.utf8)
        guard bytes.count >= needle.count else { return false }
        return (0...(bytes.count - needle.count)).contains { start in
            bytes[start] == needle[0] && bytes[start..<(start + needle.count)].elementsEqual(needle)
        }
    }
}
