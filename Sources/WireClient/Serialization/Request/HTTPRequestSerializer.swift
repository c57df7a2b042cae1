import FoundationEssentials
import Wire

/// The form serializer (AFHTTPRequestSerializer): default headers, per-request settings, and parameters as a form
/// query, in the URL for GET/HEAD/DELETE and as an `application/x-www-form-urlencoded` body otherwise.
///
/// A value: copies are independent and complete (headers, settings, query block). `Codable` archives everything but
/// the query block.
public struct HTTPRequestSerializer: RequestSerializer, Codable {
    /// The default headers, `Accept-Language` then `User-Agent` at first.
    public private(set) var httpRequestHeaders: HTTPHeaders
    /// Whether two default headers may share a name, worked out when they are set (only an archive can bring such a
    /// pair; setting a header replaces every field of its name): the per-request fast path reads this.
    private var defaultsMayRepeatAName = false
    /// Methods whose parameters go into the URL (looked up with the request's method upper-cased).
    public var httpMethodsEncodingParametersInURI: Set<String> {
        get { methodsInURI }
        set {
            methodsInURI = newValue
            methodsInURIAreTheDefault = newValue == Self.defaultMethodsInURI
        }
    }
    private static let defaultMethodsInURI: Set<String> = ["GET", "HEAD", "DELETE"]
    private var methodsInURI = defaultMethodsInURI
    /// Whether `methodsInURI` is the default set, which the per-request check then compares without hashing.
    private var methodsInURIAreTheDefault = true
    /// Copied into each request when non-nil; nil means the session's value.
    public var allowsCellularAccess: Bool?
    /// Copied into each request when non-nil; nil means the session's value.
    public var cachePolicy: CachePolicy?
    /// Copied into each request when non-nil; nil means the session's value.
    public var shouldHandleCookies: Bool?
    /// Copied into each request when non-nil; nil means the session's value.
    public var shouldUsePipelining: Bool?
    /// Copied into each request when non-nil; nil means the session's value.
    public var networkServiceType: NetworkServiceType?
    /// Copied into each request when non-nil; nil means the session's value.
    public var timeoutInterval: Duration?
    /// The built-in query style in use when no custom serialization is installed.
    public internal(set) var queryStringStyle: QueryStringSerializationStyle = .default
    /// The custom query serialization, if installed (not archived).
    var queryStringSerialization: (@Sendable (ClientRequest, Parameters) throws -> String?)?

    /// Itself: the HTTP serializer holding the shared settings.
    public var httpSerializer: HTTPRequestSerializer {
        get { self }
        set { self = newValue }
    }

    /// Creates a serializer with `Accept-Language` and `User-Agent` defaults.
    /// - Parameters:
    ///   - preferredLanguages: Languages for `Accept-Language`, most preferred first; the environment's by default.
    ///   - applicationVersion: The version in `User-Agent`; `"unknown"` when nil.
    ///   - product: The product in `User-Agent`; the executable's file name when nil.
    ///   - system: The kernel release and machine in `User-Agent`; `uname(2)`'s by default.
    public init(
        preferredLanguages: [String] = PreferredLanguages.current,
        applicationVersion: String? = nil,
        product: String? = nil,
        system: SystemIdentity = .current
    ) {
        httpRequestHeaders = HTTPHeaders()
        httpRequestHeaders.add(name: "Accept-Language", value: PreferredLanguages.acceptLanguage(preferredLanguages))
        httpRequestHeaders.add(
            name: "User-Agent",
            value: UserAgent.value(product: product ?? UserAgent.executableName, version: applicationVersion, system: system)
        )
    }

    /// Applies the default headers and encodes `parameters` as a form query.
    /// - Parameters:
    ///   - request: The request to complete.
    ///   - parameters: The parameters, or nil.
    /// - Returns: The request with its query or body.
    /// - Throws: `.requestSerializationFailed` when the parameters cannot be encoded or the custom block throws.
    public func request(bySerializing request: ClientRequest, parameters: Parameters?) throws(ClientError) -> ClientRequest {
        var request = request
        applyDefaultHeaders(to: &request)
        let encoded = try query(for: request, parameters: parameters)
        if encodesParametersInURI(request.method) {
            if let encoded, !encoded.isEmpty { request.url = try Self.url(request.url, appendingQuery: encoded) }
        } else {
            Self.setContentType("application/x-www-form-urlencoded", ifAbsentIn: &request)
            // AF #2864: an empty string is a valid x-www-form-urlencoded payload, so a body without parameters is empty.
            request.body = .data(Data((encoded ?? "").utf8))
        }
        return request
    }

