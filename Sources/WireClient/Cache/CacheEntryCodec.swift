import FoundationEssentials
import Wire

/// One disk entry as bytes, format 2:
///
///     preamble  "WIRECACH", version 2, header length (4 bytes), body length (8), checksum of header and body (8)
///     header    status (2), request date (8), response date (8): the bits of their Unix seconds as `Double`,
///               the URL, the fields (count (4), then name and value of each), the Vary values (count (4), then the
///               name, 1 or 0 for present or absent, and a present value), the user info (count (4), key, value)
///     body      the bytes
///
/// Integers are big-endian; a string is its UTF-8 length (4) and its bytes. Decoding checks the magic and version,
/// the lengths against the file's size, the checksum, that every header field is inside the header and the header is
/// read to its end, that strings are UTF-8 and that the URL is the one asked for: a torn, foreign, older-format or
/// hostile file is a miss, never a trap and never a wrong body. Format 1 (a JSON header) reads as a miss.
enum CacheEntryCodec {
    /// `WIRECACH` and the format version 2.
    static let magic: [UInt8] = Array("WIRECACH".utf8) + [2]
    /// Magic, header length (4 bytes), body length (8), checksum (8).
    static let preambleSize = magic.count + 4 + 8 + 8
    /// Status and the two dates.
    private static let fixedHeaderSize = 2 + 8 + 8

    /// The bytes of `entry` stored under `url`.
    static func encode(_ entry: CachedResponse, url: String) -> [UInt8] {
        var estimate = preambleSize + fixedHeaderSize + url.utf8.count + 16 + entry.data.count
        for field in entry.response.headers { estimate += field.name.utf8.count + field.value.utf8.count + 8 }
        var writer = EntryWriter(reserving: estimate)
        writer.append(magic)
        writer.append(0, width: 4 + 8 + 8)
        writer.append(UInt64(entry.response.statusCode), width: 2)
        writer.append(entry.requestDate.timeIntervalSince1970.bitPattern, width: 8)
        writer.append(entry.responseDate.timeIntervalSince1970.bitPattern, width: 8)
        writer.append(url)
        writer.append(UInt64(entry.response.headers.count), width: 4)
        for field in entry.response.headers {
            writer.append(field.name)
            writer.append(field.value)
        }
        writer.append(UInt64(entry.varyValues.count), width: 4)
        for (name, value) in entry.varyValues.sorted(by: { $0.key < $1.key }) {
            writer.append(name)
            writer.append(value == nil ? 0 : 1, width: 1)
            if let value { writer.append(value) }
        }
        writer.append(UInt64(entry.userInfo.count), width: 4)
        for (key, value) in entry.userInfo.sorted(by: { $0.key < $1.key }) {
            writer.append(key)
            writer.append(value)
        }
        let headerLength = writer.bytes.count - preambleSize
        writer.append(entry.data)
        writer.set(UInt64(headerLength), width: 4, at: magic.count)
        writer.set(UInt64(entry.data.count), width: 8, at: magic.count + 4)
        writer.set(EntryChecksum.value(of: writer.bytes, in: preambleSize..<writer.bytes.count), width: 8, at: magic.count + 12)
        return writer.bytes
    }

    /// The entry in `all` if they are a whole, intact entry for `url` (whose parsed form is `parsedURL`, when the
    /// caller has it); nil otherwise.
    static func decode(_ all: [UInt8], url: String, parsedURL: URL? = nil) -> CachedResponse? {
        guard all.count >= preambleSize, all[..<magic.count].elementsEqual(magic) else { return nil }
        var preamble = EntryReader(all, from: magic.count, to: preambleSize)
        guard let headerLength = preamble.integer(width: 4), let bodyLength = preamble.integer(width: 8),
            let checksum = preamble.integer(width: 8),
            headerLength <= UInt64(all.count), bodyLength <= UInt64(all.count),
            UInt64(preambleSize) + headerLength + bodyLength == UInt64(all.count),
            EntryChecksum.value(of: all, in: preambleSize..<all.count) == checksum
        else { return nil }
        let bodyStart = preambleSize + Int(headerLength)
        var header = EntryReader(all, from: preambleSize, to: bodyStart)
        guard let status = header.integer(width: 2), (100...999).contains(status),
            let requestBits = header.integer(width: 8), let responseBits = header.integer(width: 8),
            let urlRange = header.stringRange(), all[urlRange].elementsEqual(url.utf8),
            let responseURL = parsedURL ?? URL(string: url),
            let fieldCount = header.count(ofItemsAtLeast: 8)
        else { return nil }
        var fields = HTTPHeaders()
        for _ in 0..<fieldCount {
            guard let name = header.string(), let value = header.string() else { return nil }
            fields.add(name: name, value: value)
        }
        guard let varyCount = header.count(ofItemsAtLeast: 5) else { return nil }
        var vary: [String: String?] = [:]
        for _ in 0..<varyCount {
            guard let name = header.string(), let present = header.integer(width: 1), present <= 1 else { return nil }
            if present == 1 {
                guard let value = header.string() else { return nil }
                vary[name] = .some(value)
            } else {
                vary[name] = .some(nil)
            }
        }
        guard let userInfoCount = header.count(ofItemsAtLeast: 8) else { return nil }
        var userInfo: [String: String] = [:]
        for _ in 0..<userInfoCount {
            guard let key = header.string(), let value = header.string() else { return nil }
            userInfo[key] = value
        }
        let requestDate = Double(bitPattern: requestBits)
        let responseDate = Double(bitPattern: responseBits)
        guard header.isAtEnd, requestDate.isFinite, responseDate.isFinite else { return nil }
        var entry = CachedResponse(
            response: ClientResponse(url: responseURL, statusCode: Int(status), headers: fields),
            data: Data(all[bodyStart...]), requestDate: Date(timeIntervalSince1970: requestDate),
            responseDate: Date(timeIntervalSince1970: responseDate), userInfo: userInfo)
        entry.varyValues = vary
        return entry
    }
}
