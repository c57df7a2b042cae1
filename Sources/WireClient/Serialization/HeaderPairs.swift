import FoundationEssentials
import Wire

/// Header fields archived as `[name, value]` pairs, in order.
enum HeaderPairs {
    /// The fields of `pairs`; a pair that is not two strings is corrupt data.
    static func decode<Key: CodingKey>(_ pairs: [[String]], in container: KeyedDecodingContainer<Key>, forKey key: Key) throws -> HTTPHeaders {
        var headers = HTTPHeaders()
        for pair in pairs {
            guard pair.count == 2 else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "A header is a [name, value] pair.")
            }
            headers.add(name: pair[0], value: pair[1])
        }
        return headers
    }
}