    /// Whether `method`'s parameters go into the URL.
    func encodesParametersInURI(_ method: String) -> Bool {
        // The default set and a method as usually written: three comparisons, no hash of the method.
        if methodsInURIAreTheDefault {
            switch method {
            case "GET", "HEAD", "DELETE": return true
            case "POST", "PUT", "PATCH", "OPTIONS": return false
            default: break
            }
        }
        // Methods come upper-case as a rule: then no upper-cased copy.
        let isUpperCase = !method.utf8.contains { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") }
        return httpMethodsEncodingParametersInURI.contains(isUpperCase ? method : method.uppercased())
    }

    /// Adds each default header the request lacks (case-insensitive), in order.
    func applyDefaultHeaders(to request: inout ClientRequest) {
        // The common case, a request with no field of its own: the defaults whole, sharing their storage (no string
        // made per field), which is what the loop gives when no two defaults share a name.
        if request.headers.isEmpty, !defaultsMayRepeatAName {
            request.headers = httpRequestHeaders
            return
        }
        for field in httpRequestHeaders where !request.headers.contains(name: field.name) {
            request.headers.add(name: field.name, value: field.value)
        }
    }

    /// Whether two fields of `headers` may have the same name (ASCII case-insensitive); compares bytes, makes no
    /// string. Conservative: folding with 0x20 also pairs a few symbols (`^` and `~`), which only sends the caller
    /// down the field-by-field path.
    static func repeatsAName(_ headers: HTTPHeaders) -> Bool {
        for later in headers.indices {
            for earlier in headers.startIndex..<later {
                let same = headers.withNameBytes(at: later) { laterName in
                    headers.withNameBytes(at: earlier) { earlierName in
                        guard laterName.count == earlierName.count else { return false }
                        for offset in 0..<laterName.count where laterName[offset] | 0x20 != earlierName[offset] | 0x20 {
                            return false
                        }
                        return true
                    }
                }
                if same { return true }
            }
        }
        return false
    }

    /// Copies the per-request settings that were set.
    func applySettings(to request: inout ClientRequest) {
        if let allowsCellularAccess { request.allowsCellularAccess = allowsCellularAccess }
        if let cachePolicy { request.cachePolicy = cachePolicy }
        if let shouldHandleCookies { request.shouldHandleCookies = shouldHandleCookies }
        if let shouldUsePipelining { request.shouldUsePipelining = shouldUsePipelining }
        if let networkServiceType { request.networkServiceType = networkServiceType }
        if let timeoutInterval { request.timeoutInterval = timeoutInterval }
    }

    /// Replaces (or removes) a default header.
    mutating func setHeader(_ value: String?, name: String) {
        if let value { httpRequestHeaders.replaceOrAdd(name: name, value: value) } else { httpRequestHeaders.remove(name: name) }
    }

    /// The query for `parameters`: the custom block's, else the default style's; nil for no parameters.
    private func query(for request: ClientRequest, parameters: Parameters?) throws(ClientError) -> String? {
        guard let parameters else { return nil }
        guard let queryStringSerialization else {
            do {
                return try queryString(from: parameters)
            } catch {
                throw Self.failure(error, request: request)
            }
        }
        do {
            return try queryStringSerialization(request, parameters)
        } catch {
            throw ClientError(
                .requestSerializationFailed, failingURL: request.url, underlying: error,
                failureReason: "The query-string serialization block failed.")
        }
    }

    /// `error` with the request's URL attached.
    static func failure(_ error: ClientError, request: ClientRequest) -> ClientError {
        var error = error
        error.failingURL = error.failingURL ?? request.url
        return error
    }

    /// `url` with `query` appended: `?query` without a query, `&query` after a non-empty one, `query` after a
    /// bare `?`; the fragment is dropped.
    static func url(_ url: URL, appendingQuery query: String) throws(ClientError) -> URL {
        var text = Substring(url.absoluteString)
        if let hash = text.firstIndex(of: "#") { text = text[..<hash] }
        if let question = text.firstIndex(of: "?") {
            text += text.index(after: question) == text.endIndex ? query : "&" + query
        } else {
            text += "?" + query
        }
        guard let result = URL(string: String(text)) else {
            throw ClientError(
                .requestSerializationFailed, failingURL: url, failureReason: "The URL with its query is not a valid URL.")
        }
        return result
    }

    // MARK: Codable

    private enum CodingKeys: String, CodingKey {
        case headers, queryStringStyle, httpMethodsEncodingParametersInURI, allowsCellularAccess, cachePolicy
        case shouldHandleCookies, shouldUsePipelining, networkServiceType, timeoutInterval
        /// `shouldHandleCookies` and `shouldUsePipelining` in archives made before each had one spelling: read, never
        /// written.
        case httpShouldHandleCookies, httpShouldUsePipelining
    }

    /// Restores an archived serializer (without a custom query block).
    /// - Parameter decoder: The decoder.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        httpRequestHeaders = try HeaderPairs.decode(from: container, forKey: .headers)
        defaultsMayRepeatAName = Self.repeatsAName(httpRequestHeaders)
        queryStringStyle = try container.decode(QueryStringSerializationStyle.self, forKey: .queryStringStyle)
        httpMethodsEncodingParametersInURI = Set(try container.decode([String].self, forKey: .httpMethodsEncodingParametersInURI))
        allowsCellularAccess = try container.decodeIfPresent(Bool.self, forKey: .allowsCellularAccess)
        cachePolicy = try container.decodeIfPresent(CachePolicy.self, forKey: .cachePolicy)
        shouldHandleCookies =
            try container.decodeIfPresent(Bool.self, forKey: .shouldHandleCookies)
            ?? container.decodeIfPresent(Bool.self, forKey: .httpShouldHandleCookies)
        shouldUsePipelining =
            try container.decodeIfPresent(Bool.self, forKey: .shouldUsePipelining)
            ?? container.decodeIfPresent(Bool.self, forKey: .httpShouldUsePipelining)
        networkServiceType = try container.decodeIfPresent(NetworkServiceType.self, forKey: .networkServiceType)
        timeoutInterval = try container.decodeIfPresent(Duration.self, forKey: .timeoutInterval)
    }

