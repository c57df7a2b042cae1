/// How the body after a head is delimited (RFC 9112 §6.3).
enum HTTP1BodyFraming: Sendable, Equatable {
    /// Exactly this many bytes (0: no body).
    case length(Int)
    /// Chunked transfer coding.
    case chunked
    /// Until the connection closes (responses only).
    case closeDelimited
    /// No body; the connection switches protocols.
    case upgrade
    /// An interim 1xx response; the final response follows.
    case interim
}

/// The result of one `HTTP1Parser.parse(_:)` call.
public struct HTTP1ParseStep: Sendable, Hashable {
    /// How many leading bytes of the input to drop, after handling `event`.
    public var consumed: Int
    /// What was found, or `nil` if more bytes are needed.
    public var event: HTTP1ParserEvent?

    /// Creates a step.
    /// - Parameters:
    ///   - consumed: Bytes consumed.
    ///   - event: The event, if any.
    public init(consumed: Int, event: HTTP1ParserEvent?) {
        self.consumed = consumed
        self.event = event
    }
}

/// Something the parser found in the byte stream.
public enum HTTP1ParserEvent: Sendable, Hashable {
    /// A complete request head.
    case requestHead(HTTPRequestHead)
    /// A complete response head, interim (1xx) ones included; check `isInterim`.
    case responseHead(HTTPResponseHead)
    /// Body bytes: indices into the bytes passed to this `parse` call (no copy).
    case body(Range<Int>)
    /// The message is complete, with the trailer section of a chunked body if it had fields.
    case end(trailers: HTTPHeaders?)
    /// The connection switched protocols (after 101, a 2xx to CONNECT, or an accepted upgrade request): the
    /// remaining bytes are not HTTP/1.1 and the parser produces no more events.
    case upgraded
}

/// What one `parseLean` call found: a plain value (no head inside), so returning it copies no fields.
package struct HTTP1LeanStep: Sendable, Equatable {
    /// Leading bytes of the input to drop.
    package var consumed: Int
    /// What was found.
    package var kind: Kind

    package init(consumed: Int, kind: Kind) {
        self.consumed = consumed
        self.kind = kind
    }

    /// What a parse step found.
    package enum Kind: Sendable, Equatable {
        /// Nothing yet: more bytes are needed.
        case needMore
        /// A head, waiting in the parser (`takeRequestHead`, or `parse`'s event).
        case head
        /// Body bytes at this range of the input.
        case body(Range<Int>)
        /// The message ended; its trailers, if any, wait in the parser (`takeTrailers`).
        case end
        /// The connection switched protocols.
        case upgraded
    }
}
