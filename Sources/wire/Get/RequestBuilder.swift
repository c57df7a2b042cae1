import Glibc
import Wire
import WireClient

/// Turns the options into one `HTTPClientRequest` per URL: the method curl would pick, the header fields, the body
/// (read once, shared by every URL), and the `--unix-socket` rewrite.
struct RequestBuilder: Sendable {
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
    }

    /// One request, ready to execute.
    struct Plan: Sendable {
        /// What the client is given.
        var request: HTTPClientRequest
        /// The URL as the user meant it (before a `--unix-socket` rewrite), for messages.
        var displayURL: HTTPURL
    }

    let options: FetchOptions
    let body: Body
    let method: HTTPMethod

    /// Reads the data options once.
    ///
    /// - Throws: `TransferFailure` with curl's read-error status (26) when a data file cannot be read.
    init(options: FetchOptions) throws(TransferFailure) {
        self.options = options
        body = options.form.isEmpty ? try Self.prepareBody(options.data) : .form(try FormPart.form(of: options.form))
        // curl's choice: -X names the method outright; otherwise -I is HEAD, data is POST, nothing is GET.
        if let explicit = options.method {
            method = explicit
        } else if options.headOnly {
            method = .head
        } else if case .none = body {
            method = .get
        } else {
            method = .post
        }
    }

    /// The request for `text`, one URL from the command line.
    ///
    /// - Throws: `TransferFailure` with status 3 when the URL is malformed.
    func plan(for text: String) throws(TransferFailure) -> Plan {
        // curl's habit: a URL without a scheme is http.
        let absolute = HTTPURL.hasScheme(text) ? text : "http://" + text
        let url: HTTPURL
        do { url = try HTTPURL(absolute) } catch { throw TransferFailure(error) }
        var headers = HTTPHeaders()
        if options.unixSocket != nil, url.isTLS {
            throw TransferFailure(status: ExitStatus.malformedURL, message: "https over --unix-socket is not supported: \(text)")
        }
        for field in options.headers { headers.add(name: field.name, value: field.value) }
        if options.compressed, !headers.contains(name: "accept-encoding") {
            // curl's value for --compressed with zlib alone.
            headers.add(name: "Accept-Encoding", value: "deflate, gzip")
        }
        if case .form(let form) = body, !headers.contains(name: "content-type") {
            headers.add(name: "Content-Type", value: form.contentType)
        } else if !options.data.isEmpty, !headers.contains(name: "content-type") {
            // curl labels data from -d and --data-binary alike as a form unless told otherwise.
            headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        }
        let requestBody: HTTPClientRequest.Body? = switch body {
        case .none: nil
        case .bytes(let bytes): .bytes(bytes)
        case .file(let path, _): .file(path: path)
        case .form(let form): form.body.wireBody
        }
        var request = HTTPClientRequest(url: absolute, method: method, headers: headers, body: requestBody)
        // The socket replaces the connection, not the request: the server still sees the URL's
        // target and Host, and redirects stay on the socket, as with curl.
        request.unixSocketPath = options.unixSocket.map(Self.absoluteSocketPath)
        return Plan(request: request, displayURL: url)
    }

    // MARK: Body

    private static func prepareBody(_ parts: [FetchOptions.DataPart]) throws(TransferFailure) -> Body {
        guard !parts.isEmpty else { return .none }
        if parts.count == 1, case .binaryFile(let path) = parts[0] {
            // Checked now so a missing file fails before any connection, with curl's read-error status.
            var status = stat()
            guard stat(path, &status) == 0 else {
                let code = errno
                throw TransferFailure(status: ExitStatus.readError,
                                      message: "cannot read \(path): \(systemErrorText(code))")
            }
            guard status.st_mode & S_IFMT == S_IFREG, access(path, R_OK) == 0 else {
                throw TransferFailure(status: ExitStatus.readError,
                                      message: "cannot read \(path): not a readable regular file")
            }
            return .file(path: path, size: Int(status.st_size))
        }
        // curl joins several -d values with '&'.
        var joined = ByteBuffer()
        for (position, part) in parts.enumerated() {
            if position > 0 { joined.writeInteger(UInt8(ascii: "&")) }
            switch part {
            case .text(let text), .binary(let text):
                joined.writeString(text)
            case .textFile(let path):
                // -d @file drops carriage returns and newlines, as curl does.
                joined.writeBytes(try contents(of: path).filter { $0 != 0x0A && $0 != 0x0D })
            case .binaryFile(let path):
                joined.writeBytes(try contents(of: path))
            }
        }
        return .bytes(joined)
    }

    private static func contents(of path: String) throws(TransferFailure) -> [UInt8] {
        do {
            return path == "-" ? try LocalFiles.readToEnd(STDIN_FILENO) : try LocalFiles.contents(atPath: path)
        } catch {
            let name = path == "-" ? "standard input" : path
            throw TransferFailure(status: ExitStatus.readError, message: "cannot read \(name): \(systemErrorText(error.errno.rawValue))")
        }
    }

    // MARK: Unix sockets

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
