/// Turning a scanned head into an event: field semantics (Content-Length, Transfer-Encoding, Host, Connection,
/// Upgrade) and the body framing of RFC 9112 §6.3. The copy of the header section is in `HTTP1Parser+Fields.swift`,
/// the request-target and Host checks in `HTTP1Parser+Target.swift`.
extension HTTP1Parser {
    /// What the framing-relevant fields said.
    private struct FieldSummary {
        var contentLength: Int?
        var contentLengthOffset = 0
        var hasTransferEncoding = false
        var transferEncodingOffset = 0
        var sawChunked = false
        var chunkedIsFinal = false
        /// The stream offset of a request's first coding other than chunked (a server answers 501).
        var unsupportedCodingOffset: Int?
        var hostCount = 0
        var connectionHasUpgrade = false
        var connectionHasClose = false
        var connectionHasKeepAlive = false
        var hasUpgrade = false
        var expectsContinue = false
    }

    /// The request head just scanned, validated, with the body framing it sets up.
    mutating func makeRequestHead(
        _ bytes: UnsafeBufferPointer<UInt8>,
        streamOffset: Int
    ) throws(HTTP1ParseError) -> HTTPRequestHead {
        let version = scanner.version
        let method = HTTPMethod.parse(UnsafeBufferPointer(rebasing: bytes[scanner.headStart..<scanner.methodEnd]))
        try validateTarget(bytes, method: method, streamOffset: streamOffset)
        let summary = try summarizeFields(bytes, streamOffset: streamOffset)
        // RFC 9112 §3.2: a server MUST respond 400 to an HTTP/1.1 request without Host or with several.
        if version == .http1_1 && summary.hostCount == 0 {
            throw HTTP1ParseError(.missingHost, at: streamOffset + scanner.lineStart)
        }
        let framing: HTTP1BodyFraming
        if summary.hasTransferEncoding {
            // RFC 9112 §6.1: TE in HTTP/1.0 means faulty framing; §6.3: TE with CL is a smuggling signal, and a
            // request whose final coding is not chunked has no knowable length. All three: 400 and close.
            if version == .http1_0 {
                throw HTTP1ParseError(.transferEncodingInHTTP10, at: streamOffset + summary.transferEncodingOffset)
            }
            if summary.contentLength != nil {
                let offset = max(summary.transferEncodingOffset, summary.contentLengthOffset)
                throw HTTP1ParseError(.transferEncodingWithContentLength, at: streamOffset + offset)
            }
            // RFC 9112 §6.1: a server SHOULD answer 501 to a transfer coding it does not understand; Wire decodes
            // none but chunked, so `gzip, chunked` would hand the handler compressed bytes as if they were the body.
            if let codingOffset = summary.unsupportedCodingOffset {
                throw HTTP1ParseError(.unsupportedTransferCoding, at: codingOffset)
            }
            guard summary.chunkedIsFinal else {
                throw HTTP1ParseError(.transferEncodingNotChunked, at: streamOffset + summary.transferEncodingOffset)
            }
            framing = .chunked
        } else if let length = summary.contentLength {
            try checkBodyLimit(length, streamOffset: streamOffset + summary.contentLengthOffset)
            framing = .length(length)
        } else {
            // RFC 9112 §6.3 rule 7: a request without CL or TE has no body.
            framing = .length(0)
        }
        // RFC 9110 §7.8: Upgrade in an HTTP/1.0 request is ignored; it only counts when listed in Connection.
        let wantsUpgrade =
            method == .connect
            || (version == .http1_1 && summary.hasUpgrade && summary.connectionHasUpgrade)
        // What `HTTPRequestHead.isKeepAlive` would find, known from the summary without another pass.
        lastRequestKeepsAlive =
            !summary.connectionHasClose && (version >= .http1_1 || summary.connectionHasKeepAlive)
        lastRequestExpectsContinue = summary.expectsContinue
        // Built whole and never mutated, so it is moved out, not copied.
        let head = HTTPRequestHead(
            method: method,
            target: String(
                decoding: UnsafeBufferPointer(rebasing: bytes[scanner.targetStart..<scanner.targetEnd]),
                as: UTF8.self),
            version: version,
            headers: makeHeaders(bytes),
            repairs: scanner.repairs)
        noteUpgradeRequest(wantsUpgrade)
        enterBody(framing)
        return head
    }

