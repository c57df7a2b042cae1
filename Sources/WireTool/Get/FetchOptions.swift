import Wire

/// A command-line mistake in `wire get` or `wire request`; the tool exits 2.
struct FetchUsageError: Error, Equatable, Sendable {
    /// What is wrong, for the line on standard error.
    var message: String
}

/// The validated options of one `wire get` or `wire request` call, parsed curl's way: short and long spellings,
/// `--name=value` and `-Xvalue` forms, bundled flags (`-sL`), repeatable `-H`, `-d` and `-o`, and `--` to end
/// the options.
///
/// Parsing is pure (no file is read, nothing is checked on disk), so every rule is unit-testable; files named by
/// `-d @file` and `--data-binary @file` are opened when the request is built.
struct FetchOptions: Equatable, Sendable {
    /// One piece of request data, in command-line order.
    enum DataPart: Equatable, Sendable {
        /// `-d text`: sent as given.
        case text(String)
        /// `-d @file`: the file's contents without CR and LF, as curl sends them.
        case textFile(String)
        /// `--data-binary text`: sent as given.
        case binary(String)
        /// `--data-binary @file`: the file's exact bytes, streamed from disk.
        case binaryFile(String)
        /// `--data-urlencode SPEC`: curl's five forms (`content`, `=content`, `name=content`, `@file`,
        /// `name@file`), the content percent-encoded when the request is built.
        case urlEncoded(String)
        /// `--json text` or `--json @file`: JSON pieces, concatenated without a separator as curl does.
        case json(String)
    }

    /// A limit on how often requests start.
    struct Rate: Equatable, Sendable {
        /// The time between two request starts.
        var interval: Duration
    }

    /// The URLs, fetched in order.
    var urls: [String] = []
    /// The method given with `-X`; otherwise GET, HEAD with `-I`, or POST when there is data. As with curl, it
    /// changes the method's name only: whether a body is sent still follows `-d`/`--data-binary`.
    var method: HTTPMethod?
    /// With `-X CONNECT`: the tunnel's target, `host:port` (the first word that is not an option); the URLs
    /// that follow are the proxies asked.
    var connectTarget: String?
    /// `-I`/`--head`: send HEAD (unless `-X` names another method) and write only the response head.
    var headOnly = false
    /// Header fields from `-H`, in order.
    var headers: [(name: String, value: String)] = []
    /// Request data from `-d` and `--data-binary`, in order.
    var data: [DataPart] = []
    /// Multipart form fields from `-F`, in order.
    var form: [FormPart] = []
    /// `-G`/`--get`: the data goes into the URL's query and the request is a GET (HEAD with `-I`).
    var dataInQuery = false
    /// `-u user:password`: Basic credentials sent with every request (unless `-H Authorization` is given).
    var credentials: (user: String, password: String)?
    /// `-T FILE`: the file sent as the body of a PUT (`-` for standard input).
    var uploadFile: String?
    /// Output files from `-o`, paired with the URLs in order; `-` is standard output.
    var outputs: [String] = []
    /// `-i`: write the response head before the body.
    var includeHead = false
    /// `-v`: the request and response heads and the timings on standard error.
    var verbose = false
    /// `--fail`: an HTTP status of 400 or more is a failure (exit 22) and its body is not written.
    var failOnHTTPError = false
    /// `--max-time`: the total time one transfer may take; nil for no limit.
    var maxTime: Duration?
    /// `--connect-timeout`: how long connecting may take; nil for the client's default.
    var connectTimeout: Duration?
    /// `-L`: follow redirects.
    var followRedirects = false
    /// `--max-redirs`: the most redirects followed with `-L`; nil for no limit (curl's `-1`).
    var maxRedirects: Int? = 50
    /// `--unix-socket`: send every request to this socket, whatever the URL's host.
    var unixSocket: String?
    /// `-s`: no progress bar.
    var silent = false
    /// `--rate`: the most request starts per unit of time.
    var rate: Rate?
    /// `--json-summary`: print one JSON object per URL on standard output instead of the body.
    var jsonSummary = false
    /// `--compressed`: offer `Accept-Encoding: deflate, gzip` and decode the body (without it, bytes pass through as
    /// they came, as with curl).
    var compressed = false
    /// The TLS switches, for https URLs.
    var tls = TLSOptions()
    /// curl's retry switches.
    var retry = RetryOptions()
    /// `-C -`/`--continue-at -`: continue each output file from its size (`Range: bytes=<size>-`) and append.
    var continuesOutput = false
    /// `-b 'name=value; n2=v2'` (an argument with `=`): sent as the `Cookie` field; the last one given counts.
    var cookieString: String?
    /// `-b FILE` (an argument without `=`): Netscape cookie files loaded into the cookie engine, in order.
    var cookieFiles: [String] = []
    /// `-c FILE`: every cookie is written to this Netscape cookie file at the end (`-` for standard output).
    var cookieJar: String?
    /// Whether received cookies are kept and sent on later requests and redirect hops: with `-b FILE` or `-c`, as
    /// with curl.
    var cookieEngine: Bool { !cookieFiles.isEmpty || cookieJar != nil }
    /// `--cache-dir`: the directory of an RFC 9111 response cache kept across invocations (a Wire extension).
    var cacheDirectory: String?

