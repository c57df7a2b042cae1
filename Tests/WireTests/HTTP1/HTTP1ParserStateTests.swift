import Testing

import Wire

/// The pull contract's bookkeeping: resumed scanning, stable error names, keep-alive edge cases.
struct HTTP1ParserStateTests {
    /// A trickled head is scanned once: each call resumes where the previous one stopped (picohttpparser's last_len).
    @Test func trickledHeadIsNotRescanned() throws {
        var parser = HTTP1Parser(kind: .request)
        let text = Array("GET /resume HTTP/1.1\r\nHost: a\r\nX-Long: \(String(repeating: "v", count: 300))\r\n\r\n".utf8)
        for length in 1..<text.count {
            let step = try parser.parse(Array(text[..<length]).span)
            #expect(step == HTTP1ParseStep(consumed: 0, event: nil))
            #expect(parser.scanner.scannedCount == length)
        }
        let step = try parser.parse(text.span)
        #expect(step.consumed == text.count)
    }

    /// The word-at-a-time classifiers agree with the byte tables on every byte value in every position.
    @Test func wordClassifiersMatchTables() {
        for byte in 0...255 {
            for position in 0..<8 {
                var bytes = Array("Abc-9xYz".utf8)
                bytes[position] = UInt8(byte)
                let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                let alnumOrDash = bytes.allSatisfy { ASCII.isAlpha($0) || ASCII.isDigit($0) || $0 == 0x2D }
                #expect(HTTP1HeadScanner.isAlphanumericOrDash(word) == alnumOrDash, "byte \(byte) at \(position)")
                let controlOrDelete = bytes.contains { $0 < 0x20 || $0 == 0x7F }
                #expect(HTTP1HeadScanner.containsControlOrDelete(word) == controlOrDelete, "byte \(byte) at \(position)")
            }
        }
    }

