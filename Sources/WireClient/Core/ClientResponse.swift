import FoundationEssentials
import Wire

/// A received HTTP response head, as the serializers and completion handlers see it (NSHTTPURLResponse).
///
/// The fields sit behind one immutable reference: a response is copied through every step of a task (its outcome,
/// the task, the body reader, the completion, the caller's result), and a copy is then one retain. Setting a
/// property (rare: a cache marks where a response came from) makes a new reference.
public struct ClientResponse: Sendable, Hashable {
    /// The stored fields. The values derived from `headers` are worked out when read (a data task's serializer
    /// reads none of them); one that was set is kept as set.
    private struct Fields: Sendable, Hashable {
        var url: URL
        var statusCode: Int
        var headers: HTTPHeaders
        /// Values set in place of the derived ones: nil for "derived" (an optional set to nil is `.some(nil)`).
        var setMIMEType: String??
        var setTextEncodingName: String??
        var setExpectedContentLength: Int64?
        var source = ResponseSource.network

        var mimeType: String? { setMIMEType ?? contentType?.type }
        var textEncodingName: String? { setTextEncodingName ?? contentType?.charset }
        var expectedContentLength: Int64 { setExpectedContentLength ?? ClientResponse.contentLength(headers) }
        private var contentType: MediaType? { headers.first(name: "Content-Type").map(MediaType.init) }

        /// Equal when every value is, derived ones included (whether derived or set).
        static func == (left: Fields, right: Fields) -> Bool {
            left.statusCode == right.statusCode && left.url == right.url && left.headers == right.headers
                && left.source == right.source
                && left.mimeType == right.mimeType && left.textEncodingName == right.textEncodingName
                && left.expectedContentLength == right.expectedContentLength
        }

        /// Hashes what the derived values come from (equal fields have it equal).
        func hash(into hasher: inout Hasher) {
            hasher.combine(url)
            hasher.combine(statusCode)
            hasher.combine(headers)
            hasher.combine(source)
        }

        /// Keeps the derived values as they are now, before `headers` changes under them.
        mutating func pinDerivedValues() {
            (setMIMEType, setTextEncodingName, setExpectedContentLength) = (mimeType, textEncodingName, expectedContentLength)
        }
    }

    /// The fields, shared by copies and never changed in place.
    private var storage: Boxed<Fields>
    /// The metrics, beside the fields rather than among them: a completed task's response gets its final metrics after
    /// the head was shared (with the task, its records), and setting them then is one stored reference, not a copy
    /// of every field into a new box.
    private var storedMetrics: MetricsBox?

    /// Reads through the shared storage; a write replaces it.
    private var fields: Fields {
        get { storage.value }
        set { storage = Boxed(newValue) }
    }

    /// The URL that produced this response (after redirects, the last hop's).
    public var url: URL {
        get { storage.value.url }
        set { fields.url = newValue }
    }
    /// The status code.
    public var statusCode: Int {
        get { storage.value.statusCode }
        set { fields.statusCode = newValue }
    }
    /// The header fields, in wire order. Setting them leaves `mimeType`, `textEncodingName` and
    /// `expectedContentLength` as they were.
    public var headers: HTTPHeaders {
        get { storage.value.headers }
        set {
            var changed = storage.value
            changed.pinDerivedValues()
            changed.headers = newValue
            fields = changed
        }
    }
    /// Whether a field is called `name` (case-insensitively): asked in the shared storage, where `headers.contains`
    /// first copies the fields out of it (a retain and a release each of their two arrays).
    func hasField(named name: String) -> Bool {
        storage.value.headers.contains(name: name)
    }

    /// The media type of `Content-Type`: up to the first `;`, trimmed and lower-cased; nil without a
    /// `Content-Type` or with an empty one.
    public var mimeType: String? {
        get { storage.value.mimeType }
        set { fields.setMIMEType = .some(newValue) }
    }
    /// The `charset` parameter of `Content-Type`, lower-cased and unquoted (NSURLResponse's `textEncodingName`).
    public var textEncodingName: String? {
        get { storage.value.textEncodingName }
        set { fields.setTextEncodingName = .some(newValue) }
    }
    /// The body length from `Content-Length`, or −1 when the length is unknown (absent, chunked or malformed).
    public var expectedContentLength: Int64 {
        get { storage.value.expectedContentLength }
        set { fields.setExpectedContentLength = newValue }
    }
    /// Where the response came from: the network (`.network`, `.networkStored`) or a `URLCache` (`.cache` with no
    /// request sent, `.revalidated` after a 304). `.network` for a response made with `init`.
    public var source: ResponseSource {
        get { storage.value.source }
        set { fields.source = newValue }
    }
    /// Timings and byte counts of the exchange, when it went over the network: in a completed task's response, of the
    /// whole exchange, body included; nil in the response a hook sees before the body (and in a cache's).
    public var metrics: HTTPClientMetrics.Snapshot? {
        get { storedMetrics?.value }
        set { storedMetrics = newValue.map(MetricsBox.init) }
    }
    /// The metrics behind a reference (`MetricsBox`: Wire's record of a finished exchange, or a snapshot): shared,
    /// not copied, by what carries the response's metrics on (`CompletionInfo`).
    var metricsBox: MetricsBox? {
        get { storedMetrics }
        set { storedMetrics = newValue }
    }

