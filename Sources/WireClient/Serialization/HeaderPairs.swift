import FoundationEssentials
import Wire

/// Header fields archived as `[name, value]` pairs, in order: how serializers and configurations keep them.
enum HeaderPairs {
    /// The fields archived under `key`; a pair that is not two strings is corrupt data.
    static func decode<Key: CodingKey>(from container: KeyedDecodingContainer<Key>, forKey key: Key) throws -> HTTPHeaders {
        var headers = HTTPHeaders()
        for pair in try container.decode([[String]].self, forKey: key) {
            guard pair.count == 2 else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "A header is a [name, value] pair.")
            }
            headers.add(name: pair[0], value: pair[1])
        }
        return headers
    }

    /// Archives `headers` under `key`.
    static func encode<Key: CodingKey>(_ headers: HTTPHeaders, to container: inout KeyedEncodingContainer<Key>, forKey key: Key)
        throws
    {
        try container.encode(headers.map { [$0.name, $0.value] }, forKey: key)
    }
}
