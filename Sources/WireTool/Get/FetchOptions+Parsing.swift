import Glibc
import Wire

extension FetchOptions {
    /// Sets the flag spelled `word` (a flag takes no value); false when `word` is not a flag.
    private mutating func setFlag(_ word: String) -> Bool {
        switch word {
        case "-i", "--include": includeHead = true
        case "-I", "--head": headOnly = true
        case "-v", "--verbose": verbose = true
        case "-f", "--fail": failOnHTTPError = true
        case "--fail-with-body": failWithBody = true
        case "--fail-early": failEarly = true
        case "--no-fail-early": failEarly = false
        case "-g", "--globoff": globOff = true
        case "--no-globoff": globOff = false
        case "-Z", "--parallel": parallel = true
        case "--no-parallel": parallel = false
        case "--parallel-immediate": parallelImmediate = true
        case "--no-parallel-immediate": parallelImmediate = false
        case "-L", "--location": followRedirects = true
        case "--location-trusted":
            followRedirects = true
            locationTrusted = true
        case "--post301": postRedirects.insert(301)
        case "--post302": postRedirects.insert(302)
        case "--post303": postRedirects.insert(303)
        case "-s", "--silent": silent = true
        case "-S", "--show-error": showError = true
        case "--no-progress-meter": noProgressMeter = true
        case "-#", "--progress-bar": progressBar = true
        // Wire writes every chunk as it comes (no buffer to turn off), and reads no configuration file unless -K names
        // one: both are accepted so that curl command lines work unchanged.
        case "-N", "--no-buffer", "-q", "--disable": break
        case "-V", "--version": showVersion = true
        case "-O", "--remote-name": outputs.append(.remoteName)
        case "--remote-name-all": output.remoteNameAll = true
        case "-J", "--remote-header-name": output.remoteHeaderName = true
        case "--create-dirs": output.createDirectories = true
        case "--remove-on-error": output.removeOnError = true
        case "-R", "--remote-time": output.remoteTime = true
        case "--json-summary": jsonSummary = true
        case "-G", "--get": dataInQuery = true
        case "--compressed": compressed = true
        case "--path-as-is": pathAsIs = true
        // --basic, --digest and --anyauth add up (curl ORs its auth bits): `--digest --basic` allows both.
        case "--basic": authSchemes.insert(.basic)
        case "--digest": authSchemes.insert(.digest)
        case "--anyauth": authSchemes.formUnion([.basic, .digest])
        case "-n", "--netrc": netrc.enabled = true
        case "--netrc-optional":
            netrc.enabled = true
            netrc.optional = true
        case "-k", "--insecure": tls.insecure = true
        case "--no-verify-host": tls.noVerifyHost = true
        case "--retry-all-errors": retry.allErrors = true
        case "--retry-connrefused": retry.connectionRefused = true
        case "--tlsv1.2": tls.minimumVersion = tls.minimumVersion == "1.3" ? "1.3" : "1.2"
        case "--tlsv1.3": tls.minimumVersion = "1.3"
        // Routing, TCP and raw bodies, as curl spells them (with curl's --no- forms).
        case "-4", "--ipv4": routing.family = .ipv4
        case "-6", "--ipv6": routing.family = .ipv6
        case "-0", "--http1.0": routing.http10 = true
        case "--http1.1": routing.http10 = false
        case "--keepalive": transport.keepAlive = true
        case "--no-keepalive": transport.keepAlive = false
        case "--tcp-nodelay": transport.noDelay = true
        case "--no-tcp-nodelay": transport.noDelay = false
        case "--raw": raw = true
        case "--no-raw": raw = false
        case "-j", "--junk-session-cookies": junkSessionCookies = true
        case "--no-junk-session-cookies": junkSessionCookies = false
        case "--pin-report-only": tls.pinReportOnly = true
        // -w and the traces.
        case "--trace-time": traceTime = true
        case "--trace-tcp-info": traceTCPInfo = true
        default: return false
        }
        return true
    }

