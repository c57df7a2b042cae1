/// Writes HTTP/1.1 messages into a caller-provided buffer, appending, so a connection can gather-write.
///
/// Every method, target, field and reason phrase is checked before anything is appended: a method or field name
/// that is not a token, or a target, value or reason containing CR, LF, NUL or another control byte, is refused.
/// No input can inject a line. On error the buffer is left as it was.
public enum HTTP1Serializer {
    /// How a head announces the body that follows.
    public enum BodyFraming: Sendable, Hashable {
        /// Write the fields exactly as they are in the head.
        case asInHeaders
        /// Drop any Content-Length and Transfer-Encoding fields from the head and write `Content-Length: n`.
        case contentLength(Int)
        /// Drop any Content-Length and Transfer-Encoding fields and write `Transfer-Encoding: chunked`; send the
        /// body with `writeChunk` and `writeLastChunk`.
        case chunked
    }

    /// Appends a request head.
    /// - Parameters:
    ///   - head: The request line and fields.
    ///   - framing: How the body is announced.
    ///   - buffer: The bytes to append to.
    /// - Throws: `HTTP1SerializationError` if any part would be unsafe on the wire.
    public static func writeRequestHead(
        _ head: HTTPRequestHead,
        framing: BodyFraming = .asInHeaders,
        into buffer: inout [UInt8]
    ) throws(HTTP1SerializationError) {
        try writeRequestHead(head, adding: AddedRequestFields(host: nil, userAgent: nil), framing: framing, into: &buffer)
    }

    private static func validateRequestLine(_ head: HTTPRequestHead) throws(HTTP1SerializationError) {
        let method = head.method.rawValue
        guard !method.isEmpty, withUTF8(of: method, { isToken($0) }) else {
            throw HTTP1SerializationError(.invalidMethod, detail: method)
        }
        // The target may not be empty or hold SP, which would shift the version, or any control byte.
        guard !head.target.isEmpty, withUTF8(of: head.target, { isTarget($0) }) else {
            throw HTTP1SerializationError(.invalidTarget, detail: head.target)
        }
        try validateVersion(head.version)
    }

    private static func appendRequestLine(_ head: HTTPRequestHead, to buffer: inout [UInt8]) {
        appendUTF8(of: head.method.rawValue, to: &buffer)
        buffer.append(ASCII.space)
        appendUTF8(of: head.target, to: &buffer)
        buffer.append(ASCII.space)
        appendVersion(head.version, to: &buffer)
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
    }

    /// Fields a client writes after a request head's own, without copying the head's fields into a new
    /// `HTTPHeaders` to add them (two allocations per request).
    package struct AddedRequestFields {
        /// A `Host` field's value, or nil for none.
        package var host: String?
        /// A `User-Agent` field's value, or nil for none.
        package var userAgent: String?
        /// Whether to write `Expect: 100-continue`.
        package var expectContinue = false

        package init(host: String?, userAgent: String?, expectContinue: Bool = false) {
            self.host = host
            self.userAgent = userAgent
            self.expectContinue = expectContinue
        }
    }

    /// Appends a request head as `writeRequestHead(_:framing:into:)` does, with `added` written after the head's
    /// own fields and before the framing field: the bytes are the same as if they had been added to the head.
    /// - Throws: `HTTP1SerializationError` if any part would be unsafe on the wire, an added value included.
    package static func writeRequestHead(
        _ head: HTTPRequestHead,
        adding added: AddedRequestFields,
        framing: BodyFraming = .asInHeaders,
        into buffer: inout [UInt8]
    ) throws(HTTP1SerializationError) {
        try validateRequestLine(head)
        try validateFields(head.headers)
        try validateAddedValue(added.host)
        try validateAddedValue(added.userAgent)
        appendRequestLine(head, to: &buffer)
        appendFieldLines(head.headers, skippingFraming: framing != .asInHeaders, to: &buffer)
        if let host = added.host { appendField("Host", host, to: &buffer) }
        if let userAgent = added.userAgent { appendField("User-Agent", userAgent, to: &buffer) }
        if added.expectContinue { appendASCII("Expect: 100-continue\r\n", to: &buffer) }
        appendFraming(framing, to: &buffer)
    }

    private static func validateAddedValue(_ value: String?) throws(HTTP1SerializationError) {
        guard let value else { return }
        guard withUTF8(of: value, { isFieldValue($0) }) else {
            throw HTTP1SerializationError(.invalidFieldValue, detail: value)
        }
    }

