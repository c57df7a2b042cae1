import FoundationEssentials
import Wire

/// Sends parameters as a property-list body (AFPropertyListRequestSerializer); GET/HEAD/DELETE keep the form
/// serializer's query.
public struct PropertyListRequestSerializer: RequestSerializer, Codable {
    /// The property-list encodings.
    public enum Format: String, Sendable, Hashable, Codable {
        /// XML 1.0 with Apple's DOCTYPE (the default).
        case xml
        /// Apple's binary format (`bplist00`).
        case binary
    }

    /// The shared settings: default headers, per-request settings, URI methods, query style.
    public var httpSerializer: HTTPRequestSerializer
    /// The encoding; XML by default.
    public var format: Format = .xml

    /// Creates a property-list serializer.
    /// - Parameters:
    ///   - httpSerializer: The shared settings (a default `HTTPRequestSerializer` when omitted).
    ///   - format: The encoding.
    public init(httpSerializer: HTTPRequestSerializer = HTTPRequestSerializer(), format: Format = .xml) {
        self.httpSerializer = httpSerializer
        self.format = format
    }

    /// URI methods: the form serializer's query. Others: default headers, then with non-nil parameters
    /// `Content-Type: application/x-plist` (unless present) and the property list; nil parameters add neither.
    /// - Parameters:
    ///   - request: The request to complete.
    ///   - parameters: The parameters (nil for none).
    /// - Returns: The serialized request.
    /// - Throws: `.requestSerializationFailed` for `.null` anywhere (property lists have no null) or a value the
    ///   encoder refuses.
    public func request(bySerializing request: ClientRequest, parameters: Parameters?) throws(ClientError) -> ClientRequest {
        let url = request.url
        let outputFormat: PropertyListDecoder.PropertyListFormat = format == .xml ? .xml : .binary
        return try httpSerializer.request(request, parameters: parameters, contentType: "application/x-plist") {
            (parameters) throws(ClientError) -> Data in
            guard !Self.containsNull(parameters) else {
                throw ClientError(
                    .requestSerializationFailed, failingURL: url, failureReason: "A property list cannot hold a null value.")
            }
            let encoder = PropertyListEncoder()
            encoder.outputFormat = outputFormat
            do {
                return try encoder.encode(parameters)
            } catch {
                throw ClientError(
                    .requestSerializationFailed, failingURL: url, underlying: error,
                    failureReason: "The parameters are not a valid property list.")
            }
        }
    }

    private static func containsNull(_ value: ParameterValue) -> Bool {
        switch value {
        case .null: true
        case .array(let elements): elements.contains(where: containsNull)
        case .dictionary(let members): members.values.contains(where: containsNull)
        case .string, .int, .double, .bool, .data: false
        }
    }
}
