import Wire

/// One fuzz input decoded into parser options and the bytes to parse, llhttp style: the options come from the
/// first bytes, so the fuzzer explores options and input together and a crasher file reproduces exactly.
///
/// Layout: byte 0 holds flags, byte 1 the methods of up to four pipelined requests (two bits each), bytes 2 and 3
/// seed two split points; the payload is everything after. Inputs shorter than four bytes are ignored.
public struct FuzzCase: Sendable {
    /// Flag bits of byte 0.
    public struct Flags: OptionSet, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Use every leniency.
        public static let lenient = Flags(rawValue: 1 << 0)
        /// Accept protocol switches requested by requests (else decline and read on).
        public static let acceptsUpgrades = Flags(rawValue: 1 << 1)
        /// Allow Transfer-Encoding with Content-Length in responses.
        public static let allowsTransferEncodingWithContentLength = Flags(rawValue: 1 << 2)
        /// Tiny limits, so the limit checks run on short inputs.
        public static let tightLimits = Flags(rawValue: 1 << 3)
        /// Target-specific: the other message kind, or the structured round-trip direction.
        public static let alternate = Flags(rawValue: 1 << 4)
        /// Target-specific second switch.
        public static let alternate2 = Flags(rawValue: 1 << 5)
        /// Target-specific third switch.
        public static let alternate3 = Flags(rawValue: 1 << 6)
    }

    /// How many option bytes precede the payload.
    public static let optionByteCount = 4

    public var kind: HTTP1Parser.Kind
    public var flags: Flags
    public var configuration: HTTP1ParserConfiguration
    /// Methods of the requests whose responses are parsed, oldest first (response parsers only).
    public var methods: [HTTPMethod]
    /// Two sorted split points within the payload.
    public var splits: [Int]
    public var payload: [UInt8]

    /// Decodes `data`; `nil` when it is too short to hold the options.
    /// - Parameters:
    ///   - data: The raw fuzz input.
    ///   - kind: The message kind to parse; `kindFromFlags` lets the `alternate` flag choose instead.
    ///   - kindFromFlags: Whether `.alternate` selects responses.
    public init?(_ data: UnsafeBufferPointer<UInt8>, kind: HTTP1Parser.Kind, kindFromFlags: Bool = false) {
        guard data.count >= FuzzCase.optionByteCount else { return nil }
        flags = Flags(rawValue: data[0])
        self.kind = kindFromFlags ? (flags.contains(.alternate) ? .response : .request) : kind
        var configuration = HTTP1ParserConfiguration()
        if flags.contains(.tightLimits) {
            configuration = HTTP1ParserConfiguration(
                maxStartLineLength: 40, maxHeaderSectionSize: 160, maxHeaderCount: 4, maxChunkExtensionLength: 8,
                maxBodySize: 32)
        }
        configuration.allowsResponseTransferEncodingWithContentLength =
            flags.contains(.allowsTransferEncodingWithContentLength)
        if flags.contains(.lenient) { configuration.leniency = .all }
        self.configuration = configuration
        let choices: [HTTPMethod] = [.get, .head, .connect, .post]
        methods = (0..<4).map { choices[Int(data[1] >> ($0 * 2)) & 3] }
        payload = Array(data[FuzzCase.optionByteCount...])
        let range = UInt(payload.count + 1)
        let seed = UInt(data[2]) << 8 | UInt(data[3])
        splits = [Int(seed % range), Int((seed &* 40503 &+ UInt(data[3])) % range)].sorted()
    }

    /// A parser set up with this case's kind, configuration and methods.
    public func makeParser() -> HTTP1Parser {
        var parser = HTTP1Parser(kind: kind, configuration: configuration)
        if kind == .response {
            for method in methods { parser.expectResponse(to: method) }
        }
        return parser
    }
}

/// Reports a broken property and crashes, so libFuzzer saves the input.
public func propertyFailed(_ message: String, input: [UInt8]) -> Never {
    var text = "PROPERTY FAILED: \(message)\ninput: "
    text += escapeBytes(input)
    fatalError(text)
}

/// Printable form of bytes for failure messages.
public func escapeBytes(_ bytes: [UInt8]) -> String {
    var text = ""
    for byte in bytes {
        switch byte {
        case 0x0D: text += "\\r"
        case 0x0A: text += "\\n"
        case 0x09: text += "\\t"
        case 0x5C: text += "\\\\"
        case 0x20...0x7E: text.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            let digits = Array("0123456789abcdef")
            text += "\\x\(digits[Int(byte >> 4)])\(digits[Int(byte & 15)])"
        }
    }
    return text
}
