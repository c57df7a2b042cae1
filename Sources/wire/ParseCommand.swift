import ArgumentParser
import Glibc
import Wire

/// `wire parse`: reads raw HTTP/1.1 bytes from standard input and prints every message as one JSON line.
///
/// The whole input is read first (binary-safe) and parsed in place with one `HTTP1Parser`, so body ranges index the
/// input directly and nothing is copied more than once: the cost is linear in the input size.
///
/// Output, one line per message, keys in this order:
/// - requests: `method`, `target`, `version`, `headers`, `body_b64`, `keep_alive`;
/// - responses (interim 1xx included, each on its own line): `version`, `status`, `reason`, `headers`, `body_b64`,
///   `keep_alive`.
///
/// Optional keys follow only when they apply: `trailers` (a chunked body's trailer fields), `repairs` (what a
/// `--lenient` parser repaired, as `{"kind", "offset"}` objects), `upgraded` (the connection switched protocols
/// after this message; the rest of the input is not HTTP/1.1 and is not parsed).
///
/// Text encoding, lossless: every string is the message's bytes, each byte `0xNN` as the code point U+00NN
/// (`\u00nn` from 0x7F up), the mapping of `JSONString`; a reader gets the exact bytes back, UTF-8 or not.
///
/// `keep_alive` is what the head says (RFC 9112 §9.3), and `false` for a response whose body was delimited by the
/// end of the input, which closes the connection whatever the head says.
///
/// Without `--lenient`, requests are read with the server's strict defaults and responses with the client's
/// (`HTTP1ParserConfiguration.userAgent`): obs-fold in a response is then unfolded to one SP and listed in `repairs`,
/// while obs-fold in a request is an error.
///
/// On a protocol error the tool prints `{"error": "<kind>", "offset": N}` after the complete messages and exits 1.
struct ParseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parse",
        abstract: "Parse HTTP/1.1 messages from standard input and print each as a JSON line.",
        usage: "wire parse (--request | --response [--method <method>]...) [--lenient] < input",
        discussion: """
            Options:
              --request            The input holds requests.
              --response           The input holds responses.
              --method <method>    The method of the request the next response answers (repeatable, in order; \
            the last one given answers every later response too, so --method HEAD reads a pipeline of HEAD \
            answers; default GET). HEAD and CONNECT change how a response is framed.
              --lenient            Use the lenient parser configuration; repairs are listed in "repairs". \
            Without it, requests are parsed strictly and responses as HTTPClient reads them (obs-fold unfolded \
            to one space and listed in "repairs", RFC 9112 §5.2).

            Exit status: 0 when all input parsed, 1 on a protocol error (after printing \
            {"error": "<kind>", "offset": N}), 2 on a usage error.
            """
    )

    /// Every command-line word, parsed by `Options.init`, so that any usage error exits with status 2 rather than
    /// the argument parser's 64.
    @Argument(parsing: .allUnrecognized, help: .hidden)
    var words: [String] = []

    func run() throws {
        let options: Options
        switch Result(catching: { () throws(UsageError) in try Options(words) }) {
        case .success(let parsed):
            options = parsed
        case .failure(let error):
            let usage = Self.configuration.usage ?? ""
            StandardStreams.error("wire parse: \(error.message)\nusage: \(usage)\n")
            throw ExitCode(2)
        }
        let input: [UInt8]
        do {
            input = try LocalFiles.readToEnd(STDIN_FILENO)
        } catch {
            StandardStreams.error("wire parse: cannot read standard input: \(error)\n")
            throw ExitCode(2)
        }
        var output = JSONLineWriter()
        let succeeded = input.withUnsafeBufferPointer { bytes in
            var session = ParseSession(options: options, input: bytes)
            return session.run(into: &output)
        }
        output.flush()
        if !succeeded { throw ExitCode(1) }
    }
}

/// A command-line mistake; exits 2.
private struct UsageError: Error {
    var message: String
}

/// The validated options of one `wire parse` run.
private struct Options {
    var kind: HTTP1Parser.Kind
    var lenient: Bool
    var methods: [HTTPMethod]

    init(_ words: [String]) throws(UsageError) {
        var kind: HTTP1Parser.Kind?
        var lenient = false
        var methods: [HTTPMethod] = []
        var index = 0
        func setKind(_ new: HTTP1Parser.Kind) throws(UsageError) {
            guard kind == nil || kind == new else { throw UsageError(message: "--request and --response exclude each other") }
            kind = new
        }
        while index < words.count {
            let word = words[index]
            index += 1
            switch word {
            case "--request":
                try setKind(.request)
            case "--response":
                try setKind(.response)
            case "--lenient":
                lenient = true
            case "--method":
                guard index < words.count else { throw UsageError(message: "--method needs a value") }
                methods.append(try Self.method(words[index]))
                index += 1
            default:
                if word.hasPrefix("--method=") {
                    methods.append(try Self.method(String(word.dropFirst("--method=".count))))
                } else {
                    throw UsageError(message: "unexpected argument '\(word)'")
                }
            }
        }
        guard let kind else { throw UsageError(message: "say --request or --response") }
        if kind == .request && !methods.isEmpty {
            throw UsageError(message: "--method applies to --response only")
        }
        self.kind = kind
        self.lenient = lenient
        self.methods = methods
    }

    private static func method(_ token: String) throws(UsageError) -> HTTPMethod {
        // A method is a token (RFC 9110 §9.1): printable ASCII without delimiters.
        let delimiters = Set("\"(),/:;<=>?@[\\]{}".utf8)
        guard !token.isEmpty, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && !delimiters.contains($0) }) else {
            throw UsageError(message: "invalid method '\(token)'")
        }
        return HTTPMethod(token)
    }
}

