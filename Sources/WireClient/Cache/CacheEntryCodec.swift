import FoundationEssentials
import Wire

/// One disk entry as bytes: a fixed preamble (magic with the format version, header and body lengths, a checksum of
/// both), a JSON header (URL, status, fields, dates, Vary values, user info) and the body. Decoding checks every
/// length against the file's size, the checksum and the URL, so a torn, foreign or colliding file is a miss, never a
/// trap and never a wrong body.
enum CacheEntryCodec {
    /// `WIRECACHE` and the format version 1.
    static let magic: [UInt8] = Array("WIRECACH".utf8) + [1]
    /// Magic, header length (4 bytes), body length (8), checksum (8), all big-endian.
    static let preambleSize = magic.count + 4 + 8 + 8

    private struct Header: Codable {
        var url: String
        var status: Int
        var fields: [[String]]
        var requestDate: Double
        var responseDate: Double
        var vary: [String: String?]
        var userInfo: [String: String]
    }

    /// The bytes of `entry` stored under `url`.
    static func encode(_ entry: CachedResponse, url: String) -> [UInt8]? {
        let header = Header(url: url, status: entry.response.statusCode,
                            fields: entry.response.headers.map { [$0.name, $0.value] },
                            requestDate: entry.requestDate.timeIntervalSince1970,
                            responseDate: entry.responseDate.timeIntervalSince1970,
                            vary: entry.varyValues, userInfo: entry.userInfo)
        guard let json = try? JSONEncoder().encode(header) else { return nil }
        var bytes = magic
        bytes.reserveCapacity(preambleSize + json.count + entry.data.count)
        append(UInt64(json.count), width: 4, to: &bytes)
        append(UInt64(entry.data.count), width: 8, to: &bytes)
        var hash = Checksum()
        hash.add(json)
        hash.add(entry.data)
        append(hash.value, width: 8, to: &bytes)
        bytes.append(contentsOf: json)
        bytes.append(contentsOf: entry.data)
        return bytes
    }

    /// The entry in `bytes` if they are a whole, intact entry for `url`; nil otherwise.
    static func decode(_ all: [UInt8], url: String) -> CachedResponse? {
        guard all.count >= preambleSize, all.prefix(magic.count).elementsEqual(magic) else { return nil }
        var cursor = all.startIndex + magic.count
        let headerLength = read(all, &cursor, width: 4)
        let bodyLength = read(all, &cursor, width: 8)
        let checksum = read(all, &cursor, width: 8)
        guard headerLength <= UInt64(all.count), bodyLength <= UInt64(all.count),
              UInt64(preambleSize) + headerLength + bodyLength == UInt64(all.count) else { return nil }
        let headerBytes = all[cursor..<(cursor + Int(headerLength))]
        let bodyBytes = all[(cursor + Int(headerLength))...]
        var hash = Checksum()
        hash.add(headerBytes)
        hash.add(bodyBytes)
        guard hash.value == checksum, let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes)),
              header.url == url, let responseURL = URL(string: header.url), (100...999).contains(header.status)
        else { return nil }
        var fields = HTTPHeaders()
        for field in header.fields {
            guard field.count == 2 else { return nil }
            fields.add(name: field[0], value: field[1])
        }
        var entry = CachedResponse(response: ClientResponse(url: responseURL, statusCode: header.status, headers: fields),
                                   data: Data(bodyBytes), requestDate: Date(timeIntervalSince1970: header.requestDate),
                                   responseDate: Date(timeIntervalSince1970: header.responseDate), userInfo: header.userInfo)
        entry.varyValues = header.vary
        return entry
    }

    private static func append(_ value: UInt64, width: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (width - 1) * 8, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    private static func read<C: Collection<UInt8>>(_ bytes: C, _ cursor: inout C.Index, width: Int) -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<width {
            value = value << 8 | UInt64(bytes[cursor])
            cursor = bytes.index(after: cursor)
        }
        return value
    }
}

/// FNV-1a, 64 bits: detects torn and foreign files (not an adversary, who could only poison their own cache
/// directory), and names entry files (`fileName(for:)`).
struct Checksum {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    init(seed: UInt64 = 0) { value ^= seed }

    mutating func add<C: Sequence<UInt8>>(_ bytes: C) {
        for byte in bytes { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
    }

    /// The file name of the entry for `key`: two independent 64-bit hashes in hex, 32 characters.
    static func fileName(for key: String) -> String {
        var first = Checksum()
        var second = Checksum(seed: 0x9e37_79b9_7f4a_7c15)
        first.add(key.utf8)
        second.add(key.utf8)
        return hex(first.value) + hex(second.value)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
