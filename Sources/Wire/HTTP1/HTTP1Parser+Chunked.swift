/// Decoder for the chunked transfer coding's framing (RFC 9112 §7.1), byte by byte and resumable anywhere.
///
/// Framing bytes (chunk-size lines, the CRLF after data) are consumed as they are validated, so a chunk line split
/// across reads is never rescanned. Chunk data is never copied: the decoder reports index ranges. The trailer
/// section after the last chunk is left to `HTTP1HeadScanner`. No leniency applies here: a chunk line that two
/// parsers read differently is a request-smuggling vector.
struct HTTP1ChunkedDecoder: Sendable {
    /// Where the decoder stands within the chunk framing.
    private enum Phase: Sendable {
        /// Reading chunk-size hex digits.
        case size
        /// BWS after the size or an extension value; only ";" may follow.
        case whitespaceBeforeSemicolon
        /// After ";", optional BWS, then an extension name.
        case extensionNameStart
        case extensionName
        /// BWS after a name; "=" or ";" must follow.
        case extensionAfterName
        /// After "=", optional BWS, then a token or quoted-string.
        case extensionValueStart
        case extensionToken
        case extensionQuoted
        case extensionQuotedPair
        case extensionAfterQuoted
        /// Saw CR ending the chunk-size line.
        case lineFeed
        /// Inside chunk data.
        case data
        /// Expecting the CR after chunk data.
        case dataCR
        /// Expecting the LF after chunk data.
        case dataLF
    }

    /// What one decode call produced.
    enum Outcome: Sendable {
        /// All bytes up to `consumed` were framing; more are needed.
        case needMore(consumed: Int)
        /// Chunk data at these indices.
        case data(Range<Int>)
        /// The last-chunk line ended just before `end`; the trailer section follows.
        case lastChunk(end: Int)
    }

    private var phase = Phase.size
    private var size = 0
    private var digits = 0
    private var remaining = 0
    private var extensionLength = 0
    /// Body bytes announced so far, for `maxBodySize`.
    private var bodyLength = 0

    /// Ready for the first chunk of a new body.
    init() {}

    /// Data bytes of the current chunk still to come; 0 outside a chunk's data.
    var dataStillDue: Int { phase == .data ? remaining : 0 }

