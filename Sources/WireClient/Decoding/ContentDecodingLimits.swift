/// Limits that refuse a decompression bomb: a small encoded body that decodes to an enormous one.
///
/// ```swift
/// var configuration = SessionConfiguration.default
/// configuration.contentDecoding.maximumDecodedSize = 512 * 1_048_576
/// ```
public struct ContentDecodingLimits: Sendable, Hashable, Codable {
    /// The most decoded bytes per encoded byte, checked once `ratioGracePeriod` decoded bytes came out; nil for no
    /// ratio limit. Default 1000: ordinary text and JSON compress 3–20 to one and even very repetitive logs stay well
    /// under it, while a bomb (a run of zeros compresses about 1030 to one) exceeds it.
    public var maximumRatio: Int?
    /// Decoded bytes allowed before the ratio is checked, so a small, highly compressible body passes. Default 1 MiB.
    public var ratioGracePeriod: Int64
    /// The most decoded bytes of one body; nil (the default) for no limit, since a download may be as large as the
    /// disk. A data task is bounded by `SessionConfiguration.maximumBufferedResponseSize` anyway, which counts
    /// decoded bytes.
    public var maximumDecodedSize: Int64?

    /// Creates limits; the defaults are those of each property.
    public init(maximumRatio: Int? = 1000, ratioGracePeriod: Int64 = 1_048_576, maximumDecodedSize: Int64? = nil) {
        self.maximumRatio = maximumRatio
        self.ratioGracePeriod = ratioGracePeriod
        self.maximumDecodedSize = maximumDecodedSize
    }

    /// No limit at all: for trusted peers only.
    public static var unlimited: ContentDecodingLimits {
        ContentDecodingLimits(maximumRatio: nil, maximumDecodedSize: nil)
    }

    /// The error for `decoded` bytes out of `encoded`, or nil while both limits hold.
    func violation(decoded: Int64, encoded: Int64) -> ContentDecodingError? {
        if let maximumDecodedSize, decoded > maximumDecodedSize {
            return .sizeExceeded(decodedBytes: decoded, limit: maximumDecodedSize)
        }
        // Division, not encoded × ratio: no overflow for any limit.
        if let maximumRatio, decoded > ratioGracePeriod, decoded / max(encoded, 1) > Int64(maximumRatio) {
            return .ratioExceeded(decodedBytes: decoded, encodedBytes: encoded, limit: maximumRatio)
        }
        return nil
    }
}