/// One pass of the parser over the whole input, printing messages as they complete.
private struct ParseSession {
    private var parser: HTTP1Parser
    private let input: UnsafeBufferPointer<UInt8>
    /// The head of the message being read, printed when the message ends.
    private var head: HTTP1ParserEvent?
    /// Where the current head's bytes start in `input`, to recover a reason phrase's exact bytes.
    private var headStart = 0
    private var body: [UInt8] = []

    init(options: Options, input: UnsafeBufferPointer<UInt8>) {
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
                    head = .requestHead(request)
                    body.removeAll(keepingCapacity: true)
                case .responseHead(let response):
                    if response.isInterim {
                        // An interim response has no body and is followed by the final one: print it now.
                        write(.responseHead(response), headStart: stepStart, body: [], trailers: nil,
                              closed: false, upgraded: false, into: &output)
                    } else {
                        queueNextMethod()
                        head = .responseHead(response)
                        headStart = stepStart
                        body.removeAll(keepingCapacity: true)
                    }
                case .body(let range):
                    body.append(contentsOf: UnsafeBufferPointer(rebasing: input[stepStart + range.lowerBound..<stepStart + range.upperBound]))
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
        write(head, headStart: headStart, body: body, trailers: trailers, closed: closed, upgraded: upgraded,
              into: &output)
        self.head = nil
        body.removeAll(keepingCapacity: true)
    }

    private func write(
        _ head: HTTP1ParserEvent,
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
        case .requestHead(let request):
            output.key("method")
            output.string(request.method.rawValue)
            output.key("target")
            output.string(request.target)
            output.key("version")
            output.string(request.version.description)
            headers = request.headers
            repairs = request.repairs
        case .responseHead(let response):
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
        case .body, .end, .upgraded:
            preconditionFailure("only heads are buffered")
        }
        output.key("headers")
        Self.writeFields(headers, into: &output)
        output.key("body_b64")
        output.base64(body)
        output.key("keep_alive")
        let keepAlive: Bool
        switch head {
        case .requestHead(let request): keepAlive = request.isKeepAlive
        case .responseHead(let response): keepAlive = response.isKeepAlive && !closed
        case .body, .end, .upgraded: keepAlive = false
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

/// Builds JSON lines in a byte buffer and writes them to standard output in large blocks.
///
/// Objects print as `{"key": value, ...}` with `", "` and `": "` separators (the shape of the error line), one object
/// per line.
struct JSONLineWriter {
    private var buffer: [UInt8] = []
    /// Whether the next value or key in the current container needs a separator first.
    private var needsComma = false

    init() {
        buffer.reserveCapacity(1 << 16)
    }

    mutating func beginObject() {
        separate()
        buffer.append(UInt8(ascii: "{"))
        needsComma = false
    }

    mutating func endObject() {
        buffer.append(UInt8(ascii: "}"))
        needsComma = true
        // Only top-level objects end lines; nested ones are followed by `,` or `]`.
        if depth == 0 { endLine() }
    }

    mutating func beginArray() {
        separate()
        buffer.append(UInt8(ascii: "["))
        depth += 1
        needsComma = false
    }

    mutating func endArray() {
        buffer.append(UInt8(ascii: "]"))
        depth -= 1
        needsComma = true
    }

    /// Array nesting depth: objects inside arrays are not lines of their own.
    private var depth = 0

    mutating func key(_ name: String) {
        separate()
        JSONString.append(name, to: &buffer)
        buffer.append(contentsOf: ": ".utf8)
        needsComma = false
    }

    /// Writes the UTF-8 bytes of `text` as a JSON string (`JSONString`'s byte mapping).
    mutating func string(_ text: String) {
        separate()
        JSONString.append(text, to: &buffer)
        needsComma = true
    }

    /// Writes `bytes` as a JSON string, each byte as the code point of the same value (`JSONString`).
    mutating func bytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        separate()
        JSONString.append(bytes, to: &buffer)
        needsComma = true
    }

    mutating func integer(_ value: Int) {
        separate()
        buffer.append(contentsOf: String(value).utf8)
        needsComma = true
    }

    mutating func boolean(_ value: Bool) {
        separate()
        buffer.append(contentsOf: (value ? "true" : "false").utf8)
        needsComma = true
    }

    /// Writes `bytes` as a base64 (RFC 4648 §4, padded) JSON string.
    mutating func base64(_ bytes: [UInt8]) {
        separate()
        needsComma = true
        let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        let table = UnsafeBufferPointer(start: alphabet.utf8Start, count: 64)
        buffer.append(UInt8(ascii: "\""))
        buffer.reserveCapacity(buffer.count + (bytes.count + 2) / 3 * 4 + 1)
        var index = 0
        while index + 3 <= bytes.count {
            let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            buffer.append(table[Int(group >> 18)])
            buffer.append(table[Int(group >> 12 & 63)])
            buffer.append(table[Int(group >> 6 & 63)])
            buffer.append(table[Int(group & 63)])
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            let group = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            buffer.append(table[Int(group >> 18)])
            buffer.append(table[Int(group >> 12 & 63)])
            buffer.append(rest == 2 ? table[Int(group >> 6 & 63)] : UInt8(ascii: "="))
            buffer.append(UInt8(ascii: "="))
        }
        buffer.append(UInt8(ascii: "\""))
        if buffer.count >= 1 << 20 { flush() }
    }

    /// Writes what is buffered to standard output.
    mutating func flush() {
        guard !buffer.isEmpty else { return }
        StandardStreams.output(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private mutating func endLine() {
        buffer.append(UInt8(ascii: "\n"))
        needsComma = false
        if buffer.count >= 1 << 16 { flush() }
    }

    private mutating func separate() {
        if needsComma { buffer.append(contentsOf: ", ".utf8) }
    }
}
