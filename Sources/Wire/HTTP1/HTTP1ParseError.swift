/// Why the HTTP/1.1 parser refused its input, and where.
///
/// A struct over a private code rather than a public enum, so new kinds can be added without breaking callers
/// (the lesson of NIO's `HTTPParserError`). `kind.name` is a stable snake_case string meant for logs and CLIs.
public struct HTTP1ParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of fault.
    public var kind: Kind
    /// The absolute byte offset of the fault, counted from the first byte the parser ever saw (across messages).
    public var offset: Int

    /// Creates an error.
    /// - Parameters:
    ///   - kind: The class of fault.
    ///   - offset: The absolute stream offset of the offending byte.
    public init(_ kind: Kind, at offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    /// `name@offset`, e.g. `invalid_content_length@42`.
    public var description: String { "\(kind.name)@\(offset)" }

    /// A class of parse fault. Compare with the static members.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: String, Sendable, Hashable {
            case invalidMethod = "invalid_method"
            case invalidTarget = "invalid_target"
            case userinfoInTarget = "userinfo_in_target"
            case invalidRequestLine = "invalid_request_line"
            case invalidVersion = "invalid_version"
            case unsupportedVersion = "unsupported_version"
            case invalidStatusLine = "invalid_status_line"
            case invalidStatusCode = "invalid_status_code"
            case invalidReasonPhrase = "invalid_reason_phrase"
            case requestLineTooLong = "request_line_too_long"
            case statusLineTooLong = "status_line_too_long"
            case headerSectionTooLarge = "header_section_too_large"
            case tooManyHeaders = "too_many_headers"
            case trailerSectionTooLarge = "trailer_section_too_large"
            case invalidFieldName = "invalid_field_name"
            case whitespaceBeforeColon = "whitespace_before_colon"
            case invalidFieldValue = "invalid_field_value"
            case whitespaceBeforeFirstField = "whitespace_before_first_field"
            case obsoleteLineFolding = "obsolete_line_folding"
            case bareCR = "bare_cr"
            case bareLF = "bare_lf"
            case invalidContentLength = "invalid_content_length"
            case duplicateContentLength = "duplicate_content_length"
            case conflictingContentLength = "conflicting_content_length"
            case transferEncodingWithContentLength = "transfer_encoding_with_content_length"
            case invalidTransferEncoding = "invalid_transfer_encoding"
            case unsupportedTransferCoding = "unsupported_transfer_coding"
            case transferEncodingNotChunked = "transfer_encoding_not_chunked"
            case chunkedAppliedTwice = "chunked_applied_twice"
            case transferEncodingInHTTP10 = "transfer_encoding_in_http10"
            case missingHost = "missing_host"
            case duplicateHost = "duplicate_host"
            case invalidHost = "invalid_host"
            case invalidChunkSize = "invalid_chunk_size"
            case chunkSizeTooLarge = "chunk_size_too_large"
            case invalidChunkExtension = "invalid_chunk_extension"
            case chunkExtensionTooLong = "chunk_extension_too_long"
            case invalidChunkTerminator = "invalid_chunk_terminator"
            case bodyTooLarge = "body_too_large"
            case unexpectedEndOfStream = "unexpected_end_of_stream"
        }

        private let code: Code

        private init(_ code: Code) {
            self.code = code
        }

        /// The stable snake_case name, e.g. `"invalid_content_length"`.
        public var name: String { code.rawValue }

        /// The stable name.
        public var description: String { code.rawValue }

        /// The `HTTP1ParserConfiguration` limit this fault exceeded, by its property name (`"maxHeaderCount"`), or
        /// nil when the fault is not a limit: so a message can say which setting to raise.
        public var limit: String? {
            switch code {
            case .requestLineTooLong, .statusLineTooLong: return "maxStartLineLength"
            case .headerSectionTooLarge, .trailerSectionTooLarge: return "maxHeaderSectionSize"
            case .tooManyHeaders: return "maxHeaderCount"
            case .chunkExtensionTooLong: return "maxChunkExtensionLength"
            case .bodyTooLarge: return "maxBodySize"
            default: return nil
            }
        }

        /// The method is empty or holds a non-`tchar` byte.
        public static let invalidMethod = Kind(.invalidMethod)
        /// The request-target holds a byte outside RFC 3986, a bad percent-escape, or has the wrong form.
        public static let invalidTarget = Kind(.invalidTarget)
        /// The request-target carries userinfo (`http://user:pw@host/`, or `user@host:443` for CONNECT), which
        /// RFC 9110 §4.2.4 says to treat as an error (a server answers 400); the offset is the "@".
        public static let userinfoInTarget = Kind(.userinfoInTarget)
        /// The request line is not `method SP target SP version` (extra or missing separators).
        public static let invalidRequestLine = Kind(.invalidRequestLine)
        /// The version is not exactly `HTTP/` DIGIT `.` DIGIT.
        public static let invalidVersion = Kind(.invalidVersion)
        /// A well-formed version other than HTTP/1.0 or HTTP/1.1 (a server answers 505).
        public static let unsupportedVersion = Kind(.unsupportedVersion)
        /// The status line is not `version SP status-code SP reason`.
        public static let invalidStatusLine = Kind(.invalidStatusLine)
        /// The status code is not three digits, or is below 100.
        public static let invalidStatusCode = Kind(.invalidStatusCode)
        /// The reason phrase holds a control byte.
        public static let invalidReasonPhrase = Kind(.invalidReasonPhrase)
        /// The request line exceeds `maxStartLineLength` (a server answers 414).
        public static let requestLineTooLong = Kind(.requestLineTooLong)
        /// The status line exceeds `maxStartLineLength`.
        public static let statusLineTooLong = Kind(.statusLineTooLong)
        /// The head exceeds `maxHeaderSectionSize` (a server answers 431).
        public static let headerSectionTooLarge = Kind(.headerSectionTooLarge)
        /// More than `maxHeaderCount` fields (a server answers 431).
        public static let tooManyHeaders = Kind(.tooManyHeaders)
        /// The trailer section exceeds `maxHeaderSectionSize`.
        public static let trailerSectionTooLarge = Kind(.trailerSectionTooLarge)
        /// A field name is empty, lacks its colon, or holds a non-`tchar` byte.
        public static let invalidFieldName = Kind(.invalidFieldName)
        /// Whitespace between a field name and its colon (RFC 9112 §5.1: MUST reject).
        public static let whitespaceBeforeColon = Kind(.whitespaceBeforeColon)
        /// A field value holds NUL or another control byte other than HTAB.
        public static let invalidFieldValue = Kind(.invalidFieldValue)
        /// Whitespace between the start line and the first field line (RFC 9112 §2.2).
        public static let whitespaceBeforeFirstField = Kind(.whitespaceBeforeFirstField)
        /// A field line continued with obs-fold (RFC 9112 §5.2).
        public static let obsoleteLineFolding = Kind(.obsoleteLineFolding)
        /// A CR not followed by LF (RFC 9112 §2.2).
        public static let bareCR = Kind(.bareCR)
        /// A line ended with LF alone.
        public static let bareLF = Kind(.bareLF)
        /// Content-Length is not 1*DIGIT or overflows.
        public static let invalidContentLength = Kind(.invalidContentLength)
        /// Content-Length repeated with identical values (refused unless lenient).
        public static let duplicateContentLength = Kind(.duplicateContentLength)
        /// Content-Length repeated with different values.
        public static let conflictingContentLength = Kind(.conflictingContentLength)
        /// Both Transfer-Encoding and Content-Length (a request-smuggling vector, RFC 9112 §6.3).
        public static let transferEncodingWithContentLength = Kind(.transferEncodingWithContentLength)
        /// Transfer-Encoding is empty or not a list of transfer-codings.
        public static let invalidTransferEncoding = Kind(.invalidTransferEncoding)
        /// A request uses a transfer coding other than chunked (`gzip, chunked`, `identity`): Wire decodes no other,
        /// so a server answers 501 and closes (RFC 9112 §6.1).
        public static let unsupportedTransferCoding = Kind(.unsupportedTransferCoding)
        /// A request's final transfer coding is not chunked, so its length cannot be known.
        public static let transferEncodingNotChunked = Kind(.transferEncodingNotChunked)
        /// chunked appears more than once (RFC 9112 §6.1).
        public static let chunkedAppliedTwice = Kind(.chunkedAppliedTwice)
        /// An HTTP/1.0 request or response carries Transfer-Encoding, which RFC 9112 §6.1 treats as faulty framing
        /// (a server answers 400 and closes; a client fails the exchange and closes).
        public static let transferEncodingInHTTP10 = Kind(.transferEncodingInHTTP10)
        /// An HTTP/1.1 request without Host (RFC 9112 §3.2).
        public static let missingHost = Kind(.missingHost)
        /// More than one Host field.
        public static let duplicateHost = Kind(.duplicateHost)
        /// A Host value that is not `uri-host [ ":" port ]`.
        public static let invalidHost = Kind(.invalidHost)
        /// A chunk-size that is empty or not hexadecimal.
        public static let invalidChunkSize = Kind(.invalidChunkSize)
        /// A chunk-size beyond `Int.max`.
        public static let chunkSizeTooLarge = Kind(.chunkSizeTooLarge)
        /// A chunk extension that does not match RFC 9112 §7.1.1.
        public static let invalidChunkExtension = Kind(.invalidChunkExtension)
        /// A chunk extension longer than `maxChunkExtensionLength`.
        public static let chunkExtensionTooLong = Kind(.chunkExtensionTooLong)
        /// Chunk data not followed by CRLF.
        public static let invalidChunkTerminator = Kind(.invalidChunkTerminator)
        /// The body exceeds `maxBodySize` (a server answers 413).
        public static let bodyTooLarge = Kind(.bodyTooLarge)
        /// The peer closed the connection in the middle of a message.
        public static let unexpectedEndOfStream = Kind(.unexpectedEndOfStream)
    }
}
