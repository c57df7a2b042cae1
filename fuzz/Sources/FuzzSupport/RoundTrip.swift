import Wire

/// Property: every complete message the parser accepted reserializes with `HTTP1Serializer` (which must not refuse
/// it) to bytes that parse, with the same options, to equivalent messages: the same heads (repairs aside), bodies and
/// trailers, in the same order.
public func checkRoundTrip(_ messages: [LoggedMessage], _ fuzzCase: FuzzCase, original: [UInt8]) {
    var bytes: [UInt8] = []
    var written: [LoggedMessage] = []
    for message in messages {
        guard message.isComplete else { break }
        do {
            switch message.head {
            case .requestHead(let head):
                try HTTP1Serializer.writeRequestHead(head, into: &bytes)
            case .responseHead(let head):
                try HTTP1Serializer.writeResponseHead(head, into: &bytes)
            default:
                propertyFailed("message head \(message.head)", input: original)
            }
            switch message.framing {
            case .chunked:
                try HTTP1Serializer.writeChunk(message.body, into: &bytes)
                try HTTP1Serializer.writeLastChunk(trailers: message.trailers, into: &bytes)
            case .length, .closeDelimited:
                bytes.append(contentsOf: message.body)
            case .interim, .upgrade, .ambiguous:
                break
            }
        } catch {
            propertyFailed("serializer refused an accepted message: \(error)\n\(message.head)", input: original)
        }
        written.append(message)
        if message.upgraded || message.framing == .closeDelimited { break }
    }
    guard !written.isEmpty else { return }
    // The canonical form can be longer than what was accepted (CRLF for bare LF, "name: value", U+FFFD for a
    // reason's invalid UTF-8), so size limits are lifted for the second parse; everything else stays.
    var relaxed = fuzzCase
    relaxed.configuration.maxStartLineLength = 1 << 20
    relaxed.configuration.maxHeaderSectionSize = 1 << 20
    let log = runParser(bytes, relaxed, splits: [], original: original)
    let reparsed = checkFraming(log, relaxed, original: original)
    func describe(_ list: [LoggedMessage]) -> String {
        list.map { "\($0.head) body=\(escapeBytes($0.body)) trailers=\(String(describing: $0.trailers))" }
            .joined(separator: "\n")
    }
    let same = reparsed.count == written.count
        && zip(reparsed, written).allSatisfy { again, first in
            again.isComplete && withoutRepairs(again.head) == withoutRepairs(first.head) && again.body == first.body
                && again.trailers == first.trailers && again.upgraded == first.upgraded
        }
    if !same {
        propertyFailed(
            "round trip differs\n--- serialized\n\(escapeBytes(bytes))\n--- accepted\n\(describe(written))"
                + "\n--- reparsed\n\(describe(reparsed))\n--- log\n\(log)",
            input: original)
    }
}

/// The head with its repair list cleared: a reserialized message is canonical, so it needs no repairs.
func withoutRepairs(_ event: HTTP1ParserEvent) -> HTTP1ParserEvent {
    switch event {
    case .requestHead(var head):
        head.repairs = []
        return .requestHead(head)
    case .responseHead(var head):
        head.repairs = []
        return .responseHead(head)
    case .body, .end, .upgraded:
        return event
    }
}

