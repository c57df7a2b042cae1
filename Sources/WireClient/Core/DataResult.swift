import FoundationEssentials

/// What an `async` verb returns when the request succeeded: the serialized value, the response and the raw body.
public struct DataResult: Sendable {
    /// The response serializer's value (a `JSONValue`, a decoded type, `Data`, …), or nil (an empty JSON body).
    // Spelled `Optional<…>`: a `T?` stored property starts as nil before the initializer runs, so the initializer
    // assigns over it, which for an existential is a destruction and a copy through its value witnesses.
    // swift-format-ignore: UseShorthandTypeNames
    public var value: Optional<any Sendable>
    /// The response.
    public var response: ClientResponse?
    /// The raw body (nil for downloads).
    public var data: Data?

    /// Creates a result.
    /// - Parameters:
    ///   - value: The serialized value.
    ///   - response: The response.
    ///   - data: The raw body.
    public init(value: (any Sendable)?, response: ClientResponse?, data: Data?) {
        self.value = value
        self.response = response
        self.data = data
    }

    /// `value` as a `T`, or nil when it is absent or of another type.
    /// - Parameter type: The expected type.
    /// - Returns: The value cast to `type`.
    public func value<T>(as type: T.Type) -> T? {
        value as? T
    }
}

/// What a response serializer returns: a value and an error, independent of each other (a bad status with a valid
/// JSON body yields both).
public typealias SerializedResponse = (value: (any Sendable)?, error: ClientError?)
