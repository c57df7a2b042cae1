/// Message digests from OpenSSL's EVP interface, for Wire's tools (`wire request --raw` hashes the bodies it
/// receives); not API.
package enum MessageDigest {
    /// SHA-256 of `bytes`, 32 bytes.
    package static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        X509Reader.sha256(bytes)
    }

    /// SHA-256 of `bytes` as 64 lower-case hexadecimal digits.
    package static func sha256Hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in sha256(bytes) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
