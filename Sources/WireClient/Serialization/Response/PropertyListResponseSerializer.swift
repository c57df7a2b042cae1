import FoundationEssentials

/// Property-list bodies, XML or binary (not the legacy OpenStep text format), as `PropertyListValue`
/// (AFPropertyListResponseSerializer).
public struct PropertyListResponseSerializer: ResponseSerializer, Codable, Hashable {
    /// Acceptable status codes; 200…299 by default.
    public var acceptableStatusCodes: Set<Int>? = successfulStatusCodes
    /// Acceptable media types: `application/x-plist`.
    public var acceptableContentTypes: Set<String>? = ["application/x-plist"]

    /// Creates a serializer with the defaults.
    public init() {}

    /// A content-type failure stops parsing; an empty body is nil without a parse error (**Deviation:** AF fails to
    /// parse it); otherwise the value with the validation error, or `.responseSerializationFailed` chained to it. No
    /// single-space rule.
    /// - Parameters:
    ///   - response: The response.
    ///   - data: The body.
    /// - Returns: The value and the error.
    public func serialize(response: ClientResponse?, data: Data?) -> SerializedResponse {
        serializeBody(response: response, data: data) { data in
            var format = PropertyListDecoder.PropertyListFormat.xml
            let value = try PropertyListDecoder().decode(PropertyListValue.self, from: data, format: &format)
            // The decoder falls back to the legacy OpenStep text format, in which any bare word is a string; a body
            // that is neither XML nor binary is not a property list this serializer accepts.
            guard format != .openStep else {
                throw ClientError(.responseSerializationFailed, failureReason: "Not an XML or binary property list.")
            }
            return value
        }
    }
}
