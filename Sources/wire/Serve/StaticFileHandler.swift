import Glibc
import Wire

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

/// Last-Modified and If-Modified-Since values (RFC 9110 §5.6.7), through Wire's HTTP-date.
enum HTTPDateFormat {
    static func format(seconds: Int) -> String { HTTPFieldDate.format(unixSeconds: seconds) }

    static func parse(_ text: String) -> Int? { HTTPFieldDate.parse(text.trimmingOptionalWhitespace) }
}