    /// Builds the head event for the section in `bytes` and sets up the body state.
    mutating func makeHeadEvent(
        _ bytes: UnsafeBufferPointer<UInt8>,
        streamOffset: Int
    ) throws(HTTP1ParseError) -> HTTP1ParserEvent {
        let version = scanner.version
        switch kind {
        case .request:
            return .requestHead(try makeRequestHead(bytes, streamOffset: streamOffset))

        case .response:
            let summary = try summarizeFields(bytes, streamOffset: streamOffset)
            // RFC 9112 §6.1: a client MUST treat an HTTP/1.0 message with Transfer-Encoding as faulty framing,
            // even with Content-Length and whatever the status; guessing a length here would desynchronise the stream.
            if summary.hasTransferEncoding && version == .http1_0 {
                throw HTTP1ParseError(.transferEncodingInHTTP10, at: streamOffset + summary.transferEncodingOffset)
            }
            let status = HTTPStatus(code: scanner.statusCode)
            awaitsFinalResponse = status.isInterim
            let framing: HTTP1BodyFraming
            if status.isInterim {
                framing = .interim
            } else {
                let method = dequeueRequestMethod()
                if status.code == 101 || (method == .connect && status.responseClass == .successful) {
                    framing = .upgrade
                } else if method == .head || status.forbidsContent {
                    // RFC 9112 §6.3 rule 1: never a body, whatever CL or TE say.
                    framing = .length(0)
                } else if summary.hasTransferEncoding {
                    if summary.contentLength != nil && !configuration.allowsResponseTransferEncodingWithContentLength {
                        let offset = max(summary.transferEncodingOffset, summary.contentLengthOffset)
                        throw HTTP1ParseError(.transferEncodingWithContentLength, at: streamOffset + offset)
                    }
                    // Rule 4: TE overrides CL; a final coding other than chunked reads until close.
                    framing = summary.chunkedIsFinal ? .chunked : .closeDelimited
                } else if let length = summary.contentLength {
                    try checkBodyLimit(length, streamOffset: streamOffset + summary.contentLengthOffset)
                    framing = .length(length)
                } else {
                    framing = .closeDelimited
                }
            }
            lastResponseKeepsAlive =
                !summary.connectionHasClose && (version >= .http1_1 || summary.connectionHasKeepAlive)
            lastResponseStatus = status.code
            guard copiesResponseFields else {
                enterBody(framing)
                return .responseHead(HTTPResponseHead(version: version, status: status, reasonPhrase: ""))
            }
            // The usual phrase for the code ("OK" for 200) is the literal itself: decoding the bytes into a new
            // String validates them as UTF-8 first, a few hundred instructions per response.
            let reasonBytes = UnsafeBufferPointer(rebasing: bytes[scanner.reasonStart..<scanner.reasonEnd])
            var usualPhrase = status.defaultReasonPhrase
            let isUsual = usualPhrase.withUTF8 { usual in
                guard usual.count == reasonBytes.count else { return false }
                for offset in 0..<usual.count where usual[offset] != reasonBytes[offset] { return false }
                return true
            }
            let reasonPhrase = isUsual ? usualPhrase : String(decoding: reasonBytes, as: UTF8.self)
            let headers = makeHeaders(bytes)
            enterBody(framing)
            // Made in the event itself: a head made in a variable first was copied into the event and destroyed.
            return .responseHead(
                HTTPResponseHead(
                    version: version, status: status, reasonPhrase: reasonPhrase, headers: headers,
                    repairs: scanner.repairs))
        }
    }

    private func checkBodyLimit(_ length: Int, streamOffset: Int) throws(HTTP1ParseError) {
        if let maxBodySize = configuration.maxBodySize, length > maxBodySize {
            throw HTTP1ParseError(.bodyTooLarge, at: streamOffset)
        }
    }

