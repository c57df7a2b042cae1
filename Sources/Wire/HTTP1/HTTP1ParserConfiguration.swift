/// Limits and leniencies of an `HTTP1Parser`.
public struct HTTP1ParserConfiguration: Sendable, Hashable {
    /// The longest start line, excluding CRLF. RFC 9112 §3 recommends supporting at least 8000 octets.
    public var maxStartLineLength: Int
    /// The largest head, start line and final CRLF included. Also bounds each trailer section.
    public var maxHeaderSectionSize: Int
    /// The most field lines in one header or trailer section. Default 256: real responses carry 60–100 fields (cookies,
    /// security and tracing headers), so the bound on memory is `maxHeaderSectionSize`, not this count.
    public var maxHeaderCount: Int
    /// The longest chunk extension on one chunk-size line.
    public var maxChunkExtensionLength: Int
    /// The largest body, or `nil` for no limit.
    public var maxBodySize: Int?
    /// Whether a response may carry both Transfer-Encoding and Content-Length; Transfer-Encoding then wins
    /// (RFC 9112 §6.3 rule 3). Requests with both are always refused.
    public var allowsResponseTransferEncodingWithContentLength: Bool
    /// The repairs the parser may make instead of refusing; empty (strict) by default.
    public var leniency: HTTP1Leniency
    /// Whether a chunked body is delivered as it came, its chunk-size lines, the CRLFs after the data, the last
    /// chunk and the trailer section included (curl's `--raw`), instead of its data alone. The framing is still
    /// validated and still ends the body. Default false.
    package var passesChunkedFraming = false

    /// Creates a configuration; the defaults are strict.
    /// - Parameters:
    ///   - maxStartLineLength: Longest start line; at least 8000 is recommended.
    ///   - maxHeaderSectionSize: Largest head in bytes.
    ///   - maxHeaderCount: Most fields per section; the default admits well over 100.
    ///   - maxChunkExtensionLength: Longest chunk extension.
    ///   - maxBodySize: Largest body, `nil` for unlimited.
    ///   - allowsResponseTransferEncodingWithContentLength: Accept TE with CL in responses.
    ///   - leniency: Repairs allowed.
    public init(
        maxStartLineLength: Int = 8192,
        maxHeaderSectionSize: Int = 64 * 1024,
        maxHeaderCount: Int = 256,
        maxChunkExtensionLength: Int = 4096,
        maxBodySize: Int? = nil,
        allowsResponseTransferEncodingWithContentLength: Bool = false,
        leniency: HTTP1Leniency = []
    ) {
        self.maxStartLineLength = maxStartLineLength
        self.maxHeaderSectionSize = maxHeaderSectionSize
        self.maxHeaderCount = maxHeaderCount
        self.maxChunkExtensionLength = maxChunkExtensionLength
        self.maxBodySize = maxBodySize
        self.allowsResponseTransferEncodingWithContentLength = allowsResponseTransferEncodingWithContentLength
        self.leniency = leniency
    }

    /// The strict defaults: what a server reads requests with (`HTTPServerConfiguration.parser`).
    public static let strict = HTTP1ParserConfiguration()

    /// The defaults for a user agent reading responses (`HTTPClientConfiguration.parserConfiguration`,
    /// `wire parse --response`): strict, except that obs-fold is accepted and each fold becomes one SP, which
    /// RFC 9112 §5.2 requires of a user agent (a server must refuse it instead, so `strict` keeps refusing it).
    public static let userAgent = HTTP1ParserConfiguration(leniency: .obsoleteLineFolding)

    /// Every repair enabled, other settings default.
    public static let lenient = HTTP1ParserConfiguration(leniency: .all)
}

/// Repairs a lenient parser may make. Each repair it makes is reported in the head's `repairs`.
///
/// Leniency applies to start lines and header sections only; chunked framing and trailers are always strict,
/// because a repaired chunk line is exactly what request smuggling exploits.
public struct HTTP1Leniency: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public var rawValue: UInt8

    /// Creates a set from raw bits.
    /// - Parameter rawValue: The bits.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// Accept LF alone as a line ending in the head (RFC 9112 §2.2 MAY).
    public static let bareLineFeed = HTTP1Leniency(rawValue: 1 << 0)
    /// Replace each obs-fold (`OWS CRLF RWS`) with one SP (RFC 9112 §5.2), in requests and responses. On by default
    /// for responses read by a user agent (`HTTP1ParserConfiguration.userAgent`); off in `strict`.
    public static let obsoleteLineFolding = HTTP1Leniency(rawValue: 1 << 1)
    /// Parse the request line on whitespace runs (SP, HTAB, VT, FF; RFC 9112 §3 MAY); also tolerate a status line
    /// without the space before an empty reason phrase.
    public static let startLineWhitespace = HTTP1Leniency(rawValue: 1 << 2)
    /// Accept repeated Content-Length fields or list elements with identical values (RFC 9110 §8.6 MAY).
    public static let duplicateContentLength = HTTP1Leniency(rawValue: 1 << 3)

    /// All repairs.
    public static let all: HTTP1Leniency = [.bareLineFeed, .obsoleteLineFolding, .startLineWhitespace, .duplicateContentLength]
}

/// One repair made by a lenient parser, with the stream offset where the first such fault was seen in the head.
public struct HTTP1Repair: Sendable, Hashable, CustomStringConvertible {
    /// The leniency that allowed this repair.
    public var kind: HTTP1Leniency
    /// The absolute stream offset of the first repaired byte of this kind in the head.
    public var offset: Int

    /// Creates a repair record.
    /// - Parameters:
    ///   - kind: The single leniency used.
    ///   - offset: Stream offset of the fault.
    public init(kind: HTTP1Leniency, offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    /// A short name and the offset, e.g. `bare_lf@17`.
    public var description: String {
        let name: String
        switch kind {
        case .bareLineFeed: name = "bare_lf"
        case .obsoleteLineFolding: name = "obsolete_line_folding"
        case .startLineWhitespace: name = "start_line_whitespace"
        case .duplicateContentLength: name = "duplicate_content_length"
        default: name = "repair(\(kind.rawValue))"
        }
        return "\(name)@\(offset)"
    }
}