    /// `--retry N` and its companions, with curl's meaning (see `TransferRetry`).
    struct RetryOptions: Equatable, Sendable {
        /// `--retry N`: how many times a transfer that failed with a transient error is tried again; 0 for never.
        var count = 0
        /// `--retry-delay S`: a fixed wait before each retry instead of the doubling backoff; nil (or 0) for the
        /// backoff.
        var delay: Duration?
        /// `--retry-max-time S`: no retry starts once this long has passed since the first attempt; nil (or 0) for
        /// no limit.
        var maxTime: Duration?
        /// `--retry-all-errors`: every failure is transient.
        var allErrors = false
        /// `--retry-connrefused`: a refused connection is transient too.
        var connectionRefused = false
    }

    /// curl's TLS switches. Files are only named here; they are read when the client is made.
    struct TLSOptions: Equatable, Sendable {
        /// `--cacert FILE`: trust these roots instead of the system's.
        var caCertificateFile: String?
        /// `-k`/`--insecure`: verify nothing (pins still apply, to the leaf).
        var insecure = false
        /// `--no-verify-host`: skip only the host name (or IP address) check.
        var noVerifyHost = false
        /// `--pin sha256/BASE64` (repeatable; curl's `sha256//…;sha256//…` also accepted).
        var publicKeyPins: [String] = []
        /// `--pin-cert FILE`: the peer's chain must contain one of this file's certificates (PEM or DER, by content).
        var pinnedCertificateFile: String?
        /// `--pinned-cert-dir DIR`: the peer's chain must contain one of the certificates of DIR's `.cer`, `.der` and
        /// `.pem` files (with `--pin-cert`, of either).
        var pinnedCertificateDirectory: String?
        /// `--pin-report-only`: a pin mismatch is a warning on standard error, and the transfer goes on.
        var pinReportOnly = false
        /// `--cert FILE`: a client certificate (PEM, with intermediates), for mutual TLS.
        var certificateFile: String?
        /// `--key FILE`: the client certificate's private key (PEM).
        var keyFile: String?
        /// `--tlsv1.2`/`--tlsv1.3`: the lowest version offered, as in curl.
        var minimumVersion: String?
    }

    static func == (lhs: FetchOptions, rhs: FetchOptions) -> Bool {
        lhs.urls == rhs.urls && lhs.method == rhs.method
            && lhs.headers.map { [$0.name, $0.value] } == rhs.headers.map { [$0.name, $0.value] }
            && lhs.data == rhs.data && lhs.outputs == rhs.outputs && lhs.includeHead == rhs.includeHead
            && lhs.headOnly == rhs.headOnly && lhs.connectTarget == rhs.connectTarget
            && lhs.verbose == rhs.verbose && lhs.failOnHTTPError == rhs.failOnHTTPError && lhs.maxTime == rhs.maxTime
            && lhs.connectTimeout == rhs.connectTimeout && lhs.followRedirects == rhs.followRedirects
            && lhs.maxRedirects == rhs.maxRedirects && lhs.unixSocket == rhs.unixSocket && lhs.silent == rhs.silent
            && lhs.rate == rhs.rate && lhs.jsonSummary == rhs.jsonSummary && lhs.tls == rhs.tls
            && lhs.retry == rhs.retry && lhs.form == rhs.form && lhs.dataInQuery == rhs.dataInQuery
            && lhs.credentials.map { [$0.user, $0.password] } == rhs.credentials.map { [$0.user, $0.password] }
            && lhs.uploadFile == rhs.uploadFile && lhs.continuesOutput == rhs.continuesOutput
            && lhs.cookieString == rhs.cookieString && lhs.cookieFiles == rhs.cookieFiles && lhs.cookieJar == rhs.cookieJar
            && lhs.compressed == rhs.compressed
            && lhs.cacheDirectory == rhs.cacheDirectory
    }

