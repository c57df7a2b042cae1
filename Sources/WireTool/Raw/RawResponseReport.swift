import Wire
import WireTLS

/// Reads what a raw exchange received with Wire's parser and writes one JSON line per response, then one for the
/// connection.
///
/// A response line (interim 1xx responses each get one too):
/// `{"response": I, "offset": O, "length": L, "version", "status", "reason", "fields": [[name, value], ...],
/// "body_size", "body_sha256", "keep_alive", "verdict": "ok"}`, and where they apply `"trailers"`, `"repairs"`
/// (what a lenient or user-agent parser repaired, `{"kind", "offset"}`), `"body_ends": "close"` (a body delimited by
/// the connection's end) and `"upgraded": true`. `offset` and `length` locate the message in the received bytes.
///
/// The parser's verdict on bytes it refuses: `{"verdict": "error", "error": KIND, "offset": O}`, with `KIND` the
/// error's stable name (`bare_lf`, `invalid_chunk_size`...) and `O` the offending byte's offset in the received
/// bytes; bytes that end inside a message give `{"verdict": "incomplete", "error": "unexpected_end_of_stream",
/// "offset": O}`. Nothing after the first verdict is parsed.
///
/// The last line: `{"connection": END, "sent": BYTES, "writes": N, "received": BYTES, "reads": N}` with `END` one of
/// `fin`, `rst`, `timeout`, `reset-sent`, `error` (then `"detail"` says what failed), and `"peer_ended_early": true`
/// when the peer's end of stream came before the last write.
struct RawResponseReport {
    /// Whether every received byte parsed (no error verdict).
    private(set) var parsedCleanly = true

    /// Writes the lines for `outcome`; `requestBytes` tells which methods the responses answer (HEAD and CONNECT
    /// change framing), read leniently so that a malformed request still yields the methods before it.
    mutating func write(
        _ outcome: RawOutcome, requestBytes: [UInt8], lenient: Bool, into output: inout JSONLineWriter
    ) {
        var parser = HTTP1Parser(kind: .response, configuration: lenient ? .lenient : .userAgent)
        for method in Self.methods(in: requestBytes) { parser.expectResponse(to: method) }
        let received = outcome.received
        var index = 0
        var position = 0
        var head: HTTPResponseHead?
        var headStart = 0
        var body: [UInt8] = []
        func emit(
            _ response: HTTPResponseHead, start: Int, end: Int, trailers: HTTPHeaders?, closeDelimited: Bool,
            upgraded: Bool, into output: inout JSONLineWriter
        ) {
            Self.writeResponse(
                response, index: index, start: start, end: end, body: body, trailers: trailers,
                closeDelimited: closeDelimited, upgraded: upgraded, into: &output)
            index += 1
        }
        do throws(HTTP1ParseError) {
            try received.withUnsafeBufferPointer { (input) throws(HTTP1ParseError) -> Void in
                parsing: while true {
                    let step = try parser.parse(UnsafeBufferPointer(rebasing: input[position...]))
                    let stepStart = position
                    position += step.consumed
                    switch step.event {
                    case .responseHead(let response):
                        if response.isInterim {
                            body = []
                            emit(
                                response, start: stepStart, end: position, trailers: nil, closeDelimited: false,
                                upgraded: false, into: &output)
                        } else {
                            head = response
                            headStart = stepStart
                            body = []
                        }
                    case .body(let range):
                        body.append(
                            contentsOf: UnsafeBufferPointer(
                                rebasing: input[stepStart + range.lowerBound..<stepStart + range.upperBound]))
                    case .end(let trailers):
                        if let current = head {
                            emit(
                                current, start: headStart, end: position, trailers: trailers, closeDelimited: false,
                                upgraded: false, into: &output)
                        }
                        head = nil
                    case .upgraded:
                        if let current = head {
                            emit(
                                current, start: headStart, end: position, trailers: nil, closeDelimited: false,
                                upgraded: true, into: &output)
                        }
                        head = nil
                        break parsing
                    case .requestHead, nil:
                        // No event: the parser needs bytes that did not come.
                        if step.consumed == 0 || position == input.count { break parsing }
                    }
                }
            }
            if !parser.isUpgraded, case .end(let trailers)? = try parser.finish(), let current = head {
                emit(
                    current, start: headStart, end: received.count, trailers: trailers, closeDelimited: true,
                    upgraded: false, into: &output)
            }
        } catch {
            parsedCleanly = false
            output.beginObject()
            output.key("verdict")
            output.string(error.kind == .unexpectedEndOfStream ? "incomplete" : "error")
            output.key("error")
            output.string(error.kind.name)
            output.key("offset")
            output.integer(error.offset)
            output.endObject()
        }
        Self.writeConnection(outcome, into: &output)
    }

