import FoundationEssentials

/// Parses JSON bodies into `JSONValue` (AFJSONResponseSerializer).
public struct JSONResponseSerializer: ResponseSerializer, Codable, Hashable {
    /// How the text is read.
    public struct ReadingOptions: OptionSet, Sendable, Hashable, Codable {
        /// The option bits.
        public var rawValue: Int
        /// Creates options from bits.
        /// - Parameter rawValue: The bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Accept a scalar (string, number, boolean, null) at the top level.
        public static let allowsFragments = ReadingOptions(rawValue: 1 << 2)
    }

    /// Acceptable status codes; 200…299 by default.
    public var acceptableStatusCodes: Set<Int>? = successfulStatusCodes
    /// Acceptable media types: `application/json`, `text/json`, `text/javascript`.
    public var acceptableContentTypes: Set<String>? = ["application/json", "text/json", "text/javascript"]
    /// How the text is read; strict (object or array at the top) by default.
    public var readingOptions: ReadingOptions = []
    /// Remove object members whose value is null, recursively (array elements that are null are kept).
    public var removesKeysWithNullValues = false

    /// Creates a serializer.
    /// - Parameters:
    ///   - readingOptions: How the text is read.
    ///   - removesKeysWithNullValues: Whether null members are removed.
    public init(readingOptions: ReadingOptions = [], removesKeysWithNullValues: Bool = false) {
        self.readingOptions = readingOptions
        self.removesKeysWithNullValues = removesKeysWithNullValues
    }

    /// A content-type failure stops parsing (value nil). An empty body, or one of exactly one space (Rails'
    /// `head :ok`), is nil with the validation error alone. Otherwise the parsed value with the validation error (a bad
    /// status with valid JSON yields both), or `.responseSerializationFailed` chained to the validation error.
    /// - Parameters:
    ///   - response: The response.
    ///   - data: The body.
    /// - Returns: A `JSONValue` or nil, and the error.
    public func serialize(response: ClientResponse?, data: Data?) -> SerializedResponse {
        serializeBody(response: response, data: data, singleSpaceIsEmpty: true) { data in
            let value = try JSONParser.parse(Array(data), allowsFragments: readingOptions.contains(.allowsFragments))
            return removesKeysWithNullValues ? value.removingKeysWithNullValues : value
        }
    }
}
