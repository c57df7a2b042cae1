/// Why an encoded body could not be decoded. A session reports it as the `underlying` error of a `ClientError` with
/// code `.cannotDecodeContentData` (−1016); `wire get --compressed` exits with 61 for it, as curl does.
///
/// Offsets and counts are of encoded bytes: as received on the wire, counted from the body's first byte.
public enum ContentDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// zlib refused the data: a bad header, a bad block, or a checksum or length mismatch in the trailer. `offset` is
    /// where zlib stopped reading: at or just after the bad byte (for a checksum, the trailer's end).
    case corrupt(ContentCoding, offset: Int64, reason: String)
    /// The body ended inside the encoded stream after `encodedBytes` bytes: a short body, not a complete one.
    case truncated(ContentCoding, encodedBytes: Int64)
    /// Bytes that are not another gzip member follow a complete stream, at `offset`.
    case trailingGarbage(ContentCoding, offset: Int64)
    /// `decodedBytes` came out of `encodedBytes`, more than `ContentDecodingLimits.maximumRatio` (`limit`) to one.
    case ratioExceeded(decodedBytes: Int64, encodedBytes: Int64, limit: Int)
    /// More than `ContentDecodingLimits.maximumDecodedSize` (`limit`) bytes came out.
    case sizeExceeded(decodedBytes: Int64, limit: Int64)
    /// The `Content-Encoding` value names a coding WireClient does not decode (or more than one coding).
    case unsupportedCoding(String)
    /// zlib could not set up a stream (out of memory).
    case decoderUnavailable(String)

    /// What happened, with its numbers.
    public var description: String {
        switch self {
        case .corrupt(let coding, let offset, let reason): "corrupt \(coding) data at encoded byte \(offset): \(reason)"
        case .truncated(let coding, let count): "the \(coding) stream is truncated: the body ended after \(count) encoded bytes"
        case .trailingGarbage(let coding, let offset): "unexpected bytes after the \(coding) stream at encoded byte \(offset)"
        case .ratioExceeded(let decoded, let encoded, let limit):
            "\(encoded) encoded bytes decoded to \(decoded) bytes, more than the \(limit):1 ratio limit"
        case .sizeExceeded(let decoded, let limit): "decoded \(decoded) bytes, more than the \(limit)-byte limit"
        case .unsupportedCoding(let value): "unsupported Content-Encoding \"\(value)\""
        case .decoderUnavailable(let reason): "cannot start a decoder: \(reason)"
        }
    }
}
