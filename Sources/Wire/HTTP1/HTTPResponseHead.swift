/// The status line and header fields of an HTTP response.
public struct HTTPResponseHead: Sendable, Hashable {
    /// The protocol version.
    public var version: HTTPVersion
    /// The status code.
    public var status: HTTPStatus
    /// The reason phrase as sent; clients SHOULD ignore it (RFC 9112 §4).
    public var reasonPhrase: String
    /// The header fields, in wire order.
    public var headers: HTTPHeaders
    /// Repairs a lenient parser made to accept this head; always empty from a strict parser.
    public var repairs: [HTTP1Repair]

    /// Creates a response head.
    /// - Parameters:
    ///   - version: The version, HTTP/1.1 by default.
    ///   - status: The status.
    ///   - reasonPhrase: The reason phrase; `nil` uses the usual one for the code.
    ///   - headers: The fields.
    public init(
        version: HTTPVersion = .http1_1,
        status: HTTPStatus,
        reasonPhrase: String? = nil,
        headers: HTTPHeaders = HTTPHeaders()
    ) {
        self.init(
            version: version, status: status, reasonPhrase: reasonPhrase ?? status.defaultReasonPhrase, headers: headers,
            repairs: [])
    }

    /// A parsed head: its reason phrase as sent and the repairs a lenient parse made.
    init(version: HTTPVersion, status: HTTPStatus, reasonPhrase: String, headers: HTTPHeaders, repairs: [HTTP1Repair]) {
        self.version = version
        self.status = status
        self.reasonPhrase = reasonPhrase
        self.headers = headers
        self.repairs = repairs
    }

    /// Whether this is an interim 1xx response; the final response follows on the same exchange.
    public var isInterim: Bool { status.isInterim }

    /// Whether the connection stays open after this exchange, from the version and `Connection` field
    /// (RFC 9112 §9.3). A close-delimited body also ends the connection, whatever this says.
    ///
    /// O(number of fields).
    public var isKeepAlive: Bool {
        HTTPRequestHead.isKeepAlive(version: version, headers: headers)
    }
}