    /// Decodes from `bytes[start...]`.
    /// - Parameters:
    ///   - bytes: The caller's bytes.
    ///   - start: First unprocessed index.
    ///   - streamOffset: Absolute stream offset of `bytes[0]`.
    ///   - configuration: Limits.
    /// - Throws: `HTTP1ParseError` for malformed framing or exceeded limits.
    mutating func decode(
        _ bytes: UnsafeBufferPointer<UInt8>,
        from start: Int,
        streamOffset: Int,
        configuration: HTTP1ParserConfiguration
    ) throws(HTTP1ParseError) -> Outcome {
        let table = CharacterClasses.table
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            switch phase {
            case .size, .lineFeed, .data, .dataCR, .dataLF:
                break
            case .whitespaceBeforeSemicolon, .extensionNameStart, .extensionName, .extensionAfterName,
                .extensionValueStart, .extensionToken, .extensionQuoted, .extensionQuotedPair, .extensionAfterQuoted:
                extensionLength += 1
                if extensionLength > configuration.maxChunkExtensionLength {
                    throw HTTP1ParseError(.chunkExtensionTooLong, at: streamOffset + index)
                }
            }
            let isToken = table[byte] & CharacterClasses.token != 0
            let isWhitespace = byte == ASCII.space || byte == ASCII.tab

            switch phase {
            case .size:
                if let value = CharacterClasses.hexValue(byte) {
                    guard size <= Int.max >> 4 else {
                        throw HTTP1ParseError(.chunkSizeTooLarge, at: streamOffset + index)
                    }
                    size = size << 4 | Int(value)
                    digits += 1
                } else if digits == 0 {
                    throw HTTP1ParseError(.invalidChunkSize, at: streamOffset + index)
                } else if byte == ASCII.semicolon {
                    phase = .extensionNameStart
                } else if isWhitespace {
                    phase = .whitespaceBeforeSemicolon
                } else if byte == ASCII.cr {
                    phase = .lineFeed
                } else if byte == ASCII.lf {
                    throw HTTP1ParseError(.bareLF, at: streamOffset + index)
                } else {
                    throw HTTP1ParseError(.invalidChunkSize, at: streamOffset + index)
                }

            case .whitespaceBeforeSemicolon:
                if byte == ASCII.semicolon {
                    phase = .extensionNameStart
                } else if !isWhitespace {
                    throw HTTP1ParseError(.invalidChunkExtension, at: streamOffset + index)
                }

            case .extensionNameStart:
                if isToken {
                    phase = .extensionName
                } else if !isWhitespace {
                    throw HTTP1ParseError(.invalidChunkExtension, at: streamOffset + index)
                }

            case .extensionName:
                if isToken {
                    break
                } else if isWhitespace {
                    phase = .extensionAfterName
                } else if byte == ASCII.equals {
                    phase = .extensionValueStart
                } else if byte == ASCII.semicolon {
                    phase = .extensionNameStart
                } else {
                    try endLine(byte, streamOffset: streamOffset, at: index)
                }

            case .extensionAfterName:
                if byte == ASCII.equals {
                    phase = .extensionValueStart
                } else if byte == ASCII.semicolon {
                    phase = .extensionNameStart
                } else if !isWhitespace {
                    throw HTTP1ParseError(.invalidChunkExtension, at: streamOffset + index)
                }

            case .extensionValueStart:
                if byte == ASCII.quote {
                    phase = .extensionQuoted
                } else if isToken {
                    phase = .extensionToken
                } else if !isWhitespace {
                    throw HTTP1ParseError(.invalidChunkExtension, at: streamOffset + index)
                }

            case .extensionToken:
                if isToken {
                    break
                } else if isWhitespace {
                    phase = .whitespaceBeforeSemicolon
                } else if byte == ASCII.semicolon {
                    phase = .extensionNameStart
                } else {
                    try endLine(byte, streamOffset: streamOffset, at: index)
                }

            case .extensionQuoted:
                if byte == ASCII.quote {
                    phase = .extensionAfterQuoted
                } else if byte == ASCII.backslash {
                    phase = .extensionQuotedPair
                } else if table[byte] & CharacterClasses.quotedText == 0 {
                    throw HTTP1ParseError(.invalidChunkExtension, at: streamOffset + index)
                }

            case .extensionQuotedPair:
                // quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
                guard isWhitespace || table[byte] & CharacterClasses.fieldVChar != 0 else {
                    throw HTTP1ParseError(.invalidChunkExtension, at: streamOffset + index)
                }
                phase = .extensionQuoted

            case .extensionAfterQuoted:
                if isWhitespace {
                    phase = .whitespaceBeforeSemicolon
                } else if byte == ASCII.semicolon {
                    phase = .extensionNameStart
                } else {
                    try endLine(byte, streamOffset: streamOffset, at: index)
                }

            case .lineFeed:
                guard byte == ASCII.lf else { throw HTTP1ParseError(.bareCR, at: streamOffset + index - 1) }
                index += 1
                if size == 0 {
                    self = HTTP1ChunkedDecoder()
                    return .lastChunk(end: index)
                }
                if let maxBodySize = configuration.maxBodySize, size > maxBodySize - bodyLength {
                    throw HTTP1ParseError(.bodyTooLarge, at: streamOffset + index - 1)
                }
                bodyLength += size
                remaining = size
                phase = .data
                continue

            case .data:
                let take = min(bytes.count - index, remaining)
                remaining -= take
                if remaining == 0 { phase = .dataCR }
                return .data(index..<index + take)

            case .dataCR:
                guard byte == ASCII.cr else {
                    throw HTTP1ParseError(.invalidChunkTerminator, at: streamOffset + index)
                }
                phase = .dataLF

            case .dataLF:
                guard byte == ASCII.lf else {
                    throw HTTP1ParseError(.invalidChunkTerminator, at: streamOffset + index)
                }
                phase = .size
                size = 0
                digits = 0
                extensionLength = 0
            }
            index += 1
        }
        return .needMore(consumed: index)
    }

    /// Handles the byte after an extension element: CR ends the line, anything else is malformed.
    private mutating func endLine(_ byte: UInt8, streamOffset: Int, at index: Int) throws(HTTP1ParseError) {
        if byte == ASCII.cr {
            phase = .lineFeed
        } else if byte == ASCII.lf {
            throw HTTP1ParseError(.bareLF, at: streamOffset + index)
        } else {
            throw HTTP1ParseError(.invalidChunkExtension, at: streamOffset + index)
        }
    }
}
