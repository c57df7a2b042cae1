import CWireOpenSSL

/// Turns OpenSSL's X509 objects into `Certificate` values, and reads PEM and DER files. The
/// only place certificates are parsed; nothing it returns refers to OpenSSL memory.
enum X509Reader {
    /// A `Certificate` of an X509 the caller keeps owning; nil if it cannot be encoded.
    static func certificate(_ x509: OpaquePointer) -> Certificate? {
        guard let der = encoded(x509) else { return nil }
        var dnsNames: [String] = []
        var ipAddresses: [String] = []
        if let names = c_wire_tls_alt_names(x509) {
            defer { c_wire_tls_names_free(names) }
            for index in 0..<c_wire_tls_names_count(names) {
                var data: UnsafePointer<UInt8>?
                var length: Int32 = 0
                let type = c_wire_tls_names_at(names, index, &data, &length)
                guard let data, length > 0 else { continue }
                let bytes = Array(UnsafeBufferPointer(start: data, count: Int(length)))
                if type == GEN_DNS {
                    dnsNames.append(String(decoding: bytes, as: UTF8.self))
                } else if type == GEN_IPADD, let text = ipText(bytes) {
                    ipAddresses.append(text)
                }
            }
        }
        var notBefore: Int64 = 0
        var notAfter: Int64 = 0
        _ = c_wire_tls_time_to_unix(X509_get0_notBefore(x509), &notBefore)
        _ = c_wire_tls_time_to_unix(X509_get0_notAfter(x509), &notAfter)
        let keyHash = sha256(publicKeyInfo(x509) ?? [])
        return Certificate(
            der: der, subject: name(X509_get_subject_name(x509)), issuer: name(X509_get_issuer_name(x509)),
            notBefore: notBefore, notAfter: notAfter, dnsNames: dnsNames, ipAddresses: ipAddresses,
            publicKeySHA256: keyHash, sha256: sha256(der), pin: "sha256/" + base64(keyHash))
    }

    /// Parses DER bytes.
    static func certificate(der: [UInt8]) throws(TLSError) -> Certificate {
        guard let x509 = decoded(der) else {
            throw TLSError(
                .localCertificate, "the bytes are not a DER certificate", openSSLErrors: OpenSSLErrorQueue.drain().map(\.text))
        }
        defer { X509_free(x509) }
        guard let certificate = certificate(x509) else {
            throw TLSError(
                .localCertificate, "the certificate cannot be re-encoded", openSSLErrors: OpenSSLErrorQueue.drain().map(\.text))
        }
        return certificate
    }

    /// An owned X509 from DER bytes (free with X509_free), or nil.
    static func decoded(_ der: [UInt8]) -> OpaquePointer? {
        der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let x509 = d2i_X509(nil, &cursor, buffer.count) else { return nil }
            return x509
        }
    }

    /// Every certificate in a PEM file.
    static func certificates(pemFile path: String) throws(TLSError) -> [Certificate] {
        guard let bio = BIO_new_file(path, "r") else {
            throw TLSError(.localCertificate, "cannot open \(path)", openSSLErrors: OpenSSLErrorQueue.drain().map(\.text))
        }
        defer { BIO_free(bio) }
        var result: [Certificate] = []
        while let x509 = PEM_read_bio_X509(bio, nil, nil, nil) {
            if let certificate = certificate(x509) { result.append(certificate) }
            X509_free(x509)
        }
        // The loop ends on "no start line" at the end of the file: expected, not an error.
        OpenSSLErrorQueue.clear()
        guard !result.isEmpty else { throw TLSError(.localCertificate, "no PEM certificate in \(path)") }
        return result
    }

    /// The certificates of an OpenSSL stack (borrowed), in order.
    static func certificates(stack: OpaquePointer?) -> [Certificate] {
        guard let stack else { return [] }
        return (0..<c_wire_tls_stack_count(stack)).compactMap { index in
            c_wire_tls_stack_at(stack, index).flatMap { certificate($0) }
        }
    }

    /// A distinguished name as RFC 2253 text.
    static func name(_ name: OpaquePointer?) -> String {
        guard let name, let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard X509_NAME_print_ex(bio, name, 0, c_wire_tls_rfc2253_flags()) >= 0 else { return "" }
        return String(decoding: drain(bio), as: UTF8.self)
    }

    /// Everything readable in a memory BIO.
    static func drain(_ bio: OpaquePointer) -> [UInt8] {
        let pending = Int(BIO_ctrl_pending(bio))
        guard pending > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: pending)
        let read = bytes.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32($0.count)) }
        return Array(bytes.prefix(max(0, Int(read))))
    }

    private static func encoded(_ x509: OpaquePointer) -> [UInt8]? {
        let length = i2d_X509(x509, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_X509(x509, &cursor)
        }
        return written == length ? der : nil
    }

    private static func publicKeyInfo(_ x509: OpaquePointer) -> [UInt8]? {
        guard let key = X509_get_X509_PUBKEY(x509) else { return nil }
        let length = i2d_X509_PUBKEY(key, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_X509_PUBKEY(key, &cursor)
        }
        return written == length ? der : nil
    }

    /// SHA-256 of `bytes`.
    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha256(), nil)
        }
        return ok == 1 ? Array(digest.prefix(Int(length))) : []
    }

    /// Standard base64 with padding.
    static func base64(_ bytes: [UInt8]) -> String {
        guard !bytes.isEmpty else { return "" }
        var output = [UInt8](repeating: 0, count: (bytes.count + 2) / 3 * 4 + 1)
        let length = EVP_EncodeBlock(&output, bytes, Int32(bytes.count))
        return String(decoding: output.prefix(Int(max(0, length))), as: UTF8.self)
    }

    /// An IP SAN's text: dotted quad, or RFC 5952 IPv6 (the longest run of zero groups as `::`).
    static func ipText(_ bytes: [UInt8]) -> String? {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        guard bytes.count == 16 else { return nil }
        let groups = (0..<8).map { Int(bytes[2 * $0]) << 8 | Int(bytes[2 * $0 + 1]) }
        var bestStart = -1, bestLength = 0, start = -1
        for index in 0...8 {
            if index < 8 && groups[index] == 0 {
                if start < 0 { start = index }
            } else if start >= 0 {
                if index - start > bestLength && index - start > 1 { bestStart = start; bestLength = index - start }
                start = -1
            }
        }
        func hex(_ range: Range<Int>) -> String { range.map { String(groups[$0], radix: 16) }.joined(separator: ":") }
        guard bestStart >= 0 else { return hex(0..<8) }
        return hex(0..<bestStart) + "::" + hex((bestStart + bestLength)..<8)
    }
}
