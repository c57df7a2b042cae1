import Glibc
import Wire

/// One pass of the parser over the whole input, printing messages as they complete.
struct ParseSession {
    private var parser: HTTP1Parser
    private let input: UnsafeBufferPointer<UInt8>
    /// A message's head, waiting to be printed when the message ends.
    private enum Head {
        case request(HTTPRequestHead)
        case response(HTTPResponseHead)
    }

    /// The head of the message being read, printed when the message ends.
    private var head: Head?
    /// Where the current head's bytes start in `input`, to recover a reason phrase's exact bytes.
    private var headStart = 0
    private var body: [UInt8] = []

    init(options: ParseOptions, input: UnsafeBufferPointer<UInt8>) {
        // Without --lenient, each side reads as Wire's own peer would: requests as the server does (strict), responses
        // as the client does (strict but for obs-fold, which a user agent must unfold, RFC 9112 §5.2).
        let configuration: HTTP1ParserConfiguration =
            options.lenient ? .lenient : options.kind == .request ? .strict : .userAgent
        parser = HTTP1Parser(kind: options.kind, configuration: configuration)
        methods = options.methods
        self.input = input
        queueNextMethod()
    }

    /// The `--method` values, in order; the last one also answers every later response.
    private let methods: [HTTPMethod]
    /// Final responses whose method has been queued so far.
    private var methodsQueued = 0

    /// Tells the parser which request the next final response answers. One method at a time: the parser takes it
    /// when it reads that response's head, and the next is queued then.
    private mutating func queueNextMethod() {
        guard let last = methods.last else { return }
        parser.expectResponse(to: methodsQueued < methods.count ? methods[methodsQueued] : last)
        methodsQueued += 1
    }

    /// Parses everything, printing each message; returns false after printing a protocol error.
    mutating func run(into output: inout JSONLineWriter) -> Bool {
        var position = 0
        do throws(HTTP1ParseError) {
            parsing: while true {
                let step = try parser.parse(UnsafeBufferPointer(rebasing: input[position...]))
                let stepStart = position
                position += step.consumed
                switch step.event {
                case .requestHead(let request):
                    head = .request(request)
                    body.removeAll(keepingCapacity: true)
                case .responseHead(let response):
                    if response.isInterim {
                        // An interim response has no body and is followed by the final one: print it now.
                        write(
                            .response(response), headStart: stepStart, body: [], trailers: nil,
                            closed: false, upgraded: false, into: &output)
                    } else {
                        queueNextMethod()
                        head = .response(response)
                        headStart = stepStart
                        body.removeAll(keepingCapacity: true)
                    }
                case .body(let range):
                    body.append(
                        contentsOf: UnsafeBufferPointer(
                            rebasing: input[stepStart + range.lowerBound..<stepStart + range.upperBound]))
                case .end(let trailers):
                    // A request asking to switch protocols leaves the parser waiting for the server's answer;
                    // assume it was accepted, as the bytes after such a request are commonly not HTTP/1.1.
                    let upgrades = parser.isAwaitingUpgradeDecision
                    writeCurrent(trailers: trailers, closed: false, upgraded: upgrades, into: &output)
                    if upgrades { break parsing }
                case .upgraded:
                    // A 101 or a 2xx to CONNECT: the head has no body and the rest of the input is another protocol.
                    writeCurrent(trailers: nil, closed: false, upgraded: true, into: &output)
                    break parsing
                case nil:
                    if parser.isAwaitingUpgradeDecision {
                        parser.acceptUpgrade()
                        continue parsing
                    }
                    // No event and nothing consumed: the parser needs bytes the input does not have.
                    if step.consumed == 0 || position == input.count { break parsing }
                }
            }
            if !parser.isUpgraded, let event = try parser.finish(), case .end(let trailers) = event {
                writeCurrent(trailers: trailers, closed: true, upgraded: false, into: &output)
            }
            return true
        } catch {
            output.beginObject()
            output.key("error")
            output.string(error.kind.name)
            output.key("offset")
            output.integer(error.offset)
            output.endObject()
            return false
        }
    }

