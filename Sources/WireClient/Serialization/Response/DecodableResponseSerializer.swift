import FoundationEssentials

/// Decodes JSON bodies into a `Decodable` type with `JSONDecoder` (a Swift addition): the JSON serializer's types,
/// validation and empty-body rules.
public struct DecodableResponseSerializer<T: Decodable & Sendable>: ResponseSerializer {
    /// Acceptable status codes; 200…299 by default.
    public var acceptableStatusCodes: Set<Int>? = successfulStatusCodes
    /// Acceptable media types: `application/json`, `text/json`, `text/javascript`.
    public var acceptableContentTypes: Set<String>? = ["application/json", "text/json", "text/javascript"]
    /// Makes the decoder for each body (key and date strategies); a plain `JSONDecoder` by default.
    public var makeDecoder: @Sendable () -> JSONDecoder

    /// Creates a serializer.
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - makeDecoder: Makes the decoder for each body.
    public init(_ type: T.Type = T.self, makeDecoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() }) {
        self.makeDecoder = makeDecoder
    }

    /// A content-type failure stops decoding; an empty or single-space body is nil; otherwise the decoded `T` with
    /// the validation error, or `.responseSerializationFailed` (the `DecodingError` in its reason) chained to it.
    /// - Parameters:
    ///   - response: The response.
    ///   - data: The body.
    /// - Returns: A `T` or nil, and the error.
    public func serialize(response: ClientResponse?, data: Data?) -> SerializedResponse {
        serializeBody(response: response, data: data, singleSpaceIsEmpty: true) { data in
            try makeDecoder().decode(T.self, from: data)
        }
    }
}
