/// A file's validators (RFC 9110 §8.8) and the conditional requests that compare against them (RFC 9110 §13).
struct FileValidators {
    /// `"<mtime hex>-<size hex>"`: changes when either does.
    let etag: String
    /// The modification time as an HTTP-date.
    let lastModified: String
    private let modifiedSeconds: Int

    init(_ file: RegularFile) {
        etag = "\"\(String(file.modifiedSeconds, radix: 16))-\(String(file.size, radix: 16))\""
        lastModified = HTTPFieldDate.format(unixSeconds: file.modifiedSeconds)
        modifiedSeconds = file.modifiedSeconds
    }

    /// Whether the request's conditions make the answer `304 Not Modified`: `If-None-Match` is evaluated first, and
    /// `If-Modified-Since` only without it (RFC 9110 §13.2.2).
    func isNotModified(_ headers: HTTPHeaders) -> Bool {
        if let noneMatch = headers.first(name: "if-none-match") { return Self.etagList(noneMatch, matches: etag) }
        guard let since = headers.first(name: "if-modified-since"),
            let sinceSeconds = HTTPFieldDate.parse(since.trimmingOWS)
        else { return false }
        return modifiedSeconds <= sinceSeconds
    }

    /// Whether `If-Range` (RFC 9110 §13.1.5) lets the Range apply: absent, or matching the current validator.
    func ifRangeAllows(_ ifRange: String?) -> Bool {
        guard let ifRange = ifRange?.trimmingOWS else { return true }
        if ifRange.hasPrefix("\"") { return ifRange == etag }
        return ifRange == lastModified
    }

    /// Whether an If-None-Match list holds `*` or `etag` (weak comparison, RFC 9110 §8.8.3.2).
    static func etagList(_ list: String, matches etag: String) -> Bool {
        for item in list.split(separator: ",") {
            var tag = Substring(item.trimmingOWS)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag == etag { return true }
        }
        return false
    }
}
