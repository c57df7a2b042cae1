import Wire

/// How a message's body is delimited, computed here from the head alone, independently of the parser, so the
/// parser's own framing decision can be checked against it.
public enum ExpectedFraming: Equatable, Sendable {
    /// Exactly this many body bytes.
    case length(Int)
    case chunked
    /// Until the end of the stream.
    case closeDelimited
    /// The connection switches protocols after the head.
    case upgrade
    /// A 1xx interim response: no body, no end; the final response follows.
    case interim
    /// The head itself is ambiguous: the parser must not have accepted it.
    case ambiguous(String)
}

/// Content-Length elements across all fields (RFC 9110 §8.6): `nil` if absent, else every element, trimmed.
func contentLengthElements(_ headers: HTTPHeaders) -> [Substring]? {
    let values = headers["content-length"]
    guard !values.isEmpty else { return nil }
    return values.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
        .map { $0.trimmingWhitespace() }
}

/// The transfer codings named across all Transfer-Encoding fields, parameters dropped, empty elements skipped.
func transferCodings(_ headers: HTTPHeaders) -> [String]? {
    let values = headers["transfer-encoding"]
    guard !values.isEmpty else { return nil }
    return values.flatMap { $0.split(separator: ",") }
        .map { String($0.split(separator: ";", omittingEmptySubsequences: false)[0].trimmingWhitespace()).lowercased() }
        .filter { !$0.isEmpty }
}

extension Substring {
    /// Drops SP and HTAB at both ends, byte-wise as HTTP does. (Not by `Character`: a space followed by a combining
    /// mark is one `Character` that is not `" "`.)
    func trimmingWhitespace() -> Substring {
        let bytes = Array(utf8)
        var start = 0
        var end = bytes.count
        while start < end && (bytes[start] == 0x20 || bytes[start] == 0x09) { start += 1 }
        while end > start && (bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09) { end -= 1 }
        return Substring(String(decoding: bytes[start..<end], as: UTF8.self))
    }
}

/// The single length all Content-Length elements agree on, or why there is none.
func agreedLength(_ elements: [Substring], configuration: HTTP1ParserConfiguration) -> Result<Int, FramingFault> {
    var length: Int?
    for element in elements {
        guard !element.isEmpty, element.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(element) else {
            return .failure(FramingFault("Content-Length element '\(element)'"))
        }
        if let length, length != value { return .failure(FramingFault("conflicting Content-Length")) }
        length = value
    }
    if elements.count > 1 && !configuration.leniency.contains(.duplicateContentLength) {
        return .failure(FramingFault("duplicate Content-Length in strict mode"))
    }
    return .success(length!)
}

struct FramingFault: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}

/// RFC 9112 §6.3 for a request head.
public func expectedFraming(request head: HTTPRequestHead, configuration: HTTP1ParserConfiguration) -> ExpectedFraming {
    let lengths = contentLengthElements(head.headers)
    if let codings = transferCodings(head.headers) {
        if lengths != nil { return .ambiguous("request with Transfer-Encoding and Content-Length") }
        if head.version != .http1_1 { return .ambiguous("Transfer-Encoding in HTTP/1.0") }
        guard codings.last == "chunked", codings.filter({ $0 == "chunked" }).count == 1 else {
            return .ambiguous("request Transfer-Encoding \(codings) does not end in one chunked")
        }
        return .chunked
    }
    if let lengths {
        switch agreedLength(lengths, configuration: configuration) {
        case .success(let length): return .length(length)
        case .failure(let fault): return .ambiguous(fault.reason)
        }
    }
    return .length(0)
}

/// RFC 9112 §6.3 for a response head answering a request with `method`.
public func expectedFraming(
    response head: HTTPResponseHead, method: HTTPMethod, configuration: HTTP1ParserConfiguration
) -> ExpectedFraming {
    let code = head.status.code
    if head.status.isInterim { return .interim }
    if code == 101 || (method == .connect && (200..<300).contains(code)) { return .upgrade }
    if method == .head || code == 204 || code == 304 || (100..<200).contains(code) { return .length(0) }
    let lengths = contentLengthElements(head.headers)
    if let codings = transferCodings(head.headers) {
        if lengths != nil && !configuration.allowsResponseTransferEncodingWithContentLength {
            return .ambiguous("response with Transfer-Encoding and Content-Length")
        }
        if codings.filter({ $0 == "chunked" }).count > 1 { return .ambiguous("chunked twice") }
        return codings.last == "chunked" ? .chunked : .closeDelimited
    }
    if let lengths {
        switch agreedLength(lengths, configuration: configuration) {
        case .success(let length): return .length(length)
        case .failure(let fault): return .ambiguous(fault.reason)
        }
    }
    return .closeDelimited
}

