import Foundation

/// Entry files of `URLCache`'s format 2 built by hand, as a hostile or buggy writer could: whole files whose checksum
/// is right, so a rejection comes from the header's own checks. The layout is the one `CacheEntryCodec` documents.
enum ForgedCacheEntry {
    /// The preamble, header and body; lengths default to the true ones.
    static func file(
        header: [UInt8], body: [UInt8], version: UInt8 = 2, headerLength: Int? = nil,
        bodyLength: Int? = nil
    ) -> [UInt8] {
        var bytes = Array("WIRECACH".utf8) + [version]
        bytes += integer(UInt64(headerLength ?? header.count), width: 4)
        bytes += integer(UInt64(bodyLength ?? body.count), width: 8)
        bytes += integer(checksum(header + body), width: 8)
        return bytes + header + body
    }

    /// A header: status, dates, URL, fields, Vary values (nil: absent), user info.
    static func header(
        status: UInt64 = 200, requestDate: Double = Date().timeIntervalSince1970,
        responseDate: Double = Date().timeIntervalSince1970, url: String,
        fields: [(String, String)] = [("Cache-Control", "max-age=600")], vary: [(String, String?)] = [],
        userInfo: [(String, String)] = []
    ) -> [UInt8] {
        var bytes =
            integer(status, width: 2) + integer(requestDate.bitPattern, width: 8) + integer(responseDate.bitPattern, width: 8)
        bytes += string(url)
        bytes += integer(UInt64(fields.count), width: 4)
        for (name, value) in fields { bytes += string(name) + string(value) }
        bytes += integer(UInt64(vary.count), width: 4)
        for (name, value) in vary { bytes += string(name) + (value.map { [1] + string($0) } ?? [0]) }
        bytes += integer(UInt64(userInfo.count), width: 4)
        for (key, value) in userInfo { bytes += string(key) + string(value) }
        return bytes
    }

    static func integer(_ value: UInt64, width: Int) -> [UInt8] {
        (0..<width).map { UInt8(truncatingIfNeeded: value >> UInt64((width - 1 - $0) * 8)) }
    }

    static func string(_ text: String) -> [UInt8] { integer(UInt64(text.utf8.count), width: 4) + Array(text.utf8) }

    /// The format's checksum of header and body, written out again from its description.
    static func checksum(_ bytes: [UInt8]) -> UInt64 {
        let prime1: UInt64 = 0x9e37_79b1_85eb_ca87
        let prime2: UInt64 = 0xc2b2_ae3d_27d4_eb4f
        let prime3: UInt64 = 0x1656_67b1_9e37_79f9
        func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 { value << bits | value >> (64 - bits) }
        func round(_ lane: UInt64, _ input: UInt64) -> UInt64 { rotate(lane &+ input &* prime2, 31) &* prime1 }
        func word(_ offset: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << UInt64($1 * 8) } }
        var lanes: [UInt64] = [prime1 &+ prime2, prime2, 0, 0 &- prime1]
        var offset = 0
        while bytes.count - offset >= 32 {
            for lane in 0..<4 { lanes[lane] = round(lanes[lane], word(offset + lane * 8)) }
            offset += 32
        }
        var hash = rotate(lanes[0], 1) &+ rotate(lanes[1], 7) &+ rotate(lanes[2], 12) &+ rotate(lanes[3], 18)
        hash = (hash ^ UInt64(bytes.count)) &* prime1
        while bytes.count - offset >= 8 {
            hash = rotate(hash ^ round(0, word(offset)), 27) &* prime1 &+ prime3
            offset += 8
        }
        while offset < bytes.count {
            hash = rotate(hash ^ UInt64(bytes[offset]) &* prime3, 11) &* prime1
            offset += 1
        }
        hash ^= hash >> 33
        hash = hash &* prime2
        hash ^= hash >> 29
        return hash
    }
}