    /// Sets the flag spelled `word` (a flag takes no value); false when `word` is not a flag.
    private mutating func setFlag(_ word: String) -> Bool {
        switch word {
        case "-i", "--include": includeHead = true
        case "-I", "--head": headOnly = true
        case "-v", "--verbose": verbose = true
        case "-f", "--fail": failOnHTTPError = true
        case "-L", "--location": followRedirects = true
        case "-s", "--silent": silent = true
        case "--json-summary": jsonSummary = true
        case "-G", "--get": dataInQuery = true
        case "--compressed": compressed = true
        case "-k", "--insecure": tls.insecure = true
        case "--no-verify-host": tls.noVerifyHost = true
        case "--retry-all-errors": retry.allErrors = true
        case "--retry-connrefused": retry.connectionRefused = true
        case "--tlsv1.2": tls.minimumVersion = tls.minimumVersion == "1.3" ? "1.3" : "1.2"
        case "--tlsv1.3": tls.minimumVersion = "1.3"
        case "--pin-report-only": tls.pinReportOnly = true
        default: return false
        }
        return true
    }

    /// Options that take a value, long spellings first; the short ones may have the value attached (`-XPOST`).
    private static let valued: [String: String] = [
        "-X": "--request", "-H": "--header", "-d": "--data", "-o": "--output", "-F": "--form", "--form": "--form",
        "--request": "--request", "--header": "--header", "--data": "--data", "--data-binary": "--data-binary",
        "--output": "--output", "--max-time": "--max-time", "-m": "--max-time",
        "--connect-timeout": "--connect-timeout",
        "--max-redirs": "--max-redirs", "--unix-socket": "--unix-socket", "--rate": "--rate",
        "--cacert": "--cacert", "--pin": "--pin", "--pinnedpubkey": "--pin", "--pin-cert": "--pin-cert",
        "--pinned-cert-dir": "--pinned-cert-dir",
        "--cert": "--cert", "-E": "--cert", "--key": "--key",
        "--retry": "--retry", "--retry-delay": "--retry-delay", "--retry-max-time": "--retry-max-time",
        "--data-raw": "--data-raw", "--data-urlencode": "--data-urlencode", "--json": "--json",
        "-u": "--user", "--user": "--user", "-T": "--upload-file", "--upload-file": "--upload-file",
        "-C": "--continue-at", "--continue-at": "--continue-at",
        "-b": "--cookie", "--cookie": "--cookie", "-c": "--cookie-jar", "--cookie-jar": "--cookie-jar",
        "--cache-dir": "--cache-dir",
    ]

