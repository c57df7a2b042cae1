import FoundationEssentials

/// An image as received, with its format and pixel size read from its header; nothing is decoded (the toolchain has
/// no image decoder on Linux). The resource cache uses `pixelWidth × pixelHeight × 4` as its cost.
public struct ImageData: Sendable, Hashable {
    /// The encoded bytes.
    public var data: Data
    /// The format's media type (`image/png`, `image/jpeg`, …), from the bytes rather than the `Content-Type`.
    public var mimeType: String
    /// The width in pixels.
    public var pixelWidth: Int
    /// The height in pixels.
    public var pixelHeight: Int
    /// Points per pixel (AFNetworking's `imageScale`); 1 on Linux by default.
    public var scale: Double

    /// Creates an image value.
    /// - Parameters:
    ///   - data: The encoded bytes.
    ///   - mimeType: The format's media type.
    ///   - pixelWidth: The width in pixels.
    ///   - pixelHeight: The height in pixels.
    ///   - scale: Points per pixel.
    public init(data: Data, mimeType: String, pixelWidth: Int, pixelHeight: Int, scale: Double = 1) {
        self.data = data
        self.mimeType = mimeType
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.scale = scale
    }

    /// Reads the format and size from `data`'s header.
    /// - Parameters:
    ///   - data: The encoded bytes.
    ///   - scale: Points per pixel.
    /// - Returns: The image, or nil when the header is not one of the known formats or is malformed or truncated.
    public init?(data: Data, scale: Double = 1) {
        guard let header = ImageHeader(data) else { return nil }
        self.init(
            data: data, mimeType: header.format.mimeType, pixelWidth: header.pixelWidth, pixelHeight: header.pixelHeight,
            scale: scale)
    }
}
