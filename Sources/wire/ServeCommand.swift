import ArgumentParser
import Dispatch
import Glibc
import Wire
import WireTLS

/// `wire serve`: an HTTP/1.1 server with one of three behaviours: static files, echo, or a fixed greeting.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve HTTP/1.1: static files (--root), an echo of each request (--echo), or Hello, World! (--hello).",
        discussion: """
            Prints `listening on http://HOST:PORT` (https with --tls-cert) on its first line, serves until SIGINT or \
            SIGTERM, then shuts down gracefully (in-flight requests get up to 10 seconds).
            """
    )

    @Option(help: "The address to listen on (an IP literal, or localhost).")
    var host = "127.0.0.1"

    @Option(help: "The port; 0 picks a free one.")
    var port = 8080

    @Option(help: "Event loops (threads) accepting on the port; default one per core.")
    var loops: Int?

    @Option(help: "Serve static files from this directory.")
    var root: String?

    @Flag(help: "Answer every request with JSON describing it.")
    var echo = false

    @Flag(help: "Answer every request with `Hello, World!` (for benchmarks).")
    var hello = false

    @Option(help: "The largest request body accepted, in bytes (413 beyond).")
    var maxBodySize = 16 * 1024 * 1024

    @Option(help: "Serve HTTPS with this PEM certificate (followed by its intermediates); needs --tls-key.")
    var tlsCert: String?

    @Option(help: "The PEM private key of --tls-cert.")
    var tlsKey: String?

    @Option(help: "Require client certificates issued under the CAs of this PEM file (mutual TLS).")
    var clientCa: String?

    func validate() throws {
        let modes = [root != nil, echo, hello].filter { $0 }.count
        guard modes == 1 else { throw ValidationError("choose exactly one of --root DIR, --echo, --hello") }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        if let loops, loops < 1 { throw ValidationError("--loops must be at least 1") }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
        if clientCa != nil && tlsCert == nil { throw ValidationError("--client-ca needs --tls-cert and --tls-key") }
        if let root {
            guard LocalFiles.kind(atPath: root) == .directory, LocalFiles.realPath(root) != nil else {
                throw ValidationError("--root \(root) is not a directory")
            }
        }
    }

    func run() async throws {
        // Ignored, then observed through a dispatch source: the handler runs on a queue, never in signal context.
        let signals = SignalWaiter(signals: [SIGINT, SIGTERM])
        let address = try SocketAddress(ipAddress: host == "localhost" ? "127.0.0.1" : host, port: port)
        var parser = HTTP1ParserConfiguration.strict
        parser.maxBodySize = maxBodySize
        var configuration = HTTPServerConfiguration(address: address, parser: parser)
        if let tlsCert, let tlsKey {
            var tls = TLSServerConfiguration(certificateChainFile: tlsCert, privateKeyFile: tlsKey)
            if let clientCa { tls.clientCertificates = .required(caFile: clientCa) }
            configuration.tls = tls
        }
        let group = try EventLoopGroup(loopCount: loops ?? EventLoopGroup.coreCount, namePrefix: "wire-serve")
        let server: HTTPServer
        if let root {
            // The real path: files are served only when their own real path lies under it.
            guard let directory = LocalFiles.realPath(root) else { throw ValidationError("--root \(root) is not a directory") }
            server = HTTPServer(configuration: configuration, group: group, handler: StaticFileHandler(root: directory))
        } else if echo {
            server = HTTPServer(configuration: configuration, group: group, handler: EchoHandler(maxBodySize: maxBodySize))
        } else {
            server = HTTPServer(configuration: configuration, group: group, handler: HTTPFixedResponseHandler.hello)
        }
        let bound: SocketAddress
        do {
            bound = try await server.start()
        } catch {
            await group.shutdownGracefully()
            throw error
        }
        let hostText = bound.family == .ipv6 ? "[\(bound.host)]" : bound.host
        // Written unbuffered: whoever launched us waits for this line to learn the port.
        let scheme = tlsCert == nil ? "http" : "https"
        StandardStreams.output("listening on \(scheme)://\(hostText):\(bound.port ?? port)\n")
        let signal = await signals.next()
        StandardStreams.error("wire serve: signal \(signal), shutting down\n")
        await server.shutdown(gracePeriod: .seconds(10))
        await group.shutdownGracefully()
    }
}