    /// Options that take a value, long spellings first; the short ones may have the value attached (`-XPOST`).
    private static let valued: [String: String] = [
        "-X": "--request", "-H": "--header", "-d": "--data", "-o": "--output", "-F": "--form", "--form": "--form",
        "--request": "--request", "--header": "--header", "--data": "--data", "--data-binary": "--data-binary",
        "--data-ascii": "--data",
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
        "--url": "--url", "--stderr": "--stderr", "--output-dir": "--output-dir",
        "-D": "--dump-header", "--dump-header": "--dump-header",
        "-A": "--user-agent", "--user-agent": "--user-agent", "-e": "--referer", "--referer": "--referer",
        "--oauth2-bearer": "--oauth2-bearer", "--netrc-file": "--netrc-file",
        "-r": "--range", "--range": "--range", "-z": "--time-cond", "--time-cond": "--time-cond",
        "--etag-compare": "--etag-compare", "--etag-save": "--etag-save",
        "--max-filesize": "--max-filesize", "--form-string": "--form-string",
        // -w and the traces.
        "-w": "--write-out", "--write-out": "--write-out", "--trace": "--trace", "--trace-ascii": "--trace-ascii",
        // issue 32: curl's verbatim request target; recording.
        "--request-target": "--request-target", "--record": "--record",
        "--resolve": "--resolve", "--connect-to": "--connect-to", "--interface": "--interface",
        "--abstract-unix-socket": "--abstract-unix-socket", "--limit-rate": "--limit-rate",
        "--keepalive-time": "--keepalive-time", "--expect100-timeout": "--expect100-timeout",
        "--capath": "--capath", "--tls-max": "--tls-max", "--ciphers": "--ciphers", "--tls13-ciphers": "--tls13-ciphers",
        "--curves": "--curves", "--parallel-max": "--parallel-max",
        "-K": "--config", "--config": "--config",
    ].merging(proxyValued) { own, _ in own }