    /// Archives the headers, the query style, the URI-method set and the settings that were set.
    /// - Parameter encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try HeaderPairs.encode(httpRequestHeaders, to: &container, forKey: .headers)
        try container.encode(queryStringStyle, forKey: .queryStringStyle)
        try container.encode(httpMethodsEncodingParametersInURI.sorted(), forKey: .httpMethodsEncodingParametersInURI)
        try container.encodeIfPresent(allowsCellularAccess, forKey: .allowsCellularAccess)
        try container.encodeIfPresent(cachePolicy, forKey: .cachePolicy)
        try container.encodeIfPresent(shouldHandleCookies, forKey: .shouldHandleCookies)
        try container.encodeIfPresent(shouldUsePipelining, forKey: .shouldUsePipelining)
        try container.encodeIfPresent(networkServiceType, forKey: .networkServiceType)
        try container.encodeIfPresent(timeoutInterval, forKey: .timeoutInterval)
    }
}

extension HTTPRequestSerializer {
    /// The frame the body serializers (JSON, property list) share: for a method in
    /// `httpMethodsEncodingParametersInURI` the parameters go into the query as this serializer puts them; otherwise
    /// the default headers, and, when there are parameters, the body `encode` makes with `contentType` unless the
    /// request has a `Content-Type`.
    func request(
        _ request: ClientRequest, parameters: Parameters?, contentType: String,
        encode: (Parameters) throws(ClientError) -> Data
    ) throws(ClientError) -> ClientRequest {
        if encodesParametersInURI(request.method) {
            return try self.request(bySerializing: request, parameters: parameters)
        }
        var request = request
        applyDefaultHeaders(to: &request)
        guard let parameters else { return request }
        let body = try encode(parameters)
        Self.setContentType(contentType, ifAbsentIn: &request)
        request.body = .data(body)
        return request
    }

    /// Adds `Content-Type: type` unless the request has one.
    static func setContentType(_ type: String, ifAbsentIn request: inout ClientRequest) {
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.headers.add(name: "Content-Type", value: type)
        }
    }
}
