import CWireOpenSSL

/// Message digests from OpenSSL's EVP interface, for Wire's tools (`wire request --raw` hashes the bodies it
/// receives) and HTTP Digest authentication (RFC 7616, in WireClient); not API.
package enum MessageDigest {
    /// The hash functions RFC 7616 names for Digest authentication.
    package enum Algorithm: Sendable, Hashable {
        case md5
        case sha256
        /// SHA-512/256 (FIPS 180-4), RFC 7616's `SHA-512-256`.
        case sha512_256
    }

    /// The digest of `bytes` with `algorithm`; empty if OpenSSL refuses (an algorithm its configuration disables).
    package static func digest(_ bytes: [UInt8], _ algorithm: Algorithm) -> [UInt8] {
        let method: OpaquePointer? =
            switch algorithm {
            case .md5: EVP_md5()
            case .sha256: EVP_sha256()
            case .sha512_256: EVP_sha512_256()
            }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, method, nil)
        }
        return ok == 1 ? Array(digest.prefix(Int(length))) : []
    }

    /// The digest of `bytes` with `algorithm` as lower-case hexadecimal digits.
    package static func hexDigest(_ bytes: [UInt8], _ algorithm: Algorithm) -> String {
        hex(digest(bytes, algorithm))
    }

    /// SHA-256 of `bytes`, 32 bytes.
    package static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        X509Reader.sha256(bytes)
    }

    /// SHA-256 of `bytes` as 64 lower-case hexadecimal digits.
    package static func sha256Hex(_ bytes: [UInt8]) -> String {
        hex(sha256(bytes))
    }

    /// `bytes` as lower-case hexadecimal digits.
    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
