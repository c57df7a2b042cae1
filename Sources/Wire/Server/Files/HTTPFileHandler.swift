/// Serves the regular files under a directory: GET and HEAD, `Content-Type` by extension, validators (`ETag`,
/// `Last-Modified`) with conditional requests (RFC 9110 §13: `If-None-Match`, `If-Modified-Since`, `If-Range`), and
/// byte ranges (RFC 9110 §14), one as `206` with `Content-Range`, several as `multipart/byteranges`.
///
/// ```swift
/// let files = try HTTPFileHandler(root: "/srv/site")
/// let server = HTTPServer(configuration: configuration, group: group, handler: files)
/// ```
///
/// A request-target maps to a file under the root after percent-decoding; a `.` or `..` segment, an encoded NUL or
/// bytes that are not UTF-8 give `404`, and so does a path whose real path (symbolic links resolved) leaves the root.
/// A directory serves its `index.html`. Only regular files are served: a FIFO or a device is never opened in a way
/// that could block. Other methods get `405` with `Allow: GET, HEAD`.
///
/// On a plain connection the kernel sends file bodies from the page cache (`sendfile(2)`); on a TLS connection they
/// are read 64 KiB at a time on the connection's loop and encrypted. A file whose body is at most 16 KiB is read and
/// sent with its head in one write. Opening a file blocks the loop briefly, as with nginx without aio.
public struct HTTPFileHandler: HTTPHandler {
    /// The root's real path (absolute, no symbolic links), without a trailing slash.
    public let root: String

    /// Bodies up to this size are read and leave with their head in one write: cheaper than a head and a
    /// `sendfile(2)`, and one segment for the peer.
    static let inlineLimit = 16 * 1024

    /// Serves the files under `root`.
    /// - Parameter root: A directory; files are served only when their real path lies under its real path.
    /// - Throws: `IOError` from `realpath(3)`, or `ENOTDIR` when `root` is not a directory.
    public init(root: String) throws(IOError) {
        let real = try LocalFiles.directoryRealPath(root)
        self.root = real == "/" ? "" : real
    }

    /// Answers a request with a file, a `304`, a `404`, a `405` or a `416`.
    /// - Parameters:
    ///   - request: The request; its body is not read.
    ///   - response: Where the answer goes.
    /// - Throws: What writing the response throws, or a read error of the file.
    public func handle(_ request: HTTPServerRequest, response: HTTPResponseWriter) async throws {
        guard request.method == .get || request.method == .head else {
            try await response.respond(
                Self.plain(.init(code: 405), extra: ["Allow": "GET, HEAD"]),
                body: ByteBuffer(string: "method not allowed\n"))
            return
        }
        guard let path = resolve(request.target), let file = try? RegularFile(path: path) else {
            try await response.respond(Self.plain(.notFound), body: ByteBuffer(string: "not found\n"))
            return
        }
        try await serve(file, request: request, response: response)
    }

    /// Maps a request-target to the real path of a regular file under the root, or nil (outside the root, malformed,
    /// missing, not a regular file).
    package func resolve(_ target: String) -> String? {
        var pathPart = Substring(target)
        if let query = pathPart.firstIndex(where: { $0 == "?" || $0 == "#" }) { pathPart = pathPart[..<query] }
        guard pathPart.hasPrefix("/"), let decoded = PercentEncoding.decode(pathPart, allowingNUL: false) else {
            return nil
        }
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
        guard let real = LocalFiles.realPath(path), real.hasPrefix(root + "/") else { return nil }
        return real
    }

    private func serve(_ file: RegularFile, request: HTTPServerRequest, response: HTTPResponseWriter) async throws {
        let validators = FileValidators(file)
        var headers: HTTPHeaders = [
            "Content-Type": MediaTypes.type(forPath: file.path),
            "Last-Modified": validators.lastModified,
            "ETag": validators.etag,
            "Accept-Ranges": "bytes",
        ]
        let requestHeaders = request.headers
        if validators.isNotModified(requestHeaders) {
            try await response.respond(HTTPResponseHead(status: .notModified, headers: headers))
            return
        }
        var ranges: [ClosedRange<Int>]? = nil
        if request.method == .get, let rangeField = requestHeaders.first(name: "range"),
            validators.ifRangeAllows(requestHeaders.first(name: "if-range"))
        {
            switch ByteRanges.parse(rangeField, size: file.size) {
            case .ignore: ranges = nil
            case .unsatisfiable:
                headers.replaceOrAdd(name: "Content-Range", value: "bytes */\(file.size)")
                try await response.respond(HTTPResponseHead(status: HTTPStatus(code: 416), headers: headers))
                return
            case .satisfiable(let parsed): ranges = parsed
            }
        }
        if request.method == .head {
            // The head a GET would have, and no read of the file.
            headers.replaceOrAdd(name: "Content-Length", value: String(file.size))
            try await response.respond(HTTPResponseHead(status: .ok, headers: headers))
            return
        }
        guard let ranges else {
            try await send(file.region(), status: .ok, headers: headers, response: response)
            return
        }
        if ranges.count == 1 {
            let range = ranges[0]
            headers.replaceOrAdd(name: "Content-Range", value: "bytes \(range.lowerBound)-\(range.upperBound)/\(file.size)")
            try await send(
                file.region(range.lowerBound..<range.upperBound + 1), status: .partialContent,
                headers: headers, response: response)
            return
        }
        try await sendMultipart(file, ranges: ranges, headers: headers, response: response)
    }

    private func send(_ region: FileRegion, status: HTTPStatus, headers: HTTPHeaders, response: HTTPResponseWriter)
        async throws
    {
        let head = HTTPResponseHead(status: status, headers: headers)
        guard region.count > Self.inlineLimit else {
            let bytes = try region.file.read(at: region.offset, upTo: region.count)
            guard bytes.readableBytes == region.count else {
                throw FileTruncatedError(path: region.file.path, offset: region.offset + bytes.readableBytes)
            }
            try await response.respond(head, body: bytes)
            return
        }
        try await response.respond(head, file: region)
    }

    private func sendMultipart(
        _ file: RegularFile, ranges: [ClosedRange<Int>], headers: HTTPHeaders, response: HTTPResponseWriter
    ) async throws {
        let boundary = "wire-\(String(UInt64.random(in: 1...UInt64.max), radix: 36))"
        let type = headers.first(name: "content-type") ?? "application/octet-stream"
        var parts: [(header: String, range: ClosedRange<Int>)] = []
        var total = 0
        for range in ranges {
            let header =
                "\r\n--\(boundary)\r\nContent-Type: \(type)\r\n"
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
            try await response.write(file.region(part.range.lowerBound..<part.range.upperBound + 1))
        }
        try await response.write(ByteBuffer(string: closing))
        try await response.end()
    }

    private static func plain(_ status: HTTPStatus, extra: HTTPHeaders = [:]) -> HTTPResponseHead {
        var headers: HTTPHeaders = ["Content-Type": "text/plain; charset=utf-8"]
        headers.add(contentsOf: extra)
        return HTTPResponseHead(status: status, headers: headers)
    }
}