/// Property, serializer first: a head built from arbitrary strings that the serializer accepts is read back by a
/// strict parser as the same head (field values compared without surrounding whitespace, which HTTP strips), or is
/// refused only for a semantic reason the serializer does not check (target form, Host, limits). A syntax error
/// would mean the serializer wrote a line it should have refused.
public func checkSerializerOutput(_ fuzzCase: FuzzCase, original: [UInt8]) {
    let parts = fuzzCase.payload.split(separator: 0x00, omittingEmptySubsequences: false).map { Array($0) }
    guard parts.count >= 2 else { return }
    var headers = HTTPHeaders()
    var index = 2
    while index + 1 < parts.count {
        headers.add(name: String(decoding: parts[index], as: UTF8.self), value: String(decoding: parts[index + 1], as: UTF8.self))
        index += 2
    }
    let chunked = fuzzCase.flags.contains(.alternate3)
    var body = index < parts.count ? parts[index] : []
    var bytes: [UInt8] = []
    let expectedHead: HTTP1ParserEvent
    var expectedHeaders = HTTPHeaders()
    for position in headers.indices {
        let name = headers.name(at: position).lowercased()
        guard name != "content-length" && name != "transfer-encoding" else { continue }
        expectedHeaders.add(
            name: headers.name(at: position), value: String(Substring(headers.value(at: position)).trimmingWhitespace()))
    }
    let kind: HTTP1Parser.Kind = fuzzCase.flags.contains(.alternate) ? .response : .request
    do {
        switch kind {
        case .request:
            let version: HTTPVersion = fuzzCase.flags.contains(.lenient) ? .http1_0 : .http1_1
            let head = HTTPRequestHead(
                method: HTTPMethod(String(decoding: parts[0], as: UTF8.self)),
                target: String(decoding: parts[1], as: UTF8.self), version: version, headers: headers)
            if chunked && version == .http1_0 { return }
            try HTTP1Serializer.writeRequestHead(head, framing: chunked ? .chunked : .contentLength(body.count), into: &bytes)
            var expected = head
            expected.headers = expectedHeaders
            expected.headers.add(name: chunked ? "Transfer-Encoding" : "Content-Length", value: chunked ? "chunked" : String(body.count))
            expectedHead = .requestHead(expected)
        case .response:
            // Statuses that forbid content or switch protocols are framed by the status, not by the fields.
            var code = 200 + Int(parts[0].first ?? 0) % 400
            if code == 204 || code == 304 { code = 200 }
            let head = HTTPResponseHead(
                status: HTTPStatus(code: code), reasonPhrase: String(decoding: parts[1], as: UTF8.self), headers: headers)
            try HTTP1Serializer.writeResponseHead(head, framing: chunked ? .chunked : .contentLength(body.count), into: &bytes)
            var expected = head
            expected.headers = expectedHeaders
            expected.headers.add(name: chunked ? "Transfer-Encoding" : "Content-Length", value: chunked ? "chunked" : String(body.count))
            expectedHead = .responseHead(expected)
        }
        if chunked {
            try HTTP1Serializer.writeChunk(body, into: &bytes)
            try HTTP1Serializer.writeLastChunk(into: &bytes)
        } else {
            bytes.append(contentsOf: body)
        }
    } catch {
        return  // the serializer refused: nothing written, nothing to check
    }
    var strict = fuzzCase
    strict.kind = kind
    strict.configuration = .strict
    strict.methods = []
    strict.flags.remove(.acceptsUpgrades)
    let log = runParser(bytes, strict, splits: [], original: original)
    if case .error(let error)? = log.entries.last {
        // Rules about what a target or host means, which the serializer leaves to the parser (it checks bytes, not
        // meaning): userinfo in a target (`user@host:443` for CONNECT) is one of them.
        let semantic: Set<HTTP1ParseError.Kind> = [
            .invalidTarget, .userinfoInTarget, .missingHost, .duplicateHost, .invalidHost, .requestLineTooLong,
            .statusLineTooLong, .headerSectionTooLarge, .tooManyHeaders,
        ]
        if !semantic.contains(error.kind) {
            propertyFailed("parser refused serializer output: \(error)\n\(escapeBytes(bytes))", input: original)
        }
        return
    }
    if body.isEmpty && chunked { body = [] }
    var expectedLog: [LogEntry] = [.head(expectedHead)]
    if !body.isEmpty { expectedLog.append(.body(body)) }
    expectedLog.append(.end(trailers: nil, atEOF: false))
    let actual = log.entries.filter { $0 != .upgradeRequested }.map { entry -> LogEntry in
        if case .head(let event) = entry { return .head(withoutRepairs(event)) }
        return entry
    }
    if actual != expectedLog {
        propertyFailed(
            "serializer output read back differently\n--- bytes\n\(escapeBytes(bytes))\n--- expected\n"
                + "\(expectedLog.map(\.description).joined(separator: "\n"))\n--- log\n\(log)",
            input: original)
    }
}