    /// The methods of the requests in `bytes`, in order, as far as a lenient parser reads them.
    static func methods(in bytes: [UInt8]) -> [HTTPMethod] {
        var parser = HTTP1Parser(kind: .request, configuration: .lenient)
        var methods: [HTTPMethod] = []
        var position = 0
        bytes.withUnsafeBufferPointer { input in
            while position < input.count {
                guard let step = try? parser.parse(UnsafeBufferPointer(rebasing: input[position...])) else { return }
                position += step.consumed
                if case .requestHead(let request)? = step.event { methods.append(request.method) }
                if parser.isAwaitingUpgradeDecision { return }
                if step.event == nil && step.consumed == 0 { return }
            }
        }
        return methods
    }

    private static func writeResponse(
        _ response: HTTPResponseHead, index: Int, start: Int, end: Int, body: [UInt8], trailers: HTTPHeaders?,
        closeDelimited: Bool, upgraded: Bool, into output: inout JSONLineWriter
    ) {
        output.beginObject()
        output.key("response")
        output.integer(index)
        output.key("offset")
        output.integer(start)
        output.key("length")
        output.integer(end - start)
        output.key("version")
        output.string(response.version.description)
        output.key("status")
        output.integer(response.status.code)
        output.key("reason")
        output.string(response.reasonPhrase)
        output.key("fields")
        writeFields(response.headers, into: &output)
        output.key("body_size")
        output.integer(body.count)
        output.key("body_sha256")
        output.string(MessageDigest.sha256Hex(body))
        output.key("keep_alive")
        output.boolean(response.isKeepAlive && !closeDelimited)
        if let trailers {
            output.key("trailers")
            writeFields(trailers, into: &output)
        }
        if !response.repairs.isEmpty {
            output.key("repairs")
            output.beginArray()
            for repair in response.repairs {
                output.beginObject()
                output.key("kind")
                output.string(String(repair.description.prefix { $0 != "@" }))
                output.key("offset")
                output.integer(repair.offset)
                output.endObject()
            }
            output.endArray()
        }
        if closeDelimited {
            output.key("body_ends")
            output.string("close")
        }
        if upgraded {
            output.key("upgraded")
            output.boolean(true)
        }
        output.key("verdict")
        output.string("ok")
        output.endObject()
    }

    private static func writeConnection(_ outcome: RawOutcome, into output: inout JSONLineWriter) {
        output.beginObject()
        output.key("connection")
        output.string(outcome.end.name)
        if case .failed(let detail) = outcome.end {
            output.key("detail")
            output.string(detail)
        }
        output.key("sent")
        output.integer(outcome.sentBytes)
        output.key("writes")
        output.integer(outcome.writes)
        output.key("received")
        output.integer(outcome.received.count)
        output.key("reads")
        output.integer(outcome.readSizes.count)
        if outcome.peerEndedEarly {
            output.key("peer_ended_early")
            output.boolean(true)
        }
        output.endObject()
    }

    /// `[[name, value], ...]` from the fields' exact bytes, in order.
    private static func writeFields(_ fields: HTTPHeaders, into output: inout JSONLineWriter) {
        output.beginArray()
        for position in fields.indices {
            output.beginArray()
            fields.withNameBytes(at: position) { name in name.withUnsafeBufferPointer { output.bytes($0) } }
            fields.withValueBytes(at: position) { value in value.withUnsafeBufferPointer { output.bytes($0) } }
            output.endArray()
        }
        output.endArray()
    }
}
