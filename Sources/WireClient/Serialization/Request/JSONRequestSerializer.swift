import FoundationEssentials
import Wire

/// Sends parameters as a JSON body (AFJSONRequestSerializer); GET/HEAD/DELETE keep the form serializer's query
public struct JSONRequestSerializer: RequestSerializer, Codable {
    /// How the JSON text is written.
    public struct WritingOptions: OptionSet, Sendable, Hashable, Codable {
        /// The option bits.
        public var rawValue: Int
        /// Creates options from bits.
        /// - Parameter rawValue: The bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Indent by two spaces, one member per line.
        public static let prettyPrinted = WritingOptions(rawValue: 1 << 0)
        /// Write `/` as is (NSJSONSerialization writes `\/` by default).
        public static let withoutEscapingSlashes = WritingOptions(rawValue: 1 << 3)
    }

    /// The shared settings: default headers, per-request settings, URI methods, query style.
    public var httpSerializer: HTTPRequestSerializer
    /// How the JSON text is written; compact with `\/` by default.
    public var writingOptions: WritingOptions = []

    /// Creates a JSON serializer.
    /// - Parameters:
    ///   - httpSerializer: The shared settings (a default `HTTPRequestSerializer` when omitted).
    ///   - writingOptions: How the JSON text is written.
    public init(httpSerializer: HTTPRequestSerializer = HTTPRequestSerializer(), writingOptions: WritingOptions = []) {
        self.httpSerializer = httpSerializer
        self.writingOptions = writingOptions
    }

    /// URI methods: the form serializer's query. Others: default headers, then with non-nil parameters
    /// `Content-Type: application/json` (unless present) and the JSON body; nil parameters add neither.
    /// - Parameters:
    ///   - request: The request to complete.
    ///   - parameters: A dictionary or an array (nil for none).
    /// - Returns: The serialized request.
    /// - Throws: `.requestSerializationFailed` (−1016) for another top level, NaN, an infinity or `.data`.
    public func request(bySerializing request: ClientRequest, parameters: Parameters?) throws(ClientError) -> ClientRequest {
        let url = request.url
        let writer = JSONWriter(
            prettyPrinted: writingOptions.contains(.prettyPrinted),
            escapesSlashes: !writingOptions.contains(.withoutEscapingSlashes))
        return try httpSerializer.request(request, parameters: parameters, contentType: "application/json") {
            (parameters) throws(ClientError) -> Data in
            switch parameters {
            case .dictionary, .array: break
            default:
                throw ClientError(
                    .requestSerializationFailed, failingURL: url, failureReason: "The `parameters` argument is not valid JSON.")
            }
            do {
                return Data(try writer.write(parameters))
            } catch {
                throw ClientError(
                    .requestSerializationFailed, failingURL: url, underlying: error,
                    failureReason: "The `parameters` argument is not valid JSON.")
            }
        }
    }

    /// Serializes an `Encodable` value: it is encoded with `encoder`, read back as parameters, and serialized as
    /// `request(bySerializing:parameters:)` does (so URI methods put it in the query and bodies have sorted keys).
    /// - Parameters:
    ///   - request: The request to complete.
    ///   - value: The value; it must encode as a JSON object or array.
    ///   - encoder: The encoder (date and key strategies); a plain `JSONEncoder` by default.
    /// - Returns: The serialized request.
    /// - Throws: `.requestSerializationFailed` when the value cannot be encoded.
    public func request(
        bySerializing request: ClientRequest, encoding value: some Encodable, encoder: JSONEncoder = JSONEncoder()
    )
        throws(ClientError) -> ClientRequest
    {
        let parameters: ParameterValue
        do {
            let text = try encoder.encode(value)
            parameters = try JSONParser.parse(Array(text), allowsFragments: true).parameterValue
        } catch {
            throw ClientError(
                .requestSerializationFailed, failingURL: request.url, underlying: error,
                failureReason: "The value could not be encoded as JSON.")
        }
        return try self.request(bySerializing: request, parameters: parameters)
    }
}

extension JSONValue {
    /// The same value as request parameters.
    var parameterValue: ParameterValue {
        switch self {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .int(let number): .int(number)
        case .double(let number): .double(number)
        case .string(let text): .string(text)
        case .array(let elements): .array(elements.map(\.parameterValue))
        case .object(let members): .dictionary(members.mapValues(\.parameterValue))
        }
    }
}
