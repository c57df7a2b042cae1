import FoundationEssentials

/// Tries several serializers in order (AFCompoundResponseSerializer): the first that yields a value wins, with
/// its error; when none does, the body is returned as `Data` with the compound's own validation.
public struct CompoundResponseSerializer: ResponseSerializer {
    /// The serializers, tried in order.
    public var serializers: [any ResponseSerializer]
    /// The fallback's acceptable status codes; 200…299 by default.
    public var acceptableStatusCodes: Set<Int>? = successfulStatusCodes
    /// The fallback's acceptable media types; nil (any) by default.
    public var acceptableContentTypes: Set<String>?

    /// Creates a compound serializer.
    /// - Parameter serializers: The serializers, tried in order.
    public init(serializers: [any ResponseSerializer]) {
        self.serializers = serializers
    }

    /// The first non-nil value with its error; otherwise `data` with the compound's validation error (errors of the
    /// serializers that yielded nil are discarded, as in AFNetworking).
    /// - Parameters:
    ///   - response: The response.
    ///   - data: The body.
    /// - Returns: The value and the error.
    public func serialize(response: ClientResponse?, data: Data?) -> SerializedResponse {
        for serializer in serializers {
            let result = serializer.serialize(response: response, data: data)
            if result.value != nil { return result }
        }
        return (data, validate(response: response, data: data))
    }
}
