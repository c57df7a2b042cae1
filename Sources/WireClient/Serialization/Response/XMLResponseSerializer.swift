import FoundationEssentials

/// XML bodies as `XMLData`, the raw document (AFXMLParserResponseSerializer returned an unparsed `NSXMLParser`; on
/// Linux FoundationEssentials has no XML parser, so the bytes are handed over as they are).
public struct XMLResponseSerializer: ResponseSerializer, Codable, Hashable {
    /// Acceptable status codes; 200…299 by default.
    public var acceptableStatusCodes: Set<Int>? = successfulStatusCodes
    /// Acceptable media types: `application/xml`, `text/xml`.
    public var acceptableContentTypes: Set<String>? = ["application/xml", "text/xml"]

    /// Creates a serializer with the defaults.
    public init() {}

    /// A content-type failure or an empty body gives nil; otherwise `XMLData` with the validation error.
    /// - Parameters:
    ///   - response: The response.
    ///   - data: The body.
    /// - Returns: The document and the error.
    public func serialize(response: ClientResponse?, data: Data?) -> SerializedResponse {
        serializeBody(response: response, data: data) { data in XMLData(data: data) }
    }
}
