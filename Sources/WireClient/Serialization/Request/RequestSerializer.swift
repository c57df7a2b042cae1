import FoundationEssentials
import Wire

/// Turns a method, a URL and parameters into a `ClientRequest` (AFURLRequestSerialization).
///
/// Every serializer is built on an `HTTPRequestSerializer` (`httpSerializer`) that holds the default headers, the
/// per-request settings, the URI-method set and the query style, so they can be set on any serializer, also through
/// `any RequestSerializer`.
public protocol RequestSerializer: Sendable {
    /// The HTTP serializer holding the shared settings (for `HTTPRequestSerializer` itself: `self`).
    var httpSerializer: HTTPRequestSerializer { get set }

    /// `request` with the default headers, the parameters encoded, and the settings of this serializer applied
    /// (AF's `requestBySerializingRequest:withParameters:error:`).
    /// - Parameters:
    ///   - request: The request to complete.
    ///   - parameters: The parameters, or nil.
    /// - Returns: The serialized request.
    /// - Throws: `.requestSerializationFailed` when the parameters cannot be encoded.
    func request(bySerializing request: ClientRequest, parameters: Parameters?) throws(ClientError) -> ClientRequest
}

extension RequestSerializer {
    /// A new request for `method` and `urlString` with the settings that were set on this serializer copied into it,
    /// then serialized with `parameters` (AF's `requestWithMethod:URLString:parameters:error:`).
    /// - Parameters:
    ///   - method: The method.
    ///   - urlString: An absolute URL.
    ///   - parameters: The parameters, or nil.
    /// - Returns: The request.
    /// - Throws: `.badURL` for an unparsable URL, `.requestSerializationFailed` when the parameters cannot be encoded.
    public func request(withMethod method: String, urlString: String, parameters: Parameters?) throws(ClientError)
        -> ClientRequest
    {
        guard let url = URL(string: urlString), url.scheme != nil else {
            throw ClientError(.badURL, failureReason: "Not an absolute URL: \(urlString)")
        }
        var request = ClientRequest(url: url, method: method)
        httpSerializer.applySettings(to: &request)
        return try self.request(bySerializing: request, parameters: parameters)
    }

    /// The default headers sent with every request (each only when the request lacks the field).
    public var httpRequestHeaders: HTTPHeaders { httpSerializer.httpRequestHeaders }

    /// Methods whose parameters go into the URL's query (upper case; default GET, HEAD, DELETE).
    public var httpMethodsEncodingParametersInURI: Set<String> {
        get { httpSerializer.httpMethodsEncodingParametersInURI }
        set { httpSerializer.httpMethodsEncodingParametersInURI = newValue }
    }

    /// Copied into each request when set: whether it may use cellular interfaces.
    public var allowsCellularAccess: Bool? {
        get { httpSerializer.allowsCellularAccess }
        set { httpSerializer.allowsCellularAccess = newValue }
    }

    /// Copied into each request when set: its cache policy.
    public var cachePolicy: CachePolicy? {
        get { httpSerializer.cachePolicy }
        set { httpSerializer.cachePolicy = newValue }
    }

    /// Copied into each request when set: whether cookies are handled (the request's `shouldHandleCookies`).
    public var shouldHandleCookies: Bool? {
        get { httpSerializer.shouldHandleCookies }
        set { httpSerializer.shouldHandleCookies = newValue }
    }

    /// AFHTTPRequestSerializer's spelling of `shouldHandleCookies`, kept for code written against it.
    @available(*, deprecated, renamed: "shouldHandleCookies")
    public var httpShouldHandleCookies: Bool? {
        get { httpSerializer.shouldHandleCookies }
        set { httpSerializer.shouldHandleCookies = newValue }
    }

    /// Copied into each request when set: whether it may be pipelined (the request's `shouldUsePipelining`).
    public var shouldUsePipelining: Bool? {
        get { httpSerializer.shouldUsePipelining }
        set { httpSerializer.shouldUsePipelining = newValue }
    }

    /// AFHTTPRequestSerializer's spelling of `shouldUsePipelining`, kept for code written against it.
    @available(*, deprecated, renamed: "shouldUsePipelining")
    public var httpShouldUsePipelining: Bool? {
        get { httpSerializer.shouldUsePipelining }
        set { httpSerializer.shouldUsePipelining = newValue }
    }

    /// Copied into each request when set: its traffic class.
    public var networkServiceType: NetworkServiceType? {
        get { httpSerializer.networkServiceType }
        set { httpSerializer.networkServiceType = newValue }
    }

    /// Copied into each request when set: its idle timeout.
    public var timeoutInterval: Duration? {
        get { httpSerializer.timeoutInterval }
        set { httpSerializer.timeoutInterval = newValue }
    }

    /// The default value of `name`, if any.
    /// - Parameter name: The field name (case-insensitive).
    /// - Returns: The value.
    public func value(forHTTPHeaderField name: String) -> String? {
        httpSerializer.httpRequestHeaders.first(name: name)
    }

    /// Sets (or, with nil, removes) a default header; `setValue(nil, forHTTPHeaderField: "User-Agent")` means no
    /// `User-Agent` is sent at all.
    /// - Parameters:
    ///   - value: The value, or nil to remove the field.
    ///   - name: The field name (case-insensitive).
    public mutating func setValue(_ value: String?, forHTTPHeaderField name: String) {
        httpSerializer.setHeader(value, name: name)
    }

    /// Sets `Authorization: Basic <base64 of UTF-8 "username:password">` as a default header.
    /// - Parameters:
    ///   - username: The user-id (not checked for `:`, as in AFNetworking).
    ///   - password: The password.
    public mutating func setAuthorizationHeaderField(username: String, password: String) {
        let credentials = Data("\(username):\(password)".utf8).base64EncodedString()
        httpSerializer.setHeader("Basic \(credentials)", name: "Authorization")
    }

    /// Removes the default `Authorization` header.
    public mutating func clearAuthorizationHeader() {
        httpSerializer.setHeader(nil, name: "Authorization")
    }

    /// Installs a custom query serialization: its result replaces the default query string, for URI methods and
    /// bodies alike (nil behaves like no parameters); a thrown error fails the request with
    /// `.requestSerializationFailed` wrapping it.
    /// - Parameter block: The serialization.
    public mutating func setQueryStringSerialization(_ block: @escaping @Sendable (ClientRequest, Parameters) throws -> String?) {
        httpSerializer.queryStringSerialization = block
    }

    /// Selects a built-in query style and removes any custom serialization.
    /// - Parameter style: The style.
    public mutating func setQueryStringSerialization(style: QueryStringSerializationStyle) {
        httpSerializer.queryStringStyle = style
        httpSerializer.queryStringSerialization = nil
    }

    /// The default form-style query of `parameters` (`WireClient.queryString(from:)`).
    /// - Parameter parameters: A `.dictionary`.
    /// - Returns: The query.
    /// - Throws: `.requestSerializationFailed` for parameters a query cannot hold.
    public func queryString(from parameters: Parameters) throws(ClientError) -> String {
        try WireClient.queryString(from: parameters)
    }
}

/// The built-in query-string styles.
public enum QueryStringSerializationStyle: String, Sendable, Hashable, Codable {
    /// AFNetworking's form style (`AFHTTPRequestQueryStringDefaultStyle`): `queryString(from:)`.
    case `default`
}
