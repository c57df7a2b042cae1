/// The start line and header fields of an HTTP request.
public struct HTTPRequestHead: Sendable, Hashable {
    /// The request method.
    public var method: HTTPMethod
    /// The request-target as sent (origin-, absolute-, authority- or asterisk-form; RFC 9112 §3.2).
    public var target: String
    /// The protocol version.
    public var version: HTTPVersion
    /// The header fields, in wire order.
    public var headers: HTTPHeaders
    /// Repairs a lenient parser made to accept this head; always empty from a strict parser.
    public var repairs: [HTTP1Repair]

    /// Creates a request head.
    /// - Parameters:
    ///   - method: The method.
    ///   - target: The request-target.
    ///   - version: The version, HTTP/1.1 by default.
    ///   - headers: The fields.
    public init(method: HTTPMethod, target: String, version: HTTPVersion = .http1_1, headers: HTTPHeaders = HTTPHeaders()) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.repairs = []
    }

    /// A parsed head with the repairs a lenient parser made, built in one step (no copy to set them afterwards).
    init(method: HTTPMethod, target: String, version: HTTPVersion, headers: HTTPHeaders, repairs: [HTTP1Repair]) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.repairs = repairs
    }

    /// Calls `body` with the target's bytes, without copying.
    /// - Parameter body: Receives the bytes.
    /// - Throws: Whatever `body` throws.
    public func withTargetBytes<Result, Failure: Error>(
        _ body: (Span<UInt8>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(target.utf8.span)
    }

    /// Whether the connection stays open after this exchange (RFC 9112 §9.3): HTTP/1.1 unless `Connection: close`;
    /// HTTP/1.0 only with `Connection: keep-alive`.
    ///
    /// O(number of fields).
    public var isKeepAlive: Bool {
        HTTPRequestHead.isKeepAlive(version: version, headers: headers)
    }

    static func isKeepAlive(version: HTTPVersion, headers: HTTPHeaders) -> Bool {
        if headers.containsToken("close", inFieldsNamed: "connection") {
            return false
        }
        if version >= .http1_1 {
            return true
        }
        // RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing; close after it.
        if headers.contains(name: "transfer-encoding") {
            return false
        }
        return headers.containsToken("keep-alive", inFieldsNamed: "connection")
    }
}