    /// Parses the words after the subcommand's name.
    ///
    /// - Parameters:
    ///   - words: The command-line words.
    ///   - requiresMethod: Whether `-X` must be given (`wire request`); `wire get` takes it as curl does.
    /// - Throws: `FetchUsageError` naming the mistake.
    init(_ words: [String], requiresMethod: Bool) throws(FetchUsageError) {
        var index = 0
        var optionsEnded = false
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || !word.hasPrefix("-") || word == "-" {
                guard word != "-" else { throw FetchUsageError(message: "'-' is not a URL") }
                urls.append(word)
                continue
            }
            if word == "--" {
                optionsEnded = true
                continue
            }
            if setFlag(word) { continue }
            // --name=value
            if word.hasPrefix("--"), let equals = word.firstIndex(of: "="),
                let name = Self.valued[String(word[..<equals])]
            {
                try apply(name, String(word[word.index(after: equals)...]))
                continue
            }
            if let name = Self.valued[word] {
                guard index < words.count else { throw FetchUsageError(message: "\(word) needs a value") }
                try apply(name, words[index])
                index += 1
                continue
            }
            // A short option with its value attached (-XPOST, -HName:v), or bundled flags (-sLi, -so out).
            if !word.hasPrefix("--"), word.count > 2 {
                index = try applyBundle(word, words: words, next: index)
                continue
            }
            throw FetchUsageError(message: "unknown option '\(word)'")
        }
        try validate(requiresMethod: requiresMethod)
    }

    /// Applies `-abc`: flags one by one, until a letter that takes a value, which takes the rest of the word or,
    /// when the word ends there, the next word. Returns the index of the next unread word.
    private mutating func applyBundle(_ word: String, words: [String], next: Int) throws(FetchUsageError) -> Int {
        var letters = Substring(word.dropFirst())
        while let letter = letters.first {
            letters = letters.dropFirst()
            let short = "-\(letter)"
            if setFlag(short) {
                continue
            } else if let name = Self.valued[short] {
                if !letters.isEmpty {
                    try apply(name, String(letters))
                    return next
                }
                guard next < words.count else { throw FetchUsageError(message: "\(short) needs a value") }
                try apply(name, words[next])
                return next + 1
            } else {
                throw FetchUsageError(message: "unknown option '\(short)' in '\(word)'")
            }
        }
        return next
    }

    /// Sets the option `name` (its long spelling) to `value`.
    private mutating func apply(_ name: String, _ value: String) throws(FetchUsageError) {
        switch name {
        case "--request":
            // A method is a token (RFC 9110 §9.1): printable ASCII without delimiters.
            let delimiters = Set("\"(),/:;<=>?@[\\]{}".utf8)
            guard !value.isEmpty, value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && !delimiters.contains($0) }) else {
                throw FetchUsageError(message: "invalid method '\(value)'")
            }
            method = HTTPMethod(value)
        case "--header":
            headers.append(try Self.header(value))
        case "--data":
            data.append(value.hasPrefix("@") ? .textFile(String(value.dropFirst())) : .text(value))
        case "--data-binary":
            data.append(value.hasPrefix("@") ? .binaryFile(String(value.dropFirst())) : .binary(value))
        case "--data-raw":
            // -d without the meaning of '@'.
            data.append(.text(value))
        case "--data-urlencode":
            data.append(.urlEncoded(value))
        case "--json":
            data.append(.json(value))
        case "--user":
            // curl would prompt for a missing password; a tool run from scripts asks for it outright.
            guard let colon = value.firstIndex(of: ":") else {
                throw FetchUsageError(message: "-u needs user:password (wire does not prompt for a password)")
            }
            credentials = (String(value[..<colon]), String(value[value.index(after: colon)...]))
        case "--upload-file":
            uploadFile = try Self.file(value, option: "-T")
        case "--form":
            form.append(try FormPart(value))
        case "--output":
            guard !value.isEmpty else { throw FetchUsageError(message: "-o needs a file name") }
            outputs.append(value)
        case "--max-time":
            maxTime = try Self.seconds(value, option: name)
        case "--connect-timeout":
            connectTimeout = try Self.seconds(value, option: name)
        case "--max-redirs":
            guard let count = Int(value), count >= -1 else {
                throw FetchUsageError(message: "--max-redirs needs a whole number (-1 for no limit), not '\(value)'")
            }
            maxRedirects = count == -1 ? nil : count
        case "--unix-socket":
            guard !value.isEmpty else { throw FetchUsageError(message: "--unix-socket needs a path") }
            unixSocket = value
        case "--rate":
            rate = try Self.rate(value)
        case "--cacert":
            tls.caCertificateFile = try Self.file(value, option: name)
        case "--pin":
            tls.publicKeyPins += try Self.pins(value)
        case "--pin-cert":
            tls.pinnedCertificateFile = try Self.file(value, option: name)
        case "--pinned-cert-dir":
            guard !value.isEmpty else { throw FetchUsageError(message: "--pinned-cert-dir needs a directory") }
            tls.pinnedCertificateDirectory = value
        case "--cert":
            tls.certificateFile = try Self.file(value, option: name)
        case "--key":
            tls.keyFile = try Self.file(value, option: name)
        case "--retry":
            guard let count = Int(value), count >= 0 else {
                throw FetchUsageError(message: "--retry needs a whole number of retries, 0 or more, not '\(value)'")
            }
            retry.count = count
        case "--retry-delay":
            // Fractions as curl 8.16 takes them; 0 means the default backoff, as in curl.
            retry.delay = try Self.seconds(value, option: name)
        case "--retry-max-time":
            retry.maxTime = try Self.seconds(value, option: name)
        case "--continue-at":
            // curl's `-C N` (an offset of the caller's choosing) is not taken: only the output file's own size.
            guard value == "-" else {
                throw FetchUsageError(message: "-C takes '-' (continue from the output file's size), not '\(value)'")
            }
            continuesOutput = true
        case "--cookie":
            // curl's rule: text with `=` is cookies, anything else a file name (an empty one only turns the engine on).
            if value.contains("=") { cookieString = value } else { cookieFiles.append(value) }
        case "--cookie-jar":
            guard !value.isEmpty else { throw FetchUsageError(message: "-c needs a file name") }
            cookieJar = value
        case "--cache-dir":
            guard !value.isEmpty else { throw FetchUsageError(message: "--cache-dir needs a directory") }
            cacheDirectory = value
        default:
            preconditionFailure("option \(name) is in the table but not applied")
        }
    }

    private mutating func validate(requiresMethod: Bool) throws(FetchUsageError) {
        if method == .connect {
            // CONNECT's target is an authority, not a URL: `-X CONNECT host:port PROXY-URL...`.
            guard let target = urls.first, HTTPClient.isAuthority(target) else {
                throw FetchUsageError(
                    message: "-X CONNECT takes the tunnel's host:port, then the proxy's URL: "
                        + "wire request -X CONNECT example.org:443 http://proxy:3128/")
            }
            guard urls.count > 1 else {
                throw FetchUsageError(
                    message: "-X CONNECT \(target) needs the proxy's URL after it: "
                        + "wire request -X CONNECT \(target) http://proxy:3128/")
            }
            guard data.isEmpty, !headOnly else { throw FetchUsageError(message: "-X CONNECT sends no body and no HEAD") }
            connectTarget = target
            urls.removeFirst()
        }
        guard !urls.isEmpty else { throw FetchUsageError(message: "no URL given") }
        if requiresMethod && method == nil { throw FetchUsageError(message: "wire request needs -X METHOD") }
        if !form.isEmpty && (headOnly || !data.isEmpty) {
            // curl: "You can only select one HTTP request method!"
            throw FetchUsageError(message: "choose one method: -F sends a multipart POST, -d/--data-binary a form POST, -I HEAD")
        }
        let isJSON = data.contains { if case .json = $0 { true } else { false } }
        if isJSON && data.contains(where: { if case .json = $0 { false } else { true } }) {
            throw FetchUsageError(message: "--json sends one JSON body and cannot be combined with -d or --data-*")
        }
        if dataInQuery && !form.isEmpty {
            throw FetchUsageError(message: "choose one method: -G puts data in the query of a GET, -F sends a multipart POST")
        }
        if uploadFile != nil && (!form.isEmpty || !data.isEmpty || headOnly) {
            throw FetchUsageError(message: "choose one body: -T uploads a file with PUT; -d, -G, -F and -I ask for other methods")
        }
        if headOnly && !data.isEmpty && !dataInQuery {
            // curl refuses the pair too: -d asks for POST, -I for HEAD.
            throw FetchUsageError(message: "choose one method: -I/--head asks for HEAD, -d/--data-binary for POST")
        }
        if outputs.count > urls.count {
            throw FetchUsageError(
                message: "\(outputs.count) output files for \(urls.count) URLs; each -o pairs with one URL")
        }
        if jsonSummary && !outputs.isEmpty {
            throw FetchUsageError(message: "--json-summary prints to standard output and cannot be combined with -o")
        }
        if (tls.certificateFile == nil) != (tls.keyFile == nil) {
            throw FetchUsageError(message: "--cert and --key go together (the key of the client certificate)")
        }
        let pinsCertificates = tls.pinnedCertificateFile != nil || tls.pinnedCertificateDirectory != nil
        if !tls.publicKeyPins.isEmpty && pinsCertificates {
            throw FetchUsageError(message: "choose --pin or --pin-cert/--pinned-cert-dir, not both")
        }
        if tls.pinReportOnly && tls.publicKeyPins.isEmpty && !pinsCertificates {
            throw FetchUsageError(message: "--pin-report-only needs --pin, --pin-cert or --pinned-cert-dir")
        }
        if tls.pinReportOnly && tls.insecure {
            // With nothing verified and pins only reported, any certificate would pass: the library refuses the same.
            throw FetchUsageError(message: "--pin-report-only needs verification and cannot be combined with -k/--insecure")
        }
        let streamsFile = data.contains { if case .binaryFile = $0 { true } else { false } }
        if streamsFile && data.count > 1 && !dataInQuery {
            throw FetchUsageError(
                message: "--data-binary @file is streamed from disk and cannot be combined with other data")
        }
    }

    /// A non-empty file name.
    static func file(_ value: String, option: String) throws(FetchUsageError) -> String {
        guard !value.isEmpty else { throw FetchUsageError(message: "\(option) needs a file name") }
        return value
    }

    /// Public-key pins: `sha256/BASE64`, or curl's `sha256//BASE64` joined by `;`, each 32 bytes of base64.
    static func pins(_ value: String) throws(FetchUsageError) -> [String] {
        var pins: [String] = []
        for part in value.split(separator: ";") {
            var text = part.trimmingPrefix(" ")
            // curl writes `sha256//BASE64`; base64 may itself start with `/`, so only that exact prefix is curl's.
            if text.hasPrefix("sha256//") && text.count == "sha256//".count + 44 {
                text = text.dropFirst("sha256//".count)
            } else if text.hasPrefix("sha256/") {
                text = text.dropFirst("sha256/".count)
            } else {
                throw FetchUsageError(message: "a pin is sha256/BASE64 (the SHA-256 of the public key), not '\(part)'")
            }
            guard text.count == 44, text.hasSuffix("="),
                text.dropLast().allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "/") })
            else {
                throw FetchUsageError(message: "a pin's base64 is 44 characters (32 bytes), not '\(text)'")
            }
            pins.append("sha256/" + text)
        }
        guard !pins.isEmpty else { throw FetchUsageError(message: "--pin needs sha256/BASE64") }
        return pins
    }

    /// `Name: value`, with the optional whitespace around the value removed (RFC 9110 §5.5).
    static func header(_ text: String) throws(FetchUsageError) -> (name: String, value: String) {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
            throw FetchUsageError(message: "a header is 'Name: value', not '\(text)'")
        }
        let name = String(text[..<colon])
        let value = text[text.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
        let trimmed = String(value.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
        return (name, trimmed)
    }

    /// A non-negative number of seconds, fractions allowed; 0 means no limit, as in curl.
    static func seconds(_ text: String, option: String) throws(FetchUsageError) -> Duration? {
        guard let value = Double(text), value.isFinite, value >= 0 else {
            throw FetchUsageError(message: "\(option) needs a number of seconds, not '\(text)'")
        }
        return value == 0 ? nil : .seconds(value)
    }

    /// `N/s`, `N/m`, `N/h` or `N/d`; a bare `N` is per hour, as in curl.
    static func rate(_ text: String) throws(FetchUsageError) -> Rate {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let unit: Duration
        switch parts.count == 2 ? parts[1] : "h" {
        case "s": unit = .seconds(1)
        case "m": unit = .seconds(60)
        case "h": unit = .seconds(3600)
        case "d": unit = .seconds(86_400)
        default: throw FetchUsageError(message: "--rate is N/s, N/m, N/h or N/d, not '\(text)'")
        }
        guard let count = Int(parts[0]), count > 0 else {
            throw FetchUsageError(message: "--rate needs a positive whole number of requests, not '\(text)'")
        }
        return Rate(interval: unit / count)
    }
}
