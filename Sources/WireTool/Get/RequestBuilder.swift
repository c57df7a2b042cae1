import Glibc
import Wire
import WireClient

/// Turns the options into one `HTTPClientRequest` per URL: the method curl would pick, the header fields, the body
/// (read once, shared by every URL), and the `--unix-socket` rewrite.
package struct RequestBuilder: Sendable {
    /// The request body, prepared once for every URL.
    enum Body: Sendable {
        /// No body.
        case none
        /// Bytes in memory (`-d`, `--data-binary text`).
        case bytes(ByteBuffer)
        /// A file streamed from disk as the socket takes it (`--data-binary @file`), with its size.
        case file(path: String, size: Int)
        /// A multipart form (`-F`), streamed part by part with its exact length.
        case form(MultipartFormData)
        /// `-T -` (or `-T .`): standard input, each piece sent as soon as it is read, chunked, as curl streams it.
        case standardInput
    }

    /// One request, ready to execute.
    struct Plan: Sendable {
        /// What the client is given.
        var request: HTTPClientRequest
        /// The URL as the user meant it (before a `--unix-socket` rewrite), for messages.
        var displayURL: HTTPURL
        /// The `Authorization` value the command line gives (for `--location-trusted`'s hops to other hosts).
        var credentials: String?
    }

    let options: FetchOptions
    let body: Body
    let method: HTTPMethod
    /// The method without `-X`: curl's rules for redirects follow it, and `-X` renames it only.
    let impliedMethod: HTTPMethod
    /// With `-G`: the data, joined with `&`, for every URL's query.
    let query: String?
    /// The `User-Agent` value: `-A`'s (empty for none), or Wire's.
    let userAgent: String?
    /// The netrc file's machines, with `-n`, `--netrc-file` or `--netrc-optional`.
    let netrc: Netrc?
    /// The fields of `-z` and `--etag-compare`, read once.
    let conditions: [(String, String)]
    /// A warning for standard error (a `-z` value that is neither a date nor a file).
    let warning: String?

    /// The size of the `-T` body; nil without `-T`.
    var uploadSize: Int? {
        guard options.uploadFile != nil else { return nil }
        switch body {
        case .none: return 0
        case .bytes(let bytes): return bytes.readableBytes
        case .file(_, let size): return size
        case .form, .standardInput: return nil
        }
    }

    /// Reads the data options once.
    ///
    /// - Throws: `TransferFailure` with curl's read-error status (26) when a data file or the `-T` file cannot be
    ///   read.
    init(options: FetchOptions) throws(TransferFailure) {
        self.options = options
        userAgent = options.userAgent.map { $0.isEmpty ? nil : $0 } ?? HTTPClientConfiguration().userAgent
        netrc = try Netrc.load(options.netrc)
        (conditions, warning) = try Self.conditions(options)
        if options.dataInQuery {
            query = options.data.isEmpty ? nil : String(decoding: try Self.joined(options.data).readableBytesArray, as: UTF8.self)
            body = .none
        } else if let file = options.uploadFile {
            query = nil
            body = try Self.upload(file)
        } else {
            query = nil
            body = options.form.isEmpty ? try Self.prepareBody(options.data) : .form(try FormPart.form(of: options.form))
        }
        // curl's choice: -X names the method outright; otherwise -I is HEAD, -T is PUT, data is POST (a GET with
        // -G), nothing is GET. What the options imply decides how a redirect changes the request, whatever -X says.
        if options.headOnly {
            impliedMethod = .head
        } else if options.uploadFile != nil {
            impliedMethod = .put
        } else if case .none = body {
            impliedMethod = .get
        } else {
            impliedMethod = .post
        }
        method = options.method ?? impliedMethod
    }

    /// The request for `text`, one URL from the command line.
    ///
    /// The fields go out in curl's order: `Host`, `Authorization`, `Range`, `User-Agent`, `Accept`,
    /// `Accept-Encoding`, `Referer`, the conditions of `-z` and `--etag-compare`, then the `-H` fields (one of which replaces the
    /// tool's field of the same name), then `Content-Type`. `-H 'Name:'` removes a field, the tool's own included.
    ///
    /// - Throws: `TransferFailure` with status 3 when the URL is malformed.
    func plan(for text: String) throws(TransferFailure) -> Plan {
        guard !text.isEmpty else {
            // curl 7.88's words for `--url ""` (or `""`).
            throw TransferFailure(status: ExitStatus.malformedURL, message: "URL using bad/illegal format or missing URL")
        }
        // curl's habit: a URL without a scheme is http.
        var absolute = HTTPURL.hasScheme(text) ? text : "http://" + text
        if let file = options.uploadFile, !Self.isStandardInput(file), absolute.hasSuffix("/") {
            // -T to a URL without a file part: curl names the target after the local file.
            absolute += Self.percentEncoded(Array((file.split(separator: "/").last ?? Substring(file)).utf8))
        }
        if let query {
            // -G: before the fragment, after any query the URL already has.
            let fragment = absolute.firstIndex(of: "#").map { String(absolute[$0...]) } ?? ""
            let base = String(absolute.dropLast(fragment.count))
            absolute = base + (base.contains("?") ? "&" : "?") + query + fragment
        }
        if !options.pathAsIs { absolute = URLPath.removingDotSegments(fromURL: absolute) }
        // curl sends `user:password@` as Basic credentials; the URL goes on without them, so they reach no message,
        // record or cache key.
        let split = try Self.takingUserinfo(from: absolute)
        absolute = split.url
        let url: HTTPURL
        do { url = try HTTPURL(absolute) } catch { throw TransferFailure(error) }
        if options.unixSocket != nil, url.isTLS {
            throw TransferFailure(status: ExitStatus.malformedURL, message: "https over --unix-socket is not supported: \(text)")
        }
        if case .standardInput = body, options.routing.http10 {
            // A body of unknown length needs chunked coding, which HTTP/1.0 lacks: curl 7.88 refuses it (25).
            throw TransferFailure(status: ExitStatus.uploadFailed, message: "Chunky upload is not supported by HTTP 1.0")
        }
        let headers = fields(for: url, userinfo: split.credentials)
        var requestBody: HTTPClientRequest.Body? =
            switch body {
            case .none: nil
            case .bytes(let bytes): .bytes(bytes)
            case .file(let path, _): .file(path: path)
            case .form(let form): form.body.wireBody
            // Read one piece each time the client asks for one (not ahead of the socket), from wherever standard
            // input is now: a second URL gets what the first left, as with curl. It cannot be sent twice, so a
            // 307/308 is the answer rather than a resend.
            case .standardInput: .stream(length: nil, InputChunks.stream())
            }
        if let rate = options.transport.limitRate {
            // --limit-rate holds uploads too: the body goes out in pieces as the limit allows (a form is sent as is).
            switch body {
            case .bytes(let bytes):
                requestBody = .replayable(length: bytes.readableBytes) {
                    PacedUpload(source: .bytes(bytes), bytesPerSecond: rate)
                }
            case .file(let path, let size):
                requestBody = .replayable(length: size) { PacedUpload(source: .file(path: path), bytesPerSecond: rate) }
            case .standardInput:
                let input = PacedInput(bytesPerSecond: rate)
                requestBody = .stream(length: nil, AsyncThrowingStream(unfolding: { try await input.next() }))
            case .none, .form:
                break
            }
        }
        var request = HTTPClientRequest(url: absolute, method: method, headers: headers, body: requestBody)
        if let target = options.requestTarget {
            request = HTTPClientRequest(url: url.replacingTarget(target), method: method, headers: headers, body: requestBody)
        }
        // The socket replaces the connection, not the request: the server still sees the URL's
        // target and Host, and redirects stay on the socket, as with curl.
        request.unixSocketPath = Self.socketPath(options)
        return Plan(request: request, displayURL: url, credentials: authorization(userinfo: split.credentials, url: url))
    }

    /// Refuses, before anything is sent, what curl refuses at connect time for `url`: a `--connect-to` entry that
    /// matches it with a bad port (49), an IP address of the family `-4`/`-6` rules out (7), and an https URL with
    /// `--tls-max` below TLS 1.2, which Wire never speaks (35).
    func checkRoute(to url: HTTPURL) throws(TransferFailure) {
        if url.isTLS, let max = options.tls.maximumVersion, max == "1.0" || max == "1.1" {
            throw TransferFailure(
                status: ExitStatus.tlsHandshake,
                message: "no TLS version left to offer: --tls-max \(max) is below TLS 1.2, the lowest Wire speaks")
        }
        guard options.unixSocket == nil, url.unixSocketPath == nil else { return }
        let port = url.port ?? (url.isTLS ? 443 : 80)
        let target = try FetchRouting.connectTarget(options.routing.connectTo, host: url.host, port: port)
        if let family = options.routing.family {
            var host = target?.host ?? url.host
            if host.hasPrefix("[") { host = String(host.dropFirst().dropLast()) }
            if let address = try? SocketAddress(ipAddress: host, port: 0), address.family != family {
                throw TransferFailure(
                    status: ExitStatus.couldNotConnect,
                    message:
                        "Couldn't connect to server: \(host) is not an \(family == .ipv4 ? "IPv4 (-4)" : "IPv6 (-6)") address")
            }
        }
    }

    /// The `Authorization` value the command line gives a request to `url`: `--oauth2-bearer`, then `-u`, then the
    /// URL's own credentials, then the netrc file's; nil for none.
    func authorization(userinfo: [UInt8]?, url: HTTPURL) -> String? {
        if let token = options.bearerToken { return "Bearer " + token }
        // --digest and --anyauth send -u's credentials only in answer to the server's challenge.
        if options.credentials != nil, options.answersChallenges { return nil }
        if let credentials = options.credentials {
            return "Basic " + Base64Encoder.encode(Array("\(credentials.user):\(credentials.password)".utf8))
        }
        var user: String?
        if let userinfo {
            // A URL with a password is used as it is; one with only a user name takes the netrc password for it.
            let colon = userinfo.firstIndex(of: UInt8(ascii: ":")) ?? userinfo.endIndex
            let password = colon < userinfo.endIndex ? userinfo[(colon + 1)...] : []
            if !password.isEmpty || netrc == nil { return "Basic " + Base64Encoder.encode(userinfo) }
            user = String(decoding: userinfo[..<colon], as: UTF8.self)
        }
        if let netrc, let entry = netrc.entry(forHost: url.host, login: user) {
            return "Basic " + Base64Encoder.encode(Array("\(entry.login):\(entry.password)".utf8))
        }
        return userinfo.map { "Basic " + Base64Encoder.encode($0) }
    }

    /// The header fields of a request to `url`, in curl's order (see `plan(for:)`).
    func fields(for url: HTTPURL, userinfo: [UInt8]?, referer: String? = nil) -> HTTPHeaders {
        let removed = options.removedHeaders
        let custom = Set(options.headers.map { $0.name.lowercased() })
        var headers = HTTPHeaders()
        func addDefault(_ name: String, _ value: String?) {
            let lowered = name.lowercased()
            guard let value, !removed.contains(lowered), !custom.contains(lowered) else { return }
            headers.add(name: name, value: value)
        }
        // Host: Wire writes one after the request's own fields when there is none, so removing it is not possible
        // (HTTP/1.1 requires it, RFC 9112 §3.2); writing it here puts it first, as curl does.
        if !custom.contains("host") { headers.add(name: "Host", value: url.hostHeader) }
        addDefault("Authorization", authorization(userinfo: userinfo, url: url))
        addDefault("Range", options.range.map { "bytes=" + $0 } ?? options.resumeOffset.flatMap { $0 > 0 ? "bytes=\($0)-" : nil })
        addDefault("User-Agent", userAgent)
        let sendsJSON = options.data.contains { if case .json = $0 { true } else { false } }
        addDefault("Accept", sendsJSON ? "application/json" : "*/*")
        // curl's value for --compressed with zlib alone.
        addDefault("Accept-Encoding", options.compressed ? "deflate, gzip" : nil)
        addDefault("Referer", referer ?? options.referer)
        for (name, value) in conditions { addDefault(name, value) }
        for field in options.headers { headers.add(name: field.name, value: field.value) }
        if options.uploadFile != nil, !options.routing.http10, uploadSize != 0 {
            // curl 7.88 asks before every upload of -T with a body, whatever its size (a POST only above 1 MiB).
            addDefault("Expect", "100-continue")
        }
        if case .form(let form) = body {
            addDefault("Content-Type", form.contentType)
        } else if !options.data.isEmpty, query == nil {
            // curl labels data from -d and --data-binary alike as a form unless told otherwise; --json as JSON.
            addDefault("Content-Type", sendsJSON ? "application/json" : "application/x-www-form-urlencoded")
        }
        return headers
    }

    /// `absolute` without the userinfo of its authority, and that userinfo as Basic credentials: `user:password`
    /// percent-decoded, each part on its own (so an encoded `%3A` in the user name stays in it), a missing password
    /// empty, as curl sends it.
    ///
    /// - Throws: `TransferFailure` with status 3 when the userinfo holds a malformed `%` escape.
    static func takingUserinfo(from absolute: String) throws(TransferFailure) -> (url: String, credentials: [UInt8]?) {
        let bytes = Array(absolute.utf8)
        guard let separator = bytes.firstRange(of: Array("://".utf8))?.upperBound else { return (absolute, nil) }
        let authorityEnd =
            bytes[separator...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? bytes.endIndex
        guard let at = bytes[separator..<authorityEnd].lastIndex(of: UInt8(ascii: "@")) else { return (absolute, nil) }
        let userinfo = bytes[separator..<at]
        let url = String(decoding: bytes[..<separator] + bytes[(at + 1)...], as: UTF8.self)
        guard !userinfo.isEmpty else { return (url, nil) }
        let colon = userinfo.firstIndex(of: UInt8(ascii: ":")) ?? userinfo.endIndex
        guard let user = PercentEncoding.decodeBytes(utf8: userinfo[..<colon]),
            let password = colon == userinfo.endIndex ? [] : PercentEncoding.decodeBytes(utf8: userinfo[(colon + 1)...])
        else {
            throw TransferFailure(status: ExitStatus.malformedURL, message: "malformed percent-encoding in the URL's credentials")
        }
        return (url, user + [UInt8(ascii: ":")] + password)
    }

    /// The fields of `-z` and `--etag-compare`, with the warning of a `-z` that is neither a date nor a file.
    ///
    /// - Throws: `TransferFailure` 26 when the `--etag-compare` file cannot be read.
    static func conditions(_ options: FetchOptions) throws(TransferFailure) -> (fields: [(String, String)], warning: String?) {
        var fields: [(String, String)] = []
        var warning: String?
        if var text = options.timeCondition {
            // curl's prefixes: '-' asks for If-Unmodified-Since, '+' and '=' for If-Modified-Since.
            var name = "If-Modified-Since"
            if text.hasPrefix("-") {
                name = "If-Unmodified-Since"
                text.removeFirst()
            } else if text.hasPrefix("+") || text.hasPrefix("=") {
                text.removeFirst()
            }
            // A date first; otherwise the modification time of the file of that name, as curl tries them.
            if let seconds = HTTPFieldDate.parse(text) ?? LocalFiles.regularFileStatus(atPath: text).map({ Int($0.modified) }) {
                fields.append((name, HTTPFieldDate.format(unixSeconds: seconds)))
            } else {
                warning = "Warning: Illegal date format for -z, --time-cond (and not a file name). Disabling time condition.\n"
            }
        }
        if let path = options.etagCompare {
            // The file's first line is the tag, sent as it is; an empty file sends "" (a tag nothing matches).
            let line = try contents(of: path).prefix { $0 != 0x0A && $0 != 0x0D }
            fields.append(("If-None-Match", line.isEmpty ? "\"\"" : String(decoding: line, as: UTF8.self)))
        }
        return (fields, warning)
    }

    // MARK: Body

    private static func prepareBody(_ parts: [FetchOptions.DataPart]) throws(TransferFailure) -> Body {
        guard !parts.isEmpty else { return .none }
        if parts.count == 1, case .binaryFile(let path) = parts[0] {
            return try regularFile(path)
        }
        return .bytes(try joined(parts))
    }

    /// The body of `-T`: a regular file streamed from disk with its length, or standard input streamed chunked.
    private static func upload(_ path: String) throws(TransferFailure) -> Body {
        isStandardInput(path) ? .standardInput : try regularFile(path)
    }

    /// curl's names for standard input after `-T`: `-`, and `.` (which curl reads without blocking; Wire's reads
    /// never block the transfer either way).
    static func isStandardInput(_ path: String) -> Bool { path == "-" || path == "." }

    /// A file to stream, checked now so a missing one fails before any connection, with curl's read-error status.
    private static func regularFile(_ path: String) throws(TransferFailure) -> Body {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let code = errno
            throw TransferFailure(status: ExitStatus.readError, message: "cannot read \(path): \(systemErrorText(code))")
        }
        guard status.st_mode & S_IFMT == S_IFREG, access(path, R_OK) == 0 else {
            throw TransferFailure(status: ExitStatus.readError, message: "cannot read \(path): not a readable regular file")
        }
        return .file(path: path, size: Int(status.st_size))
    }

    /// The data parts as one buffer: curl joins `-d`-style pieces with `&` and `--json` pieces with nothing.
    private static func joined(_ parts: [FetchOptions.DataPart]) throws(TransferFailure) -> ByteBuffer {
        var joined = ByteBuffer()
        for (position, part) in parts.enumerated() {
            if position > 0, !isJSON(part) { joined.writeInteger(UInt8(ascii: "&")) }
            switch part {
            case .text(let text), .binary(let text):
                joined.writeString(text)
            case .textFile(let path):
                // -d @file drops carriage returns and newlines, as curl does.
                joined.writeBytes(try contents(of: path).filter { $0 != 0x0A && $0 != 0x0D })
            case .binaryFile(let path):
                joined.writeBytes(try contents(of: path))
            case .urlEncoded(let spec):
                joined.writeString(try urlEncoded(spec))
            case .json(let text):
                if text.hasPrefix("@") {
                    joined.writeBytes(try contents(of: String(text.dropFirst())))
                } else {
                    joined.writeString(text)
                }
            }
        }
        return joined
    }

    private static func isJSON(_ part: FetchOptions.DataPart) -> Bool {
        if case .json = part { true } else { false }
    }

    /// `--data-urlencode`'s forms, split at the first `=` or `@` as curl splits them: `=content` and `content` send
    /// the encoded content, `name=content` the name (as given) and the encoded content, `@file` and `name@file` the
    /// same with the file's whole contents.
    package static func urlEncoded(_ spec: String) throws(TransferFailure) -> String {
        guard let split = spec.firstIndex(where: { $0 == "=" || $0 == "@" }) else {
            return percentEncoded(Array(spec.utf8), spaceAsPlus: true)
        }
        let name = String(spec[..<split])
        let rest = String(spec[spec.index(after: split)...])
        let content = spec[split] == "=" ? Array(rest.utf8) : try contents(of: rest)
        let encoded = percentEncoded(content, spaceAsPlus: true)
        return name.isEmpty ? encoded : name + "=" + encoded
    }

    /// curl's escaping: every byte but the RFC 3986 unreserved ones as `%XX`, upper-case; a space as `+` in form
    /// data (`--data-urlencode`, as curl 7.88 sends it) and as `%20` in a path.
    package static func percentEncoded(_ bytes: [UInt8], spaceAsPlus: Bool = false) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                output.append(byte)
            case UInt8(ascii: " ") where spaceAsPlus:
                output.append(UInt8(ascii: "+"))
            default:
                output += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func contents(of path: String) throws(TransferFailure) -> [UInt8] {
        do {
            return path == "-" ? try LocalFiles.readToEnd(STDIN_FILENO) : try LocalFiles.contents(atPath: path)
        } catch {
            let name = path == "-" ? "standard input" : path
            throw TransferFailure(
                status: ExitStatus.readError, message: "cannot read \(name): \(systemErrorText(error.errno.rawValue))")
        }
    }

    // MARK: Unix sockets

    /// The socket every request goes to: `--unix-socket`'s path, or `--abstract-unix-socket`'s name after the NUL
    /// that marks Linux's abstract namespace.
    static func socketPath(_ options: FetchOptions) -> String? {
        guard let path = options.unixSocket else { return nil }
        return options.routing.abstractUnixSocket ? "\u{0}" + path : absoluteSocketPath(path)
    }

    /// `HTTPURL` wants a socket path that starts with `/` or `.`; a bare relative name is made absolute.
    static func absoluteSocketPath(_ path: String) -> String {
        if path.hasPrefix("/") || path.hasPrefix(".") { return path }
        return (LocalFiles.currentDirectory() ?? ".") + "/" + path
    }
}

extension HTTPURL {
    /// Whether `text` starts with `scheme://`.
    static func hasScheme(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else { return false }
        return text[colon...].hasPrefix("://")
            && text[..<colon].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }
}