    /// The lane finders name the first byte that stops a name or a value exactly, whatever follows it: every byte
    /// value in every position, with a second stopping byte (or a high byte) after it.
    @Test func wordLaneFindersNameTheFirstStoppingByte() {
        for byte in 0...255 {
            for position in 0..<8 {
                for later in [nil, 0x00, 0x0D, 0x3A, 0x7F, 0xFF] as [UInt8?] {
                    var bytes = Array("Abc-9xYz".utf8)
                    bytes[position] = UInt8(byte)
                    if let later, position < 7 { bytes[position + 1 + (byte % (7 - position))] = later }
                    let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                    let firstOther = bytes.firstIndex { !(ASCII.isAlpha($0) || ASCII.isDigit($0) || $0 == 0x2D) } ?? 8
                    let others = HTTP1HeadScanner.nonAlphanumericOrDashLanes(word)
                    #expect((others == 0 ? 8 : others.trailingZeroBitCount / 8) == firstOther, "byte \(byte) at \(position)")
                    let firstControl = bytes.firstIndex { $0 < 0x20 || $0 == 0x7F } ?? 8
                    let controls = HTTP1HeadScanner.controlOrDeleteLanes(word)
                    #expect(
                        (controls == 0 ? 8 : controls.trailingZeroBitCount / 8) == firstControl, "byte \(byte) at \(position)")
                }
            }
        }
    }

    /// The word-at-a-time case-insensitive compare agrees with lowercasing byte by byte, for every byte value in every
    /// lane against every kind of literal byte (letters, digits, "-").
    @Test func caseInsensitiveWordCompareMatchesLowercasing() {
        let literal = Array("ab-9zq0m".utf8)
        let expected = literal.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        for byte in 0...255 {
            for position in 0..<8 {
                var bytes = Array("AB-9Zq0M".utf8)
                bytes[position] = UInt8(byte)
                let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                let lowered = bytes.map { $0 &- 0x41 < 26 ? $0 | 0x20 : $0 }
                #expect(ASCII.sameIgnoringCase(word, expected) == (lowered == literal), "byte \(byte) at \(position)")
            }
        }
    }

    /// What is certainly still to come of a body: a reader waits for no more than this.
    @Test func bodyBytesStillDueCountsTheRestOfALengthOrAChunk() throws {
        var parser = HTTP1Parser(kind: .response)
        parser.expectResponse(to: .get)
        #expect(parser.bodyBytesStillDue == 0)
        let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc".utf8)
        _ = try parser.parse(head.span)
        #expect(parser.bodyBytesStillDue == 10, "the head's step does not take body bytes")
        _ = try parser.parse(Array("abc".utf8).span)
        #expect(parser.bodyBytesStillDue == 7)
        _ = try parser.parse(Array("defghij".utf8).span)
        #expect(parser.bodyBytesStillDue == 0)

        var chunked = HTTP1Parser(kind: .request)
        let request = Array("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        #expect(try chunked.parse(request.span).consumed == request.count)
        _ = try chunked.parse(Array("1".utf8).span)
        #expect(chunked.bodyBytesStillDue == 0, "a chunk's size is not known until its line ends")
        _ = try chunked.parse(Array("0\r\nabcd".utf8).span)
        #expect(chunked.bodyBytesStillDue == 12)
        _ = try chunked.parse(Array("efghijklmnop".utf8).span)
        #expect(chunked.bodyBytesStillDue == 0, "the CRLF after the data and the next size line are framing")

        var closeDelimited = HTTP1Parser(kind: .response)
        closeDelimited.expectResponse(to: .get)
        _ = try closeDelimited.parse(Array("HTTP/1.1 200 OK\r\n\r\n".utf8).span)
        #expect(closeDelimited.bodyBytesStillDue == 0, "a body that ends at the close has no known length")
    }

    @Test func partialChunkLinesAreConsumed() throws {
        var parser = HTTP1Parser(kind: .request)
        let head = Array("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        #expect(try parser.parse(head.span).consumed == head.count)
        let partial = Array("1f;name=val".utf8)
        #expect(try parser.parse(partial.span) == HTTP1ParseStep(consumed: partial.count, event: nil))
        let rest = Array("ue\r\nabc".utf8)
        #expect(try parser.parse(rest.span) == HTTP1ParseStep(consumed: rest.count, event: .body(4..<7)))
    }

    @Test(arguments: [
        (HTTP1ParseError.Kind.invalidMethod, "invalid_method"),
        (.invalidTarget, "invalid_target"),
        (.invalidRequestLine, "invalid_request_line"),
        (.invalidVersion, "invalid_version"),
        (.unsupportedVersion, "unsupported_version"),
        (.invalidStatusLine, "invalid_status_line"),
        (.invalidStatusCode, "invalid_status_code"),
        (.invalidReasonPhrase, "invalid_reason_phrase"),
        (.requestLineTooLong, "request_line_too_long"),
        (.statusLineTooLong, "status_line_too_long"),
        (.headerSectionTooLarge, "header_section_too_large"),
        (.tooManyHeaders, "too_many_headers"),
        (.trailerSectionTooLarge, "trailer_section_too_large"),
        (.userinfoInTarget, "userinfo_in_target"),
        (.invalidFieldName, "invalid_field_name"),
        (.whitespaceBeforeColon, "whitespace_before_colon"),
        (.invalidFieldValue, "invalid_field_value"),
        (.whitespaceBeforeFirstField, "whitespace_before_first_field"),
        (.obsoleteLineFolding, "obsolete_line_folding"),
        (.bareCR, "bare_cr"),
        (.bareLF, "bare_lf"),
        (.invalidContentLength, "invalid_content_length"),
        (.duplicateContentLength, "duplicate_content_length"),
        (.conflictingContentLength, "conflicting_content_length"),
        (.transferEncodingWithContentLength, "transfer_encoding_with_content_length"),
        (.invalidTransferEncoding, "invalid_transfer_encoding"),
        (.unsupportedTransferCoding, "unsupported_transfer_coding"),
        (.transferEncodingNotChunked, "transfer_encoding_not_chunked"),
        (.chunkedAppliedTwice, "chunked_applied_twice"),
        (.transferEncodingInHTTP10, "transfer_encoding_in_http10"),
        (.missingHost, "missing_host"),
        (.duplicateHost, "duplicate_host"),
        (.invalidHost, "invalid_host"),
        (.invalidChunkSize, "invalid_chunk_size"),
        (.chunkSizeTooLarge, "chunk_size_too_large"),
        (.invalidChunkExtension, "invalid_chunk_extension"),
        (.chunkExtensionTooLong, "chunk_extension_too_long"),
        (.invalidChunkTerminator, "invalid_chunk_terminator"),
        (.bodyTooLarge, "body_too_large"),
        (.unexpectedEndOfStream, "unexpected_end_of_stream"),
    ])
    func errorNamesAreStable(kind: HTTP1ParseError.Kind, name: String) {
        #expect(kind.name == name)
        #expect(HTTP1ParseError(kind, at: 7).description == "\(name)@7")
    }

    @Test func http10ResponseWithTransferEncodingIsRefused() {
        // RFC 9112 §6.1: faulty framing, so the parser refuses the head rather than read a chunked body.
        var parser = HTTP1Parser(kind: .response)
        let bytes = Array("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        #expect(throws: HTTP1ParseError(.transferEncodingInHTTP10, at: 41)) { try parser.parse(bytes.span) }
        // A head built by hand is never parsed; it still does not keep the connection alive.
        let head = HTTPResponseHead(
            version: .http1_0, status: .ok, headers: ["Connection": "keep-alive", "Transfer-Encoding": "chunked"])
        #expect(!head.isKeepAlive)
    }

    @Test func upgradeDecisionIsExposed() throws {
        var parser = HTTP1Parser(kind: .request)
        let bytes = Array("CONNECT h:1 HTTP/1.1\r\nHost: h:1\r\n\r\n".utf8)
        #expect(try parser.parse(bytes.span).consumed == bytes.count)
        #expect(try parser.parse([UInt8]().span).event == .end(trailers: nil))
        #expect(parser.isAwaitingUpgradeDecision)
        #expect(try parser.parse(Array("xyz".utf8).span) == HTTP1ParseStep(consumed: 0, event: nil))
        parser.acceptUpgrade()
        #expect(parser.isUpgraded)
        #expect(try parser.parse(Array("xyz".utf8).span) == HTTP1ParseStep(consumed: 0, event: .upgraded))
        #expect(try parser.finish() == nil)
    }
}