// MARK: Signals

/// Waits for one of a set of signals without a signal handler of our own: the signals are ignored, and libdispatch
/// reports them through a source (it reads them with signalfd-like machinery, outside signal context).
final class SignalWaiter {
    private let sources: [any DispatchSourceSignal]
    private let stream: AsyncStream<Int32>
    private let continuation: AsyncStream<Int32>.Continuation

    init(signals: [Int32]) {
        (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        let queue = DispatchQueue(label: "wire-serve-signals")
        var sources: [any DispatchSourceSignal] = []
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            let continuation = self.continuation
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    /// The next signal received.
    func next() async -> Int32 {
        var iterator = stream.makeAsyncIterator()
        return await iterator.next() ?? SIGTERM
    }
}

// MARK: --echo

/// Answers 200 with JSON describing the request as parsed; for HEAD, the JSON goes base64-encoded in `X-Echo`.
struct EchoHandler: HTTPHandler {
    let maxBodySize: Int

    func handle(_ request: HTTPServerRequest, response: HTTPResponseWriter) async throws {
        let body = try await request.body.collect(upTo: maxBodySize)
        let json = Self.describe(request.head, body: body.readableBytesArray)
        var headers: HTTPHeaders = ["Content-Type": "application/json"]
        if request.method == .head {
            headers.add(name: "X-Echo", value: Base64Encoder.encode(Array(json.utf8)))
            headers.add(name: "Content-Length", value: String(json.utf8.count))
        }
        try await response.respond(HTTPResponseHead(status: .ok, headers: headers), body: ByteBuffer(string: json))
    }

    /// `{"method","target","version","headers":[[name,value],…],"body_b64"}`, fields exactly as sent: each byte of
    /// a string as the code point of the same value (`JSONString`, obs-text included).
    static func describe(_ head: HTTPRequestHead, body: [UInt8]) -> String {
        var json: [UInt8] = []
        json.append(contentsOf: #"{"method":"#.utf8)
        JSONString.append(head.method.rawValue, to: &json)
        json.append(contentsOf: #","target":"#.utf8)
        head.withTargetBytes { span in span.withUnsafeBufferPointer { JSONString.append($0, to: &json) } }
        json.append(contentsOf: #","version":"#.utf8)
        JSONString.append(head.version.description, to: &json)
        json.append(contentsOf: #","headers":"#.utf8)
        JSONString.appendFields(head.headers, to: &json)
        json.append(contentsOf: #","body_b64":""#.utf8)
        json.append(contentsOf: Base64Encoder.encode(body).utf8)
        json.append(contentsOf: #""}"#.utf8)
        // Plain ASCII, so the String holds exactly these bytes.
        return String(decoding: json, as: UTF8.self)
    }
}

// MARK: --root

/// Serves files under a root directory: GET and HEAD, Content-Type by extension, validators (ETag, Last-Modified)
/// with conditional requests (RFC 9110 §13), and byte ranges (RFC 9110 §14) including multipart/byteranges.
struct StaticFileHandler: HTTPHandler {
    /// The root's real path (`realpath(3)`: absolute, no symbolic links), without a trailing slash.
    let root: String

    /// Files up to this size are read whole and sent with their head in one write.
    static let wholeFileLimit = 64 * 1024
    /// The read size for larger files.
    static let chunkSize = 64 * 1024

    func handle(_ request: HTTPServerRequest, response: HTTPResponseWriter) async throws {
        guard request.method == .get || request.method == .head else {
            try await response.respond(Self.plain(.init(code: 405), "method not allowed\n", extra: ["Allow": "GET, HEAD"]),
                                       body: ByteBuffer(string: "method not allowed\n"))
            return
        }
        guard let path = resolve(request.target) else {
            try await response.respond(Self.plain(.notFound, ""), body: ByteBuffer(string: "not found\n"))
            return
        }
        guard let file = OpenFile(path: path) else {
            try await response.respond(Self.plain(.notFound, ""), body: ByteBuffer(string: "not found\n"))
            return
        }
        defer { file.close() }
        try await serve(file, path: path, request: request, response: response)
    }

    /// Maps a request-target to a file path under the root, or nil (outside the root, malformed, not a file).
    func resolve(_ target: String) -> String? {
        var pathPart = Substring(target)
        if let query = pathPart.firstIndex(where: { $0 == "?" || $0 == "#" }) { pathPart = pathPart[..<query] }
        guard pathPart.hasPrefix("/"), let decoded = Self.percentDecode(pathPart) else { return nil }
        var segments: [String] = []
        for segment in decoded.split(separator: "/", omittingEmptySubsequences: true) {
            // No segment may climb out of the root; "." is harmless but never needed.
            if segment == ".." || segment == "." { return nil }
            segments.append(String(segment))
        }
        var path = root + "/" + segments.joined(separator: "/")
        guard var kind = LocalFiles.kind(atPath: path) else { return nil }
        if kind == .directory {
            path += (path.hasSuffix("/") ? "" : "/") + "index.html"
            guard let indexKind = LocalFiles.kind(atPath: path) else { return nil }
            kind = indexKind
        }
        // Only regular files: opening a FIFO or a device could block the loop or read without end.
        guard kind == .regular else { return nil }
        // Symbolic links may point anywhere: the real path must still be under the root.
        guard let real = LocalFiles.realPath(path), real == root || real.hasPrefix(root + "/") else { return nil }
        return real
    }

    private func serve(_ file: OpenFile, path: String, request: HTTPServerRequest, response: HTTPResponseWriter)
        async throws
    {
        let size = file.size
        let etag = "\"\(String(file.modifiedSeconds, radix: 16))-\(String(size, radix: 16))\""
        let lastModified = HTTPDateFormat.format(seconds: file.modifiedSeconds)
        var headers: HTTPHeaders = [
            "Content-Type": MediaTypes.type(forPath: path),
            "Last-Modified": lastModified,
            "ETag": etag,
            "Accept-Ranges": "bytes",
        ]
        let requestHeaders = request.headers
        // RFC 9110 §13.2.2: If-None-Match is evaluated first; If-Modified-Since only without it.
        if let noneMatch = requestHeaders.first(name: "if-none-match") {
            if Self.etagListMatches(noneMatch, etag) {
                try await response.respond(HTTPResponseHead(status: .notModified, headers: headers))
                return
            }
        } else if let since = requestHeaders.first(name: "if-modified-since"),
            let sinceSeconds = HTTPDateFormat.parse(since), file.modifiedSeconds <= sinceSeconds
        {
            try await response.respond(HTTPResponseHead(status: .notModified, headers: headers))
            return
        }
        var ranges: [ClosedRange<Int>]? = nil
        if request.method == .get, let rangeField = requestHeaders.first(name: "range"),
            Self.ifRangeAllows(requestHeaders.first(name: "if-range"), etag: etag, lastModified: lastModified)
        {
            switch ByteRanges.parse(rangeField, size: size) {
            case .ignore: ranges = nil
            case .unsatisfiable:
                headers.replaceOrAdd(name: "Content-Range", value: "bytes */\(size)")
                try await response.respond(HTTPResponseHead(status: HTTPStatus(code: 416), headers: headers))
                return
            case .satisfiable(let parsed): ranges = parsed
            }
        }
        if request.method == .head {
            // The head a GET would have, and no read of the file: bodyless writes never wait for the socket, so
            // reading a large file here would hold the loop for all of it.
            headers.replaceOrAdd(name: "Content-Length", value: String(size))
            try await response.respond(HTTPResponseHead(status: .ok, headers: headers))
            return
        }
        guard let ranges else {
            try await sendFile(file, range: 0...max(size - 1, 0), isEmpty: size == 0, status: .ok, headers: headers,
                               response: response)
            return
        }
        if ranges.count == 1 {
            let range = ranges[0]
            headers.replaceOrAdd(name: "Content-Range", value: "bytes \(range.lowerBound)-\(range.upperBound)/\(size)")
            try await sendFile(file, range: range, isEmpty: false, status: .partialContent, headers: headers,
                               response: response)
            return
        }
        try await sendMultipart(file, ranges: ranges, headers: headers, response: response)
    }

    private func sendFile(
        _ file: OpenFile, range: ClosedRange<Int>, isEmpty: Bool, status: HTTPStatus, headers: HTTPHeaders,
        response: HTTPResponseWriter
    ) async throws {
        let length = isEmpty ? 0 : range.count
        if length <= Self.wholeFileLimit {
            let bytes = try file.read(at: range.lowerBound, count: length)
            try await response.respond(HTTPResponseHead(status: status, headers: headers), body: bytes)
            return
        }
        var headers = headers
        headers.replaceOrAdd(name: "Content-Length", value: String(length))
        try await response.writeHead(HTTPResponseHead(status: status, headers: headers))
        var offset = range.lowerBound
        while offset <= range.upperBound {
            try Task.checkCancellation()
            let chunk = try file.read(at: offset, count: min(Self.chunkSize, range.upperBound + 1 - offset))
            guard chunk.readableBytes > 0 else { throw FileReadError(path: file.path, errno: 0) }
            try await response.write(chunk)
            offset += chunk.readableBytes
        }
        try await response.end()
    }

    private func sendMultipart(
        _ file: OpenFile, ranges: [ClosedRange<Int>], headers: HTTPHeaders, response: HTTPResponseWriter
    ) async throws {
        let boundary = "wire-\(String(UInt64.random(in: 1...UInt64.max), radix: 36))"
        let type = headers.first(name: "content-type") ?? "application/octet-stream"
        var parts: [(header: String, range: ClosedRange<Int>)] = []
        var total = 0
        for range in ranges {
            let header = "\r\n--\(boundary)\r\nContent-Type: \(type)\r\n"
                + "Content-Range: bytes \(range.lowerBound)-\(range.upperBound)/\(file.size)\r\n\r\n"
            parts.append((header, range))
            total += header.utf8.count + range.count
        }
        let closing = "\r\n--\(boundary)--\r\n"
        total += closing.utf8.count
        var head = headers
        head.replaceOrAdd(name: "Content-Type", value: "multipart/byteranges; boundary=\(boundary)")
        head.replaceOrAdd(name: "Content-Length", value: String(total))
        try await response.writeHead(HTTPResponseHead(status: .partialContent, headers: head))
        for part in parts {
            try await response.write(ByteBuffer(string: part.header))
            var offset = part.range.lowerBound
            while offset <= part.range.upperBound {
                let chunk = try file.read(at: offset, count: min(Self.chunkSize, part.range.upperBound + 1 - offset))
                guard chunk.readableBytes > 0 else { throw FileReadError(path: file.path, errno: 0) }
                try await response.write(chunk)
                offset += chunk.readableBytes
            }
        }
        try await response.write(ByteBuffer(string: closing))
        try await response.end()
    }

    /// Whether `If-Range` (RFC 9110 §13.1.5) lets the Range apply: absent, or matching the current validator.
    static func ifRangeAllows(_ ifRange: String?, etag: String, lastModified: String) -> Bool {
        guard let ifRange = ifRange?.trimmingOptionalWhitespace else { return true }
        if ifRange.hasPrefix("\"") { return ifRange == etag }
        return ifRange == lastModified
    }

    /// Whether an If-None-Match list holds `*` or `etag` (weak comparison, RFC 9110 §8.8.3.2).
    static func etagListMatches(_ list: String, _ etag: String) -> Bool {
        for item in list.split(separator: ",") {
            var tag = item.trimmingOptionalWhitespace
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag == etag { return true }
        }
        return false
    }

    static func plain(_ status: HTTPStatus, _ text: String, extra: HTTPHeaders = [:]) -> HTTPResponseHead {
        var headers: HTTPHeaders = ["Content-Type": "text/plain; charset=utf-8"]
        headers.add(contentsOf: extra)
        return HTTPResponseHead(status: status, headers: headers)
    }

    /// Decodes %XX escapes; nil for a bad escape, an encoded NUL, or bytes that are not UTF-8.
    static func percentDecode(_ text: Substring) -> String? {
        PercentEncoding.decode(text, allowingNUL: false)
    }
}

/// A failed read of a served file.
struct FileReadError: Error, CustomStringConvertible {
    let path: String
    let errno: Int32
    var description: String { "reading \(path) failed (errno \(errno), or the file shrank)" }
}

/// A regular file opened for reading at offsets. Reads block the loop briefly; served files are expected to sit in
/// the page cache, as with nginx without aio.
final class OpenFile {
    let path: String
    private let descriptor: Int32
    let size: Int
    let modifiedSeconds: Int

    init?(path: String) {
        // O_NONBLOCK: should the path have become a FIFO since it was resolved, open must not wait for a writer
        // (fstat below then refuses it); reads of a regular file are unaffected.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            Glibc.close(descriptor)
            return nil
        }
        self.path = path
        self.descriptor = descriptor
        self.size = Int(info.st_size)
        self.modifiedSeconds = Int(info.st_mtim.tv_sec)
    }

    /// Reads up to `count` bytes at `offset`.
    func read(at offset: Int, count: Int) throws -> ByteBuffer {
        guard count > 0 else { return ByteBuffer() }
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let result = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + filled, count - filled, off_t(offset + filled))
            }
            if result < 0 && errno == EINTR { continue }
            guard result >= 0 else { throw FileReadError(path: path, errno: errno) }
            if result == 0 { break }
            filled += result
        }
        bytes.removeLast(count - filled)
        return ByteBuffer(bytes: bytes)
    }

    func close() {
        Glibc.close(descriptor)
    }
}

/// Byte ranges of a `Range: bytes=…` field (RFC 9110 §14.1.2).
enum ByteRanges: Equatable {
    /// Not a bytes range we understand: serve the whole file (RFC 9110 §14.2 lets a server ignore Range).
    case ignore
    /// No range overlaps the file: 416.
    case unsatisfiable
    /// The ranges to send, clipped to the file, in request order.
    case satisfiable([ClosedRange<Int>])

    /// At most this many ranges per request; more is a denial-of-service shape (RFC 9110 §14.2), served whole.
    static let maxRanges = 16

    static func parse(_ field: String, size: Int) -> ByteRanges {
        let trimmed = field.trimmingOptionalWhitespace
        guard trimmed.lowercased().hasPrefix("bytes=") else { return .ignore }
        let specs = trimmed.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false)
        guard !specs.isEmpty, specs.count <= maxRanges else { return .ignore }
        var ranges: [ClosedRange<Int>] = []
        for spec in specs {
            let parts = spec.trimmingOptionalWhitespace.split(separator: "-", maxSplits: 1,
                                                                        omittingEmptySubsequences: false)
            guard parts.count == 2 else { return .ignore }
            let first = parts[0], last = parts[1]
            guard first.allSatisfy(\.isASCIIDigitCharacter), last.allSatisfy(\.isASCIIDigitCharacter) else {
                return .ignore
            }
            if first.isEmpty {
                // suffix-range: the last N bytes.
                guard let suffix = Int(last) else { return .ignore }
                if suffix > 0 && size > 0 { ranges.append(max(0, size - suffix)...(size - 1)) }
                continue
            }
            guard let start = Int(first) else { return .ignore }
            let end: Int
            if last.isEmpty { end = size - 1 } else {
                guard let value = Int(last), value >= start else { return .ignore }
                end = min(value, size - 1)
            }
            if start < size { ranges.append(start...end) }
        }
        return ranges.isEmpty ? .unsatisfiable : .satisfiable(ranges)
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}

/// Last-Modified and If-Modified-Since values (RFC 9110 §5.6.7), through Wire's HTTP-date.
enum HTTPDateFormat {
    static func format(seconds: Int) -> String { HTTPFieldDate.format(unixSeconds: seconds) }

    static func parse(_ text: String) -> Int? { HTTPFieldDate.parse(text.trimmingOptionalWhitespace) }
}

/// Content-Type by file extension.
enum MediaTypes {
    private static let types: [String: String] = [
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8", "css": "text/css; charset=utf-8",
        "js": "text/javascript; charset=utf-8", "mjs": "text/javascript; charset=utf-8",
        "json": "application/json", "txt": "text/plain; charset=utf-8", "md": "text/markdown; charset=utf-8",
        "xml": "application/xml", "csv": "text/csv; charset=utf-8", "svg": "image/svg+xml", "png": "image/png",
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp", "ico": "image/x-icon",
        "avif": "image/avif", "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip",
        "tar": "application/x-tar", "wasm": "application/wasm", "woff": "font/woff", "woff2": "font/woff2",
        "ttf": "font/ttf", "otf": "font/otf", "mp4": "video/mp4", "webm": "video/webm", "mp3": "audio/mpeg",
        "ogg": "audio/ogg", "wav": "audio/wav",
    ]

    static func type(forPath path: String) -> String {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return "application/octet-stream" }
        return types[path[path.index(after: dot)...].lowercased()] ?? "application/octet-stream"
    }
}
