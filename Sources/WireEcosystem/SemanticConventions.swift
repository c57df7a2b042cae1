import Wire

/// The names of OpenTelemetry's HTTP semantic conventions (stable since 1.23) that Wire's metrics and spans use, in
/// one place.
enum SemanticConventions {
    // Metrics.
    static let serverRequestDuration = "http.server.request.duration"
    static let serverActiveRequests = "http.server.active_requests"
    static let clientRequestDuration = "http.client.request.duration"
    static let clientActiveRequests = "http.client.active_requests"
    static let clientOpenConnections = "http.client.open_connections"
    static let clientConnectionDuration = "http.client.connection.duration"

    // Attributes.
    static let requestMethod = "http.request.method"
    static let responseStatusCode = "http.response.status_code"
    static let urlScheme = "url.scheme"
    static let urlPath = "url.path"
    static let urlQuery = "url.query"
    static let urlFull = "url.full"
    static let serverAddress = "server.address"
    static let serverPort = "server.port"
    static let clientAddress = "client.address"
    static let clientPort = "client.port"
    static let networkProtocolVersion = "network.protocol.version"
    static let networkPeerAddress = "network.peer.address"
    static let networkPeerPort = "network.peer.port"
    static let userAgent = "user_agent.original"
    static let errorType = "error.type"
    static let connectionState = "http.connection.state"

    /// The method as the conventions want it: one of the registered methods as written, anything else `_OTHER`
    /// (so a client sending random methods cannot make metrics without bound).
    static func method(_ method: HTTPMethod) -> String {
        switch method.rawValue {
        case "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH": method.rawValue
        default: "_OTHER"
        }
    }

    /// `network.protocol.version`: `1.1` or `1.0`.
    static func protocolVersion(_ version: HTTPVersion) -> String {
        "\(version.major).\(version.minor)"
    }
}
