extension HTTP1Serializer {
    /// Appends a response head's status line and field lines, but not the blank line that ends the head, so that a
    /// server can add fields of its own after them.
    ///
    /// The lines are measured first and copied into the buffer's free space through one pointer: a server writes
    /// one per response, and appending piece by piece cost several times as much (callgrind).
    /// - Parameters:
    ///   - head: The status line and fields.
    ///   - version: The version to send, if not the head's (a server sends its own, RFC 9110 §2.5).
    ///   - framing: How the body is announced.
    ///   - buffer: The bytes to append to.
    /// - Throws: `HTTP1SerializationError` if any part would be unsafe on the wire; the buffer is then unchanged.
    package static func writeResponseHeadLines(
        _ head: HTTPResponseHead,
        version: HTTPVersion? = nil,
        framing: BodyFraming,
        into buffer: inout ByteBuffer
    ) throws(HTTP1SerializationError) {
        let version = version ?? head.version
        let code = head.status.code
        guard (100...999).contains(code) else {
            throw HTTP1SerializationError(.invalidStatusCode, detail: String(code))
        }
        var reason = head.reasonPhrase
        guard reason.withUTF8({ isFieldValue($0) }) else {
            throw HTTP1SerializationError(.invalidReasonPhrase, detail: head.reasonPhrase)
        }
        try validateVersion(version)
        try validateFields(head.headers)
        let headers = head.headers
        let skipsFraming: Bool
        var framingLength = 0
        switch framing {
        case .asInHeaders:
            skipsFraming = false
        case .contentLength(let length):
            skipsFraming = true
            framingLength = contentLengthPrefix.utf8CodeUnitCount + decimalDigits(length) + 2
        case .chunked:
            skipsFraming = true
            framingLength = chunkedLine.utf8CodeUnitCount
        }
        headers.bytes.withUnsafeBufferPointer { bytes in
            reason.withUTF8 { reason in
                // "HTTP/1.1 200 OK\r\n", then "name: value\r\n" for each field kept.
                var size = 8 + 1 + 3 + 1 + reason.count + 2 + framingLength
                for position in headers.indices {
                    let name = headers.nameRange(at: position)
                    if skipsFraming && isFramingField(UnsafeBufferPointer(rebasing: bytes[name])) { continue }
                    size += name.count + 2 + headers.valueRange(at: position).count + 2
                }
                buffer.reserveWritableBytes(size)
                buffer.withUnsafeWritableBytes { space in
                    var out = HeadCursor(space)
                    out.put("HTTP/")
                    out.put(0x30 + version.major)
                    out.put(ASCII.dot)
                    out.put(0x30 + version.minor)
                    out.put(ASCII.space)
                    out.put(0x30 + UInt8(code / 100))
                    out.put(0x30 + UInt8(code / 10 % 10))
                    out.put(0x30 + UInt8(code % 10))
                    out.put(ASCII.space)
                    out.put(reason)
                    out.putLineEnd()
                    for position in headers.indices {
                        let name = UnsafeBufferPointer(rebasing: bytes[headers.nameRange(at: position)])
                        if skipsFraming && isFramingField(name) { continue }
                        out.put(name)
                        out.put(ASCII.colon)
                        out.put(ASCII.space)
                        out.put(UnsafeBufferPointer(rebasing: bytes[headers.valueRange(at: position)]))
                        out.putLineEnd()
                    }
                    switch framing {
                    case .asInHeaders:
                        break
                    case .contentLength(let length):
                        out.put(contentLengthPrefix)
                        out.putDecimal(length)
                        out.putLineEnd()
                    case .chunked:
                        out.put(chunkedLine)
                    }
                    precondition(out.offset == size, "response head measured \(size) bytes, wrote \(out.offset)")
                }
                buffer.moveWriterIndex(forwardBy: size)
            }
        }
    }

    private static let contentLengthPrefix: StaticString = "Content-Length: "
    private static let chunkedLine: StaticString = "Transfer-Encoding: chunked\r\n"

    /// Content-Length and Transfer-Encoding, which a framing other than `.asInHeaders` replaces.
    private static func isFramingField(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        ASCII.equalsCaseInsensitive(name, "content-length") || ASCII.equalsCaseInsensitive(name, "transfer-encoding")
    }

    /// How many decimal digits `value` (not negative) has.
    static func decimalDigits(_ value: Int) -> Int {
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        return digits
    }
}

/// Writes into space measured beforehand: each put is a copy, with no capacity or uniqueness check.
private struct HeadCursor {
    private let space: UnsafeMutableRawBufferPointer
    private(set) var offset = 0

    init(_ space: UnsafeMutableRawBufferPointer) {
        self.space = space
    }

    mutating func put(_ byte: UInt8) {
        space[offset] = byte
        offset += 1
    }

    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        precondition(offset + bytes.count <= space.count, "response head overran its measure")
        (space.baseAddress! + offset).copyMemory(from: source, byteCount: bytes.count)
        offset += bytes.count
    }

    mutating func put(_ text: StaticString) {
        put(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func putLineEnd() {
        put(ASCII.cr)
        put(ASCII.lf)
    }

    mutating func putDecimal(_ value: Int) {
        var rest = value
        let digits = HTTP1Serializer.decimalDigits(value)
        for index in stride(from: offset + digits - 1, through: offset, by: -1) {
            space[index] = 0x30 + UInt8(rest % 10)
            rest /= 10
        }
        offset += digits
    }
}