    private mutating func writeCurrent(
        trailers: HTTPHeaders?, closed: Bool, upgraded: Bool, into output: inout JSONLineWriter
    ) {
        guard let head else { return }
        write(
            head, headStart: headStart, body: body, trailers: trailers, closed: closed, upgraded: upgraded,
            into: &output)
        self.head = nil
        body.removeAll(keepingCapacity: true)
    }

    private func write(
        _ head: Head,
        headStart: Int,
        body: [UInt8],
        trailers: HTTPHeaders?,
        closed: Bool,
        upgraded: Bool,
        into output: inout JSONLineWriter
    ) {
        let headers: HTTPHeaders
        let repairs: [HTTP1Repair]
        output.beginObject()
        switch head {
        case .request(let request):
            output.key("method")
            output.string(request.method.rawValue)
            output.key("target")
            output.string(request.target)
            output.key("version")
            output.string(request.version.description)
            headers = request.headers
            repairs = request.repairs
        case .response(let response):
            output.key("version")
            output.string(response.version.description)
            output.key("status")
            output.integer(response.status.code)
            output.key("reason")
            if response.reasonPhrase.unicodeScalars.contains("\u{FFFD}") {
                // The parser repaired invalid UTF-8 (or the peer sent U+FFFD): take the exact bytes from the input.
                output.bytes(Self.rawReason(in: input, from: headStart))
            } else {
                // Valid UTF-8 decodes to a string holding the same bytes.
                output.string(response.reasonPhrase)
            }
            headers = response.headers
            repairs = response.repairs
        }
        output.key("headers")
        Self.writeFields(headers, into: &output)
        output.key("body_b64")
        output.base64(body)
        output.key("keep_alive")
        let keepAlive: Bool
        switch head {
        case .request(let request): keepAlive = request.isKeepAlive
        case .response(let response): keepAlive = response.isKeepAlive && !closed
        }
        output.boolean(keepAlive)
        if let trailers {
            output.key("trailers")
            Self.writeFields(trailers, into: &output)
        }
        if !repairs.isEmpty {
            output.key("repairs")
            output.beginArray()
            for repair in repairs {
                output.beginObject()
                output.key("kind")
                // `description` is `name@offset`; the name is the stable part.
                output.string(String(repair.description.prefix { $0 != "@" }))
                output.key("offset")
                output.integer(repair.offset)
                output.endObject()
            }
            output.endArray()
        }
        if upgraded {
            output.key("upgraded")
            output.boolean(true)
        }
        output.endObject()
    }

    /// Writes `[[name, value], ...]` from the fields' exact bytes.
    private static func writeFields(_ fields: HTTPHeaders, into output: inout JSONLineWriter) {
        output.beginArray()
        for position in fields.indices {
            output.beginArray()
            fields.withNameBytes(at: position) { name in
                name.withUnsafeBufferPointer { output.bytes($0) }
            }
            fields.withValueBytes(at: position) { value in
                value.withUnsafeBufferPointer { output.bytes($0) }
            }
            output.endArray()
        }
        output.endArray()
    }

    /// The reason phrase's bytes: a status line is `HTTP/d.d ddd SP reason`, so the reason starts 13 bytes into the
    /// head (after any empty lines the parser skipped) and runs to the line's end.
    private static func rawReason(in input: UnsafeBufferPointer<UInt8>, from start: Int) -> UnsafeBufferPointer<UInt8> {
        var index = start
        while index < input.count && (input[index] == 0x0D || input[index] == 0x0A) { index += 1 }
        let reasonStart = min(index + 13, input.count)
        var reasonEnd = reasonStart
        while reasonEnd < input.count && input[reasonEnd] != 0x0D && input[reasonEnd] != 0x0A { reasonEnd += 1 }
        return UnsafeBufferPointer(rebasing: input[reasonStart..<reasonEnd])
    }
}
