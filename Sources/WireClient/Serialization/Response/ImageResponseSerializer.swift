import FoundationEssentials

/// Image bodies as `ImageData`: the bytes with their format and pixel size read from the header, never decoded
/// (Linux's toolchain has no image decoder, so there is nothing to inflate into).
public struct ImageResponseSerializer: ResponseSerializer, Codable, Hashable {
    /// Acceptable status codes; 200…299 by default.
    public var acceptableStatusCodes: Set<Int>? = successfulStatusCodes
    /// Acceptable media types: AFNetworking's ten (add `image/webp` to accept WebP, which the header reader knows).
    public var acceptableContentTypes: Set<String>? = [
        "image/tiff", "image/jpeg", "image/gif", "image/png", "image/ico", "image/x-icon", "image/bmp", "image/x-bmp",
        "image/x-xbitmap", "image/x-win-bitmap",
    ]
    /// Points per pixel written into each `ImageData`; 1 by default.
    public var imageScale: Double = 1

    /// Creates a serializer with the defaults.
    public init() {}

    /// A content-type failure or an empty body gives nil; a header that is not PNG, JPEG, GIF, WebP, BMP or ICO, or
    /// is truncated, gives `.responseSerializationFailed`; otherwise the `ImageData` with the validation error.
    /// - Parameters:
    ///   - response: The response.
    ///   - data: The body.
    /// - Returns: The image and the error.
    public func serialize(response: ClientResponse?, data: Data?) -> SerializedResponse {
        serializeBody(response: response, data: data) { data in
            guard let image = ImageData(data: data, scale: imageScale) else {
                throw ClientError(
                    .responseSerializationFailed,
                    failureReason: "The image header is not one of PNG, JPEG, GIF, WebP, BMP or ICO, or is malformed.")
            }
            return image
        }
    }
}