    /// One pass over the fields, validating the ones that decide framing.
    private mutating func summarizeFields(
        _ bytes: UnsafeBufferPointer<UInt8>,
        streamOffset: Int
    ) throws(HTTP1ParseError) -> FieldSummary {
        var summary = FieldSummary()
        let fields = scanner.fields
        let base = bytes.baseAddress!
        for span in fields {
            let nameStart = span.nameStart
            let nameLength = span.nameLength
            // Only five names matter here; their lengths differ, so most fields are skipped on length alone.
            switch nameLength {
            case 4, 6, 7, 10, 14, 17: break
            default: continue
            }
            let name = UnsafeBufferPointer(start: base + nameStart, count: nameLength)
            let valueStart = span.valueStart
            let value = UnsafeBufferPointer(start: base + valueStart, count: span.valueLength)
            let valueOffset = streamOffset + valueStart
            switch nameLength {
            case 14 where ASCII.equalsCaseInsensitive(name, "content-length"):
                try parseContentLength(value, offset: valueOffset, into: &summary)
                if summary.contentLengthOffset == 0 { summary.contentLengthOffset = nameStart }
            case 17 where ASCII.equalsCaseInsensitive(name, "transfer-encoding"):
                if !summary.hasTransferEncoding { summary.transferEncodingOffset = nameStart }
                summary.hasTransferEncoding = true
                try parseTransferEncoding(value, offset: valueOffset, into: &summary)
            case 4 where kind == .request && ASCII.equalsCaseInsensitive(name, "host"):
                summary.hostCount += 1
                if summary.hostCount > 1 {
                    throw HTTP1ParseError(.duplicateHost, at: streamOffset + nameStart)
                }
                if let bad = HTTP1Parser.invalidHostIndex(value, requirePort: false) {
                    throw HTTP1ParseError(.invalidHost, at: valueOffset + bad)
                }
            case 10 where ASCII.equalsCaseInsensitive(name, "connection"):
                if kind == .request {
                    let upgrade: StaticString = "upgrade"
                    if HTTPHeaders.listContains(
                        value, UnsafeBufferPointer(start: upgrade.utf8Start, count: upgrade.utf8CodeUnitCount))
                    {
                        summary.connectionHasUpgrade = true
                    }
                }
                noteConnectionOptions(value, into: &summary)
            case 6 where kind == .request && ASCII.equalsCaseInsensitive(name, "expect"):
                let continueToken: StaticString = "100-continue"
                if HTTPHeaders.listContains(
                    value, UnsafeBufferPointer(start: continueToken.utf8Start, count: continueToken.utf8CodeUnitCount))
                {
                    summary.expectsContinue = true
                }
            case 7 where ASCII.equalsCaseInsensitive(name, "upgrade"):
                summary.hasUpgrade = true
            default:
                break
            }
        }
        return summary
    }

    /// Whether a response's Connection field says close or keep-alive (RFC 9112 §9.3); the usual
    /// single-token values are matched whole before the list is walked.
    private func noteConnectionOptions(_ value: UnsafeBufferPointer<UInt8>, into summary: inout FieldSummary) {
        if ASCII.equalsCaseInsensitive(value, "keep-alive") {
            summary.connectionHasKeepAlive = true
        } else if ASCII.equalsCaseInsensitive(value, "close") {
            summary.connectionHasClose = true
        } else {
            let close: StaticString = "close"
            let keepAlive: StaticString = "keep-alive"
            if HTTPHeaders.listContains(value, UnsafeBufferPointer(start: close.utf8Start, count: close.utf8CodeUnitCount)) {
                summary.connectionHasClose = true
            }
            if HTTPHeaders.listContains(
                value, UnsafeBufferPointer(start: keepAlive.utf8Start, count: keepAlive.utf8CodeUnitCount))
            {
                summary.connectionHasKeepAlive = true
            }
        }
    }

    /// Content-Length = 1*DIGIT (RFC 9110 §8.6). A list or repeated field is a duplicate even when values agree,
    /// unless the lenient repair is on; differing values are always refused.
    private mutating func parseContentLength(
        _ value: UnsafeBufferPointer<UInt8>,
        offset: Int,
        into summary: inout FieldSummary
    ) throws(HTTP1ParseError) {
        var index = 0
        while true {
            let elementStart = index
            var length = 0
            while index < value.count && ASCII.isDigit(value[index]) {
                let (times10, overflow1) = length.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(Int(value[index] - 0x30))
                if overflow1 || overflow2 {
                    throw HTTP1ParseError(.invalidContentLength, at: offset + index)
                }
                length = sum
                index += 1
            }
            if index == elementStart {
                throw HTTP1ParseError(.invalidContentLength, at: offset + index)
            }
            while index < value.count && (value[index] == ASCII.space || value[index] == ASCII.tab) { index += 1 }
            if index < value.count && value[index] != ASCII.comma {
                throw HTTP1ParseError(.invalidContentLength, at: offset + index)
            }
            if let previous = summary.contentLength {
                if previous != length {
                    throw HTTP1ParseError(.conflictingContentLength, at: offset + elementStart)
                }
                guard configuration.leniency.contains(.duplicateContentLength) else {
                    throw HTTP1ParseError(.duplicateContentLength, at: offset + elementStart)
                }
                scanner.noteRepair(.duplicateContentLength, at: offset + elementStart)
            } else {
                summary.contentLength = length
            }
            guard index < value.count else { return }
            index += 1  // the comma
            while index < value.count && (value[index] == ASCII.space || value[index] == ASCII.tab) { index += 1 }
            if index == value.count {
                throw HTTP1ParseError(.invalidContentLength, at: offset + index)
            }
        }
    }