    /// Parses the words after the subcommand's name.
    ///
    /// A `-K FILE` (`--config`, `-K -` for standard input) is read where it stands: its lines are taken in order, as
    /// if they were written there, so options after it override its own and its `url` lines fall in place among the
    /// URLs (and so among the `-o` pairs).
    ///
    /// - Parameters:
    ///   - words: The command-line words.
    ///   - requiresMethod: Whether `-X` must be given (`wire request`); `wire get` takes it as curl does.
    /// - Throws: `FetchUsageError` naming the mistake (with curl's read-error status, 26, for a `-K` file that
    ///   cannot be read).
    package init(_ words: [String], requiresMethod: Bool) throws(FetchUsageError) {
        self.init()
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
            do {
                let use = try take(word, next: index < words.count ? words[index] : nil, nesting: 0)
                if use == .withNext { index += 1 }
            } catch {
                switch error {
                case .unknown(let option, let word?): throw FetchUsageError(message: "unknown option '\(option)' in '\(word)'")
                case .unknown(let option, nil): throw FetchUsageError(message: "unknown option '\(option)'")
                case .missingValue(let option): throw FetchUsageError(message: "\(option) needs a value")
                case .invalid(let usage), .inConfigFile(let usage): throw usage
                }
            }
        }
        // -V prints the version whatever else the line holds, as curl's does.
        if showVersion { return }
        try validate(requiresMethod: requiresMethod)
    }

    /// Why one option could not be taken; the command line and a `-K` file each say it their way.
    private enum OptionFailure: Error {
        /// No such option: the word, or the letter of a bundle with the bundle's word.
        case unknown(String, in: String?)
        /// An option that takes a value, with none after it.
        case missingValue(String)
        /// The value is wrong.
        case invalid(FetchUsageError)
        /// A `-K` file inside failed, with its own file and line.
        case inConfigFile(FetchUsageError)
    }

    /// Whether an option took the word after it as its value.
    private enum OptionUse { case alone, withNext }

    /// Takes one option word (`-s`, `--max-time`, `--max-time=5`, `-XPOST`, `-sLo`), with `next` the word after it
    /// (nil at the end), the value of an option that takes one and has none attached. `nesting` counts the `-K`
    /// files this word is in.
    private mutating func take(_ word: String, next: String?, nesting: Int) throws(OptionFailure) -> OptionUse {
        if setFlag(word) || setProxyFlag(word) { return .alone }
        // --name=value
        if word.hasPrefix("--"), let equals = word.firstIndex(of: "="), let name = Self.valued[String(word[..<equals])] {
            try set(name, String(word[word.index(after: equals)...]), nesting: nesting)
            return .alone
        }
        if let name = Self.valued[word] {
            guard let next else { throw .missingValue(word) }
            try set(name, next, nesting: nesting)
            return .withNext
        }
        // A short option with its value attached (-XPOST, -HName:v), or bundled flags (-sLi, -so out).
        if word.hasPrefix("-"), !word.hasPrefix("--"), word.count > 2 {
            return try takeBundle(word, next: next, nesting: nesting)
        }
        throw .unknown(word, in: nil)
    }

    /// Takes `-abc`: flags one by one, until a letter that takes a value, which takes the rest of the word or, when
    /// the word ends there, `next`.
    private mutating func takeBundle(_ word: String, next: String?, nesting: Int) throws(OptionFailure) -> OptionUse {
        var letters = Substring(word.dropFirst())
        while let letter = letters.first {
            letters = letters.dropFirst()
            let short = "-\(letter)"
            if setFlag(short) || setProxyFlag(short) {
                continue
            } else if let name = Self.valued[short] {
                if !letters.isEmpty {
                    try set(name, String(letters), nesting: nesting)
                    return .alone
                }
                guard let next else { throw .missingValue(short) }
                try set(name, next, nesting: nesting)
                return .withNext
            } else {
                throw .unknown(short, in: word)
            }
        }
        return .alone
    }

    /// `apply`, and `-K`, which reads a file of options in place.
    private mutating func set(_ name: String, _ value: String, nesting: Int) throws(OptionFailure) {
        if name == "--config" {
            let bytes: [UInt8]
            do { bytes = try Self.configFile(value, nesting: nesting + 1) } catch { throw .invalid(error) }
            do { try include(bytes, name: value == "-" ? "<stdin>" : value, nesting: nesting + 1) } catch {
                throw .inConfigFile(error)
            }
        } else {
            do { try apply(name, value) } catch { throw .invalid(error) }
        }
    }

    /// How deep `-K` files may include each other (a file that names itself would never end).
    static let configNestingLimit = 5

    /// The bytes of the `-K` file at `path` (`-`: standard input).
    ///
    /// - Throws: `FetchUsageError` with status 26 when the file cannot be read, 2 when files nest too deep.
    private static func configFile(_ path: String, nesting: Int) throws(FetchUsageError) -> [UInt8] {
        guard nesting <= configNestingLimit else {
            throw FetchUsageError(message: "-K '\(path)': config files nest more than \(configNestingLimit) deep")
        }
        do {
            return path == "-" ? try LocalFiles.readToEnd(STDIN_FILENO) : try LocalFiles.contents(atPath: path)
        } catch {
            throw FetchUsageError(
                message: "option -K: cannot read config from '\(path)': \(systemErrorText(error.errno.rawValue))",
                status: ExitStatus.readError)
        }
    }

    /// Takes the options of a `-K` file's `bytes`, in order; `name` is the file's, for messages.
    ///
    /// A line curl 7.88 cannot use (an unknown option, a missing or bad value, a value for an option that takes none)
    /// is skipped with a warning naming the file and line, `FILE:LINE: warning: 'OPTION' is unknown`, and the rest of
    /// the file still counts, as in 7.88 (curl 8 stops at it). Only a `-K` file that cannot be read (or nests more
    /// than `configNestingLimit` deep) is an error.
    private mutating func include(_ bytes: [UInt8], name: String, nesting: Int) throws(FetchUsageError) {
        for line in ConfigFile(bytes).lines {
            let place = "\(name):\(line.number)"
            if line.unquotedWhitespace {
                warnings.append(
                    "\(place): warning: '\(line.option)' uses unquoted whitespace in the line that may cause side-effects!")
            }
            // A name without dashes is a long option's.
            let word = line.option.hasPrefix("-") ? line.option : "--" + line.option
            let use: OptionUse
            do {
                use = try take(word, next: line.value, nesting: nesting)
            } catch {
                switch error {
                case .unknown: warnings.append("\(place): warning: '\(line.option)' is unknown")
                case .missingValue: warnings.append("\(place): warning: '\(line.option)' requires parameter")
                case .invalid(let usage) where word == "-K" || word == "--config":
                    // A file it names that cannot be read (or nests too deep) ends the run, as on the command line.
                    throw FetchUsageError(message: "\(place): \(usage.message)", status: usage.status)
                case .invalid(let usage): warnings.append("\(place): warning: '\(line.option)' \(usage.message)")
                case .inConfigFile(let usage): throw usage
                }
                continue
            }
            if use == .alone, let value = line.value, !value.isEmpty {
                warnings.append("\(place): warning: '\(line.option)' had unsupported trailing garbage")
            }
        }
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
            switch try Self.headerLine(value) {
            case .send(let field):
                headers.append(field)
                removedHeaders.remove(field.name.lowercased())
            case .remove(let name):
                headers.removeAll { $0.name.lowercased() == name }
                removedHeaders.insert(name)
            }
        case "--data":
            data.append(value.hasPrefix("@") ? .textFile(String(value.dropFirst())) : .text(value))
        case "--data-binary":
            data.append(value.hasPrefix("@") ? .binaryFile(String(value.dropFirst())) : .binary(value))
        case "--data-raw":
            // -d without the meaning of '@'.
            data.append(.text(value))
        case "--request-target":
            // Verbatim, but a request line cannot carry a space or a control byte (the serializer would refuse it).
            guard !value.isEmpty, value.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else {
                throw FetchUsageError(message: "--request-target needs a target without spaces or control bytes")
            }
            requestTarget = value
        case "--data-urlencode":
            data.append(.urlEncoded(value))
        case "--json":
            data.append(.json(value))
        case "--user":
            // curl would prompt for a missing password; a tool run from scripts asks for it outright.
            guard let colon = value.firstIndex(of: ":") else {
                throw FetchUsageError(message: "-u needs user:password (wire does not prompt for a password)")
            }
            credentials = Credentials(user: String(value[..<colon]), password: String(value[value.index(after: colon)...]))
        case "--upload-file":
            uploadFile = try Self.file(value, option: "-T")
        case "--form":
            form.append(try FormPart(value))
        case "--output":
            guard !value.isEmpty else { throw FetchUsageError(message: "-o needs a file name") }
            outputs.append(.file(value))
        case "--output-dir":
            // curl 7.88 takes an empty one as none: files go to the working directory.
            output.directory = value.isEmpty ? nil : value
        case "--dump-header":
            output.headerFile = try Self.file(value, option: "-D")
        case "--url":
            // An empty one is a URL like any other for curl 7.88: its transfer fails with 3 when its turn comes.
            urls.append(value)
        case "--stderr":
            errorFile = try Self.file(value, option: name)
        case "--user-agent":
            userAgent = value
        case "--referer":
            // curl's `URL;auto`, or `;auto` alone: the redirects' Referer too.
            if value.hasSuffix(";auto") {
                autoReferer = true
                let url = String(value.dropLast(";auto".count))
                referer = url.isEmpty ? nil : url
            } else {
                referer = value
            }
        case "--oauth2-bearer":
            // Empty too, as curl 7.88 sends it: `Authorization: Bearer `.
            bearerToken = value
        case "--netrc-file":
            netrc.enabled = true
            netrc.file = try Self.file(value, option: name)
        case "--range":
            range = try Self.range(value, warnings: &warnings)
        case "--time-cond":
            guard !value.isEmpty else { throw FetchUsageError(message: "-z needs a date or a file name") }
            timeCondition = value
        case "--max-filesize":
            maxFilesize = try Self.size(value, option: name)
        case "--form-string":
            // -F without the meaning of '@', '<' and ';type=': the value is sent as given.
            guard let equals = value.firstIndex(of: "=") else {
                throw FetchUsageError(message: "--form-string needs name=content, not '\(value)'")
            }
            form.append(FormPart(name: String(value[..<equals]), content: .text(String(value[value.index(after: equals)...]))))
        case "--etag-compare":
            etagCompare = try Self.file(value, option: name)
        case "--etag-save":
            etagSave = try Self.file(value, option: name)
        case "--max-time":
            maxTime = try Self.seconds(value, option: name)
        case "--connect-timeout":
            connectTimeout = try Self.seconds(value, option: name)
        case "--max-redirs":
            guard let count = Int(value), count >= -1 else {
                throw FetchUsageError(message: "--max-redirs needs a whole number (-1 for no limit), not '\(value)'")
            }
            maxRedirects = count == -1 ? nil : count
        case "--unix-socket", "--abstract-unix-socket":
            guard !value.isEmpty else { throw FetchUsageError(message: "\(name) needs a path") }
            // One socket, as in curl: the last of the two switches wins.
            unixSocket = value
            routing.abstractUnixSocket = name == "--abstract-unix-socket"
        case "--resolve":
            routing.resolve.append(value)
        case "--connect-to":
            routing.connectTo.append(value)
        case "--interface":
            guard !value.isEmpty else { throw FetchUsageError(message: "--interface needs a name or an address") }
            routing.interface = value
        case "--limit-rate":
            transport.limitRate = try Self.rateLimit(value)
        case "--keepalive-time":
            // curl takes a whole number of seconds; 0 leaves the system's timing.
            guard let seconds = Int(value), seconds >= 0 else {
                throw FetchUsageError(message: "--keepalive-time needs a whole number of seconds, not '\(value)'")
            }
            transport.keepAliveTime = seconds
        case "--expect100-timeout":
            transport.expect100Timeout = try Self.seconds(value, option: name) ?? .zero
        case "--capath":
            tls.caDirectory = try Self.file(value, option: name)
        case "--tls-max":
            guard ["default", "1.0", "1.1", "1.2", "1.3"].contains(value) else {
                throw FetchUsageError(message: "--tls-max takes 1.0, 1.1, 1.2, 1.3 or default, not '\(value)'")
            }
            tls.maximumVersion = value == "default" ? nil : value
        case "--ciphers":
            tls.ciphers = value
        case "--tls13-ciphers":
            tls.tls13Ciphers = value
        case "--curves":
            tls.curves = value
        case "--parallel-max":
            // curl 7.88 takes any whole number of 0 or more: above 300 it is 300, 0 is the default 50.
            guard !value.isEmpty, value.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw FetchUsageError(message: "--parallel-max needs a whole number of transfers, not '\(value)'")
            }
            let count = Int(value) ?? Int.max
            parallelMax = count == 0 ? 50 : min(count, 300)
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
            // `-` continues from the output file's size; a number asks for the body from that byte on.
            if value == "-" {
                continuesOutput = true
                resumeOffset = nil
            } else {
                guard let offset = Int64(value), offset >= 0 else {
                    throw FetchUsageError(message: "-C takes '-' or a byte offset, not '\(value)'")
                }
                continuesOutput = false
                resumeOffset = offset
            }
        case "--cookie":
            // curl's rule: text with `=` is cookies, anything else a file name (an empty one only turns the engine on).
            if value.contains("=") { cookieString = value } else { cookieFiles.append(value) }
        case "--cookie-jar":
            guard !value.isEmpty else { throw FetchUsageError(message: "-c needs a file name") }
            cookieJar = value
        case "--cache-dir":
            guard !value.isEmpty else { throw FetchUsageError(message: "--cache-dir needs a directory") }
            cacheDirectory = value
        // -w and the traces.
        case "--write-out":
            writeOut = try Self.writeOutFormat(value)
        case "--trace", "--trace-ascii":
            guard !value.isEmpty else { throw FetchUsageError(message: "\(name) needs a file name (- for standard output)") }
            trace = TraceTarget(path: value, ascii: name == "--trace-ascii")
        case "--record":
            guard !value.isEmpty else { throw FetchUsageError(message: "--record needs a file name") }
            record = value
        case _ where Self.proxyValued.values.contains(name):
            try applyProxy(name, value)
        default:
            // The table of options and this switch are kept together; an option missing here is refused, never a trap.
            throw FetchUsageError(message: "option \(name) is not supported")
        }
    }

    /// `-r`'s value as curl 7.88 takes it: `A-B`, `A-`, `-N` and several joined by commas. A number without a dash
    /// (curl reads the digits it starts with) gets one appended, `500` asking for `bytes=500-`; any other character
    /// but digits, `-` and `,` is sent as given. Both with curl's warning.
    ///
    /// - Throws: `FetchUsageError` for a start too large for a byte offset (curl: "unsupported range point") and for
    ///   a control character, which no header field can carry.
    static func range(_ value: String, warnings: inout [String]) throws(FetchUsageError) -> String {
        guard !value.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else {
            throw FetchUsageError(message: "-r cannot carry a control character")
        }
        let isDigit = { (character: Character) in character.isASCII && character.isNumber }
        if let first = value.first, isDigit(first), !value.contains("-") {
            guard let start = Int64(value.prefix(while: isDigit)) else {
                throw FetchUsageError(message: "option -r: is badly used here: unsupported range point '\(value)'")
            }
            warnings.append("A specified range MUST include at least one dash (-). Appending one for you!")
            return "\(start)-"
        }
        if !value.allSatisfy({ isDigit($0) || $0 == "-" || $0 == "," }) {
            warnings.append(
                "Invalid character is found in given range. A specified range MUST have only digits in "
                    + "'start'-'stop'. The server's response to this request is uncertain.")
        }
        return value
    }

    /// `-w`'s format: the text, or with `@` the contents of a file (`@-`: standard input), read now as curl does.
    private static func writeOutFormat(_ value: String) throws(FetchUsageError) -> String {
        guard value.hasPrefix("@") else { return value }
        let path = String(value.dropFirst())
        do {
            let bytes = path == "-" ? try LocalFiles.readToEnd(STDIN_FILENO) : try LocalFiles.contents(atPath: path)
            return String(decoding: bytes, as: UTF8.self)
        } catch {
            throw FetchUsageError(message: "-w cannot read \(path): \(error)")
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
        if failOnHTTPError && failWithBody {
            // curl: "option --fail-with-body: is badly used here".
            throw FetchUsageError(message: "choose one: -f/--fail writes no error body, --fail-with-body writes it")
        }
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
        if jsonSummary && (!outputs.isEmpty || output.remoteNameAll) {
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

    /// What one `-H` argument asks for.
    enum HeaderLine: Equatable {
        /// Send this field.
        case send(HeaderField)
        /// `Name:` with nothing after it: send no field of this name, not even one the tool or Wire adds (lower-cased).
        case remove(String)
    }

    /// curl's three forms: `Name: value`, `Name:` (remove the field) and `Name;` (send it empty).
    static func headerLine(_ text: String) throws(FetchUsageError) -> HeaderLine {
        if text.last == ";", !text.contains(":"), text.count > 1 {
            return .send(HeaderField(name: String(text.dropLast()), value: ""))
        }
        let field = try header(text)
        return field.value.isEmpty ? .remove(field.name.lowercased()) : .send(HeaderField(name: field.name, value: field.value))
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

    /// A number of bytes with curl's optional suffix (`k`, `M`, `G`, `T`, powers of 1024); 0 means no limit.
    static func size(_ text: String, option: String) throws(FetchUsageError) -> Int64? {
        let units: [Character: Int64] = [
            "k": 1 << 10, "K": 1 << 10, "m": 1 << 20, "M": 1 << 20, "g": 1 << 30, "G": 1 << 30, "t": 1 << 40, "T": 1 << 40,
        ]
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = digits.last, let scale = units[last] {
            unit = scale
            digits = digits.dropLast()
        }
        guard let count = Int64(digits), count >= 0, count <= Int64.max / unit else {
            throw FetchUsageError(message: "\(option) needs a size in bytes (k, M, G or T may follow), not '\(text)'")
        }
        return count == 0 ? nil : count * unit
    }

    /// A non-negative number of seconds, fractions allowed; 0 means no limit, as in curl.
    static func seconds(_ text: String, option: String) throws(FetchUsageError) -> Duration? {
        guard let value = Double(text), value.isFinite, value >= 0 else {
            throw FetchUsageError(message: "\(option) needs a number of seconds, not '\(text)'")
        }
        return value == 0 ? nil : .seconds(value)
    }

    /// `--limit-rate`'s speed: digits with an optional `K`, `M` or `G` (powers of 1024) or `B`, as curl 7.88 reads
    /// it; 0 means no limit.
    static func rateLimit(_ text: String) throws(FetchUsageError) -> Int64? {
        let units: [Character: Int64] = [
            "k": 1 << 10, "K": 1 << 10, "m": 1 << 20, "M": 1 << 20, "g": 1 << 30, "G": 1 << 30, "b": 1, "B": 1,
        ]
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = digits.last, let scale = units[last] {
            unit = scale
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int64(digits),
            count <= Int64.max / unit
        else {
            throw FetchUsageError(message: "--limit-rate needs bytes per second (K, M or G may follow), not '\(text)'")
        }
        return count == 0 ? nil : count * unit
    }

    /// `N/s`, `N/m`, `N/h` or `N/d`; a bare `N` is per hour, as in curl.
    package static func rate(_ text: String) throws(FetchUsageError) -> Rate {
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