    private static func appendField(_ name: StaticString, _ value: String, to buffer: inout [UInt8]) {
        appendASCII(name, to: &buffer)
        buffer.append(ASCII.colon)
        buffer.append(ASCII.space)
        appendUTF8(of: value, to: &buffer)
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
    }

    /// Appends a response head.
    /// - Parameters:
    ///   - head: The status line and fields.
    ///   - framing: How the body is announced.
    ///   - buffer: The bytes to append to.
    /// - Throws: `HTTP1SerializationError` if any part would be unsafe on the wire.
    public static func writeResponseHead(
        _ head: HTTPResponseHead,
        framing: BodyFraming = .asInHeaders,
        into buffer: inout [UInt8]
    ) throws(HTTP1SerializationError) {
        var lines = ByteBuffer()
        try writeResponseHeadLines(head, framing: framing, into: &lines)
        lines.withUnsafeReadableBytes { buffer.append(contentsOf: $0) }
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
    }

    /// Appends one chunk: size line, data, CRLF. Empty data writes nothing, since a zero-size chunk would end the body.
    /// - Parameters:
    ///   - data: The chunk's bytes.
    ///   - extensions: Optional `;name=value` text written verbatim after the size; validated.
    ///   - buffer: The bytes to append to.
    /// - Throws: `HTTP1SerializationError.Kind.invalidChunkExtension` for malformed extensions.
    public static func writeChunk(
        _ data: Span<UInt8>,
        extensions: String = "",
        into buffer: inout [UInt8]
    ) throws(HTTP1SerializationError) {
        guard !data.isEmpty else { return }
        try validateChunkExtensions(extensions)
        appendChunkHead(size: data.count, extensions: extensions, to: &buffer)
        data.withUnsafeBufferPointer { buffer.append(contentsOf: $0) }
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
    }

    /// Appends one chunk from an array; see `writeChunk(_:extensions:into:)`.
    /// - Parameters:
    ///   - data: The chunk's bytes.
    ///   - extensions: Optional chunk extensions.
    ///   - buffer: The bytes to append to.
    /// - Throws: `HTTP1SerializationError.Kind.invalidChunkExtension` for malformed extensions.
    public static func writeChunk(
        _ data: [UInt8],
        extensions: String = "",
        into buffer: inout [UInt8]
    ) throws(HTTP1SerializationError) {
        try writeChunk(data.span, extensions: extensions, into: &buffer)
    }

    /// Appends the last-chunk, the trailer section and the final CRLF that end a chunked body (RFC 9112 §7.1).
    /// - Parameters:
    ///   - trailers: Trailer fields, if any.
    ///   - buffer: The bytes to append to.
    /// - Throws: `HTTP1SerializationError` for unsafe trailer fields.
    public static func writeLastChunk(
        trailers: HTTPHeaders? = nil,
        into buffer: inout [UInt8]
    ) throws(HTTP1SerializationError) {
        if let trailers { try validateFields(trailers) }
        buffer.append(UInt8(ascii: "0"))
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
        if let trailers {
            appendFieldLines(trailers, skippingFraming: false, to: &buffer)
        }
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
    }

    static func validateVersion(_ version: HTTPVersion) throws(HTTP1SerializationError) {
        guard version.major < 10, version.minor < 10 else {
            throw HTTP1SerializationError(.invalidVersion, detail: version.description)
        }
    }

    static func validateFields(_ headers: HTTPHeaders) throws(HTTP1SerializationError) {
        guard !headers.isKnownValid else { return }
        // One pass over the field bytes through one pointer: this runs for every response a server sends.
        let invalid = headers.bytes.withUnsafeBufferPointer { bytes -> (position: Int, name: Bool)? in
            for position in headers.indices {
                let name = UnsafeBufferPointer(rebasing: bytes[headers.nameRange(at: position)])
                guard !name.isEmpty, isToken(name) else { return (position, true) }
                guard isFieldValue(UnsafeBufferPointer(rebasing: bytes[headers.valueRange(at: position)])) else {
                    return (position, false)
                }
            }
            return nil
        }
        guard let invalid else { return }
        throw invalid.name
            ? HTTP1SerializationError(.invalidFieldName, detail: headers.name(at: invalid.position))
            : HTTP1SerializationError(.invalidFieldValue, detail: headers.value(at: invalid.position))
    }

    /// Whether `bytes` is a field name: one or more `tchar`s.
    static func isFieldName(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        !bytes.isEmpty && isToken(bytes)
    }