    /// Transfer-Encoding = #transfer-coding (RFC 9112 §6.1), with transfer-coding = token *( OWS ";" OWS
    /// transfer-parameter ). Combined across fields in order; chunked at most once and, in requests, last and alone.
    private func parseTransferEncoding(
        _ value: UnsafeBufferPointer<UInt8>,
        offset: Int,
        into summary: inout FieldSummary
    ) throws(HTTP1ParseError) {
        let table = CharacterClasses.table
        func isToken(_ byte: UInt8) -> Bool { table[byte] & CharacterClasses.token != 0 }
        func skipWhitespace(_ index: inout Int) {
            while index < value.count && (value[index] == ASCII.space || value[index] == ASCII.tab) { index += 1 }
        }
        func invalid(_ index: Int) -> HTTP1ParseError {
            HTTP1ParseError(.invalidTransferEncoding, at: offset + index)
        }

        var index = 0
        var codings = 0
        while true {
            skipWhitespace(&index)
            if index == value.count { break }
            if value[index] == ASCII.comma {
                // RFC 9110 §5.6.1: empty list elements are ignored.
                index += 1
                continue
            }
            let codingStart = index
            while index < value.count && isToken(value[index]) { index += 1 }
            guard index > codingStart else { throw invalid(index) }
            let coding = UnsafeBufferPointer(rebasing: value[codingStart..<index])
            var hasParameters = false
            while true {
                let save = index
                skipWhitespace(&index)
                guard index < value.count && value[index] == ASCII.semicolon else {
                    index = save
                    break
                }
                hasParameters = true
                index += 1
                skipWhitespace(&index)
                let nameStart = index
                while index < value.count && isToken(value[index]) { index += 1 }
                guard index > nameStart else { throw invalid(index) }
                skipWhitespace(&index)
                guard index < value.count && value[index] == ASCII.equals else { throw invalid(index) }
                index += 1
                skipWhitespace(&index)
                guard index < value.count else { throw invalid(index) }
                if value[index] == ASCII.quote {
                    index += 1
                    var closed = false
                    while index < value.count {
                        let byte = value[index]
                        if byte == ASCII.quote {
                            closed = true
                            index += 1
                            break
                        } else if byte == ASCII.backslash {
                            index += 2
                        } else if table[byte] & CharacterClasses.quotedText != 0 {
                            index += 1
                        } else {
                            throw invalid(index)
                        }
                    }
                    guard closed else { throw invalid(value.count) }
                } else {
                    let tokenStart = index
                    while index < value.count && isToken(value[index]) { index += 1 }
                    guard index > tokenStart else { throw invalid(index) }
                }
            }
            skipWhitespace(&index)
            if index < value.count && value[index] != ASCII.comma { throw invalid(index) }

            codings += 1
            if ASCII.equalsCaseInsensitive(coding, "chunked") {
                if hasParameters { throw invalid(codingStart) }
                if summary.sawChunked {
                    throw HTTP1ParseError(.chunkedAppliedTwice, at: offset + codingStart)
                }
                summary.sawChunked = true
                summary.chunkedIsFinal = true
            } else {
                if summary.sawChunked && kind == .request {
                    throw HTTP1ParseError(.transferEncodingNotChunked, at: offset + codingStart)
                }
                if kind == .request && summary.unsupportedCodingOffset == nil {
                    // Wire decodes no coding but chunked; `makeRequestHead` refuses it after the checks that
                    // matter more (TE in HTTP/1.0, TE with CL).
                    summary.unsupportedCodingOffset = offset + codingStart
                }
                summary.chunkedIsFinal = false
            }
            if index < value.count { index += 1 }
        }
        if codings == 0 { throw invalid(0) }
    }

}