    /// Creates a response; `mimeType`, `textEncodingName` and `expectedContentLength` are derived from `headers`.
    /// - Parameters:
    ///   - url: The URL that produced the response.
    ///   - statusCode: The status code.
    ///   - headers: The header fields.
    ///   - metrics: The exchange's metrics.
    public init(url: URL, statusCode: Int, headers: HTTPHeaders = HTTPHeaders(), metrics: HTTPClientMetrics.Snapshot? = nil) {
        storage = Boxed(Fields(url: url, statusCode: statusCode, headers: headers))
        storedMetrics = metrics.map(MetricsBox.init)
    }

    /// Equal when every field is: the same status, URL, fields, derived values, source and metrics.
    public static func == (lhs: ClientResponse, rhs: ClientResponse) -> Bool {
        lhs.storage == rhs.storage && lhs.storedMetrics == rhs.storedMetrics
    }

    /// Hashes every field the derived values come from.
    public func hash(into hasher: inout Hasher) {
        storage.value.hash(into: &hasher)
        hasher.combine(storedMetrics)
    }

    /// The first value of the field called `name` (case-insensitive).
    /// - Parameter name: The field name.
    /// - Returns: The value, or nil when the field is absent.
    public func value(forHTTPHeaderField name: String) -> String? {
        headers.first(name: name)
    }

    /// `Content-Length` as NSURLResponse reads it: one run of decimal digits (repeated identical values allowed,
    /// RFC 9110 §8.6); anything else, or a chunked body, is unknown.
    fileprivate static func contentLength(_ headers: HTTPHeaders) -> Int64 {
        // The common case, one `Content-Length` of digits and no `Transfer-Encoding`: one pass over the names, no
        // string made.
        if let length = plainContentLength(headers) { return length }
        if headers.containsToken("chunked", inFieldsNamed: "Transfer-Encoding") { return -1 }
        let fields = headers["Content-Length"]
        var length: Int64?
        for field in fields {
            for item in field.split(separator: ",", omittingEmptySubsequences: false) {
                let digits = item.trimmingOWS
                guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int64(digits),
                    length == nil || length == value
                else { return -1 }
                length = value
            }
        }
        return length ?? -1
    }

    /// The length when `headers` has exactly one `Content-Length`, of 1 to 18 digits, and no `Transfer-Encoding`;
    /// nil for anything else (which `contentLength` then reads the long way).
    private static func plainContentLength(_ headers: HTTPHeaders) -> Int64? {
        guard !headers.contains(name: "Transfer-Encoding") else { return nil }
        var fields = 0
        var length: Int64?
        headers.forEachPosition(named: "Content-Length") { position in
            fields += 1
            length = headers.withValueBytes(at: position) { value -> Int64? in
                guard value.count > 0, value.count <= 18 else { return nil }
                var total: Int64 = 0
                for offset in 0..<value.count {
                    let byte = value[offset]
                    guard byte >= 0x30, byte <= 0x39 else { return nil }
                    total = total * 10 + Int64(byte - 0x30)
                }
                return total
            }
        }
        return fields == 1 ? length : nil
    }
}

/// A `Content-Type` value split into its media type and `charset`.
struct MediaType {
    /// The type and subtype, lower-cased; nil when empty.
    var type: String?
    /// The `charset` parameter, lower-cased and unquoted.
    var charset: String?

    init(_ value: String) {
        // The common case, a bare lower-case essence ("application/json"): no split, no new string.
        if value.utf8.allSatisfy({ byte in
            byte != UInt8(ascii: ";") && byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t")
                && !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
        }) {
            type = value.isEmpty ? nil : value
            return
        }
        var parts = value.split(separator: ";", omittingEmptySubsequences: false).makeIterator()
        let essence = (parts.next() ?? "").trimmingOWS.lowercased()
        type = essence.isEmpty ? nil : essence
        while let parameter = parts.next() {
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            guard parameter[..<equals].trimmingOWS.lowercased() == "charset" else { continue }
            var charsetValue = parameter[parameter.index(after: equals)...].trimmingOWS
            if charsetValue.count >= 2, charsetValue.hasPrefix("\""), charsetValue.hasSuffix("\"") {
                charsetValue = String(charsetValue.dropFirst().dropLast())
            }
            charset = charsetValue.isEmpty ? nil : charsetValue.lowercased()
            break
        }
    }
}