    /// Whether every byte is a `tchar`.
    private static func isToken(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let table = CharacterClasses.table
        var classes = CharacterClasses.token
        for byte in bytes { classes &= table[byte] }
        return classes != 0
    }

    /// Whether every byte may appear in a field value or reason phrase: field-vchar, SP or HTAB.
    static func isFieldValue(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let table = CharacterClasses.table
        let allowed = CharacterClasses.fieldVChar | CharacterClasses.whitespace
        for byte in bytes where table[byte] & allowed == 0 { return false }
        return true
    }

    /// chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS value ] ); checked with the parser's own decoder so the two
    /// can never disagree.
    private static func validateChunkExtensions(_ extensions: String) throws(HTTP1SerializationError) {
        guard !extensions.isEmpty else { return }
        let line: [UInt8] = Array("1".utf8) + Array(extensions.utf8) + [ASCII.cr, ASCII.lf]
        var decoder = HTTP1ChunkedDecoder()
        let accepted = line.withUnsafeBufferPointer { buffer -> Bool in
            let outcome = try? decoder.decode(
                buffer, from: 0, streamOffset: 0,
                configuration: HTTP1ParserConfiguration(maxChunkExtensionLength: Int.max))
            if case .needMore(let consumed) = outcome { return consumed == buffer.count }
            return false
        }
        guard accepted else { throw HTTP1SerializationError(.invalidChunkExtension, detail: extensions) }
    }

    private static func appendVersion(_ version: HTTPVersion, to buffer: inout [UInt8]) {
        appendASCII("HTTP/", to: &buffer)
        buffer.append(0x30 + version.major)
        buffer.append(ASCII.dot)
        buffer.append(0x30 + version.minor)
    }

    /// The framing field `framing` calls for, then the blank line that ends the head.
    private static func appendFraming(_ framing: BodyFraming, to buffer: inout [UInt8]) {
        switch framing {
        case .asInHeaders:
            break
        case .contentLength(let length):
            appendASCII("Content-Length: ", to: &buffer)
            appendDecimal(length, to: &buffer)
            buffer.append(ASCII.cr)
            buffer.append(ASCII.lf)
        case .chunked:
            appendASCII("Transfer-Encoding: chunked\r\n", to: &buffer)
        }
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
    }

    private static func appendFieldLines(_ headers: HTTPHeaders, skippingFraming: Bool, to buffer: inout [UInt8]) {
        headers.bytes.withUnsafeBufferPointer { bytes in
            for position in headers.indices {
                let name = UnsafeBufferPointer(rebasing: bytes[headers.nameRange(at: position)])
                if skippingFraming
                    && (ASCII.equalsCaseInsensitive(name, "content-length")
                        || ASCII.equalsCaseInsensitive(name, "transfer-encoding"))
                {
                    continue
                }
                buffer.append(contentsOf: name)
                buffer.append(ASCII.colon)
                buffer.append(ASCII.space)
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[headers.valueRange(at: position)]))
                buffer.append(ASCII.cr)
                buffer.append(ASCII.lf)
            }
        }
    }

    /// Appends a literal's bytes with one copy (a `String`'s UTF-8 view would be appended byte by byte).
    @inline(__always)
    static func appendASCII(_ text: StaticString, to buffer: inout [UInt8]) {
        buffer.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Runs `body` over `text`'s UTF-8 bytes in one buffer: a native or small string lends its own (a small one's
    /// copied to the stack), without the element-by-element walk of its UTF-8 view, on every request's head.
    @inline(__always)
    static func withUTF8<Result>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = text
        return copy.withUTF8(body)
    }

    /// Appends `text`'s UTF-8 bytes with one copy.
    @inline(__always)
    static func appendUTF8(of text: String, to buffer: inout [UInt8]) {
        withUTF8(of: text) { buffer.append(contentsOf: $0) }
    }

    /// Whether `bytes` may be a request target: not holding SP (which would shift the version) or a control byte.
    static func isTarget(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in bytes where byte <= 0x20 || byte == 0x7F { return false }
        return true
    }

    /// Appends `value` (not negative) in decimal without making a `String`.
    static func appendDecimal(_ value: Int, to buffer: inout [UInt8]) {
        precondition(value >= 0, "a length is never negative")
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for Int.max's 19 digits
        withUnsafeMutableBytes(of: &digits) { scratch in
            var rest = value
            var start = scratch.count
            repeat {
                start -= 1
                scratch[start] = 0x30 + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[start...]))
        }
    }
}
