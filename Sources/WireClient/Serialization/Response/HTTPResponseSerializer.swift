import FoundationEssentials

/// Validation only (AFHTTPResponseSerializer): the value is the body as `Data`, even when validation fails.
public struct HTTPResponseSerializer: ResponseSerializer, Codable, Hashable {
    /// Acceptable status codes; 200…299 by default.
    public var acceptableStatusCodes: Set<Int>? = successfulStatusCodes
    /// Acceptable media types; nil (any) by default.
    public var acceptableContentTypes: Set<String>?

    /// Creates a serializer with the defaults.
    public init() {}

    /// The body and the validation error.
    /// - Parameters:
    ///   - response: The response.
    ///   - data: The body.
    /// - Returns: `data` as the value, and the validation error.
    public func serialize(response: ClientResponse?, data: Data?) -> SerializedResponse {
        (data, validate(response: response, data: data))
    }
}