/// One message read from a log.
public struct LoggedMessage: Sendable {
    public var head: HTTP1ParserEvent
    public var framing: ExpectedFraming
    public var body: [UInt8] = []
    public var trailers: HTTPHeaders?
    /// Whether `.end` (or, for interim and upgrade heads, the head itself) completed the message.
    public var isComplete = false
    /// Whether the connection switched protocols after this message.
    public var upgraded = false
}

/// Property: every accepted head is framed unambiguously, and the events after it match the framing computed
/// independently from the head (body length, trailers only after chunked, upgrade after 101 or CONNECT, nothing
/// after a close-delimited body). Returns the messages found, in order.
@discardableResult
public func checkFraming(_ log: EventLog, _ fuzzCase: FuzzCase, original: [UInt8]) -> [LoggedMessage] {
    func fail(_ message: String) -> Never {
        propertyFailed("\(message)\n--- log\n\(log)", input: original)
    }
    var methods = fuzzCase.methods
    var messages: [LoggedMessage] = []
    var closed = false
    var index = 0
    let entries = log.entries
    while index < entries.count {
        let entry = entries[index]
        index += 1
        switch entry {
        case .head(let event):
            if closed { fail("a head after a close-delimited body") }
            let framing: ExpectedFraming
            var wantsUpgrade = false
            switch event {
            case .requestHead(let head):
                framing = expectedFraming(request: head, configuration: fuzzCase.configuration)
                if head.version == .http1_1 && head.headers["host"].count != 1 {
                    fail("HTTP/1.1 request accepted with \(head.headers["host"].count) Host fields")
                }
                let connectionUpgrade = head.headers["connection"].contains { value in
                    value.split(separator: ",").contains { $0.trimmingWhitespace().lowercased() == "upgrade" }
                }
                wantsUpgrade = head.method == .connect
                    || (head.version == .http1_1 && head.headers.contains(name: "upgrade") && connectionUpgrade)
            case .responseHead(let head):
                let method = head.status.isInterim ? HTTPMethod.get : (methods.isEmpty ? .get : methods.removeFirst())
                framing = expectedFraming(response: head, method: method, configuration: fuzzCase.configuration)
            default:
                fail("head entry holds \(event)")
            }
            if case .ambiguous(let reason) = framing { fail("accepted an ambiguous head: \(reason)") }
            var message = LoggedMessage(head: event, framing: framing)
            // Collect what follows the head.
            if index < entries.count, case .body(let bytes) = entries[index] {
                message.body = bytes
                index += 1
            }
            switch framing {
            case .interim:
                message.isComplete = true
                if !message.body.isEmpty { fail("body after an interim response") }
            case .upgrade:
                if !message.body.isEmpty { fail("body after a protocol switch") }
                if index < entries.count {
                    guard case .upgraded = entries[index] else { fail("no upgrade after a switching head") }
                    message.isComplete = true
                    message.upgraded = true
                    index += 1
                }
            case .length(let length):
                if message.body.count > length { fail("body longer than Content-Length \(length)") }
                if index < entries.count, case .end(let trailers, let atEOF) = entries[index] {
                    index += 1
                    if message.body.count != length { fail("body of \(message.body.count) bytes, length \(length)") }
                    if trailers != nil || atEOF { fail("fixed-length body ended with trailers or at EOF") }
                    message.isComplete = true
                }
            case .chunked:
                if index < entries.count, case .end(let trailers, let atEOF) = entries[index] {
                    index += 1
                    if atEOF { fail("chunked body ended by EOF") }
                    message.trailers = trailers
                    message.isComplete = true
                }
            case .closeDelimited:
                if index < entries.count, case .end(let trailers, let atEOF) = entries[index] {
                    index += 1
                    if !atEOF || trailers != nil { fail("close-delimited body ended before EOF") }
                    message.isComplete = true
                }
                closed = true
            case .ambiguous:
                break
            }
            if message.isComplete, case .requestHead = event {
                let requested = index < entries.count && entries[index] == .upgradeRequested
                if requested != wantsUpgrade { fail("upgrade requested: \(requested), expected \(wantsUpgrade)") }
                if requested {
                    index += 1
                    if index < entries.count, case .upgraded = entries[index] {
                        message.upgraded = true
                        index += 1
                    }
                }
            }
            messages.append(message)
            if message.upgraded && index < entries.count { fail("events after an upgrade") }
        case .error:
            if index != entries.count { fail("events after an error") }
        case .body, .end, .upgradeRequested, .upgraded:
            fail("\(entry) where a head was due")
        }
    }
    return messages
}
