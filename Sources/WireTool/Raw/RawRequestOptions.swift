/// The options of `wire request --raw FILE|- URL`: what to send, how to cut it into writes, how to end the sending
/// side, and how long to listen.
///
/// Parsed from the words after `request`, as `FetchOptions` parses a fetch's (`--name value` and `--name=value`);
/// any other option is a usage error, since nothing of a normal request applies to bytes sent as written.
struct RawRequestOptions: Equatable, Sendable {
    /// What happens to the connection after the last write.
    enum Ending: Equatable, Sendable {
        /// Nothing: keep both directions open and read until the peer ends or `--read-timeout` passes.
        case keepOpen
        /// `--half-close`: send end of stream (FIN, after TLS's close_notify) and keep reading.
        case halfClose
        /// `--reset`: reset the connection (RST, `SO_LINGER` 0) once the last write has left.
        case reset
    }

    /// `--raw FILE`, or `-` for standard input.
    var source = ""
    /// The URL: `http://HOST:PORT`, `https://HOST:PORT` (TLS), anything after the authority ignored.
    var url = ""
    /// `--split SPEC` and the items of `--segments FILE` (read when the command runs), in that order.
    var split: String?
    /// `--segments FILE`.
    var segmentsFile: String?
    /// `--mark TEXT`: each occurrence in the bytes starts a write and is not sent.
    var mark: String?
    /// `--delay D`: the wait before each write after the first without a delay of its own.
    var delay: Duration = .zero
    /// `--half-close` or `--reset`.
    var ending = Ending.keepOpen
    /// `--read-timeout S`: after the last write, the connection ends as `timeout` once nothing arrived for this long.
    var readTimeout: Duration = .seconds(5)
    /// `--connect-timeout S`: connecting (and the TLS handshake) may take this long.
    var connectTimeout: Duration = .seconds(10)
    /// `--dump-received FILE`: every received byte, as it came, to FILE (`-` is standard error).
    var dumpReceived: String?
    /// `--record FILE`: the exchange as a recording (`RecordLine`'s format), mode 0600.
    var record: String?
    /// `--unix-socket PATH`: connect here, whatever the URL's host.
    var unixSocket: String?
    /// `--lenient`: read the answers with the lenient parser instead of the client's (`.userAgent`).
    var lenient = false
    /// `-k`/`--insecure`, `--cacert FILE`: the TLS switches a raw exchange takes.
    var tls = FetchOptions.TLSOptions()

    /// Whether `words` ask for a raw exchange (`--raw` anywhere before `--`).
    static func isRaw(_ words: [String]) -> Bool {
        for word in words {
            if word == "--" { return false }
            if word == "--raw" || word.hasPrefix("--raw=") { return true }
        }
        return false
    }

    private static let valued: Set<String> = [
        "--raw", "--split", "--segments", "--mark", "--delay", "--read-timeout", "--connect-timeout", "--dump-received",
        "--record", "--unix-socket", "--cacert",
    ]

    /// Parses the words after `request`.
    init(_ words: [String]) throws(FetchUsageError) {
        var index = 0
        var urls: [String] = []
        var sawRaw = false
        while index < words.count {
            let word = words[index]
            index += 1
            var name = word
            var value: String?
            if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
                name = String(word[..<equals])
                value = String(word[word.index(after: equals)...])
            }
            if Self.valued.contains(name) {
                if value == nil {
                    guard index < words.count else { throw FetchUsageError(message: "\(name) needs a value") }
                    value = words[index]
                    index += 1
                }
                try apply(name, value ?? "")
                if name == "--raw" { sawRaw = true }
                continue
            }
            guard value == nil else { throw FetchUsageError(message: "\(name) takes no value") }
            switch word {
            case "--half-close": ending = ending == .reset ? ending : .halfClose
            case "--reset": ending = .reset
            case "--lenient": lenient = true
            case "-k", "--insecure": tls.insecure = true
            case "-s", "--silent": break
            default:
                if word.hasPrefix("-") { throw FetchUsageError(message: "'\(word)' does not apply to --raw") }
                urls.append(word)
            }
        }
        guard sawRaw else { throw FetchUsageError(message: "--raw FILE|- is missing") }
        guard urls.count == 1 else { throw FetchUsageError(message: "--raw sends to exactly one URL") }
        if words.contains("--half-close") && words.contains("--reset") {
            throw FetchUsageError(message: "--half-close and --reset exclude each other")
        }
        if mark != nil && (split != nil || segmentsFile != nil) {
            throw FetchUsageError(message: "--mark cannot be combined with --split or --segments")
        }
        url = urls[0]
        _ = try target()
    }

    private mutating func apply(_ name: String, _ value: String) throws(FetchUsageError) {
        switch name {
        case "--raw":
            guard !value.isEmpty else { throw FetchUsageError(message: "--raw needs a file, or - for standard input") }
            source = value
        case "--split":
            // Checked now, so a mistake is a usage error before connecting.
            _ = try RawSegmentPlan(parsing: value, option: "--split")
            split = value
        case "--segments": segmentsFile = value
        case "--mark":
            guard !value.isEmpty else { throw FetchUsageError(message: "--mark needs a non-empty text") }
            mark = value
        case "--delay": delay = try RawSegmentPlan.duration(Substring(value), option: "--delay")
        case "--read-timeout":
            readTimeout = try FetchOptions.seconds(value, option: name) ?? .seconds(86_400 * 365)
        case "--connect-timeout":
            connectTimeout = try FetchOptions.seconds(value, option: name) ?? .seconds(86_400 * 365)
        case "--dump-received": dumpReceived = value
        case "--record": record = value
        case "--unix-socket": unixSocket = value
        case "--cacert": tls.caCertificateFile = value
        default: throw FetchUsageError(message: "unknown option '\(name)'")
        }
    }

    /// Where to connect, from the URL.
    struct Target: Equatable, Sendable {
        /// The host (brackets removed from an IPv6 literal).
        var host: String
        /// The port (the scheme's default when the URL has none).
        var port: Int
        /// Whether the bytes go over TLS.
        var isTLS: Bool
    }

    /// The URL's scheme, host and port.
    func target() throws(FetchUsageError) -> Target {
        let isTLS: Bool
        var rest: Substring
        if url.lowercased().hasPrefix("http://") {
            isTLS = false
            rest = url.dropFirst(7)
        } else if url.lowercased().hasPrefix("https://") {
            isTLS = true
            rest = url.dropFirst(8)
        } else {
            throw FetchUsageError(message: "--raw needs an http:// or https:// URL, not '\(url)'")
        }
        rest = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var host = rest
        var port = isTLS ? 443 : 80
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw FetchUsageError(message: "malformed URL '\(url)'") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") {
                guard let number = Int(after.dropFirst()), (1...65_535).contains(number) else {
                    throw FetchUsageError(message: "malformed port in '\(url)'")
                }
                port = number
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let number = Int(rest[rest.index(after: colon)...]), (1...65_535).contains(number) else {
                throw FetchUsageError(message: "malformed port in '\(url)'")
            }
            port = number
        }
        guard !host.isEmpty || unixSocket != nil else { throw FetchUsageError(message: "no host in '\(url)'") }
        return Target(host: String(host), port: port, isTLS: isTLS)
    }
}
