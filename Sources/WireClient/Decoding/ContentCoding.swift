import Wire

/// A content coding of `Content-Encoding` (RFC 9110 §8.4.1) that WireClient decodes.
public enum ContentCoding: String, Sendable, Hashable, CaseIterable {
    /// No transformation: bytes pass through.
    case identity
    /// A gzip file format stream (RFC 1952); `x-gzip` is an alias. Concatenated members are decoded one after another,
    /// as zlib's gunzip and curl do.
    case gzip
    /// The zlib format (RFC 1950) or, as browsers and curl accept, a raw deflate stream (RFC 1951) without the zlib
    /// wrapper: the first two bytes tell which.
    case deflate

    /// The coding of every `Content-Encoding` field of `headers`, joined as one value (see `init(contentEncoding:)`).
    /// - Throws: `ContentDecodingError.unsupportedCoding` with the value.
    package init(headers: HTTPHeaders) throws(ContentDecodingError) {
        // The common case, no Content-Encoding at all: no list of values, no joined string.
        guard headers.contains(name: "Content-Encoding") else {
            self = .identity
            return
        }
        try self.init(contentEncoding: headers["Content-Encoding"].joined(separator: ","))
    }

    /// The coding a `Content-Encoding` field value names.
    ///
    /// A missing or empty value, and `identity` entries, mean identity; `x-gzip` means gzip. One coding besides
    /// identity is supported: a stacked value (`deflate, gzip`) throws, as does any other coding.
    /// - Parameter contentEncoding: The field's value (all `Content-Encoding` lines joined by commas), or nil.
    /// - Throws: `ContentDecodingError.unsupportedCoding` with the value.
    package init(contentEncoding: String?) throws(ContentDecodingError) {
        var found: ContentCoding?
        for token in (contentEncoding ?? "").split(separator: ",") {
            let name = token.trimmingSpacesAndTabs().lowercased()
            let coding: ContentCoding
            switch name {
            case "", "identity": continue
            case "gzip", "x-gzip": coding = .gzip
            case "deflate": coding = .deflate
            default: throw .unsupportedCoding(contentEncoding ?? "")
            }
            guard found == nil else { throw .unsupportedCoding(contentEncoding ?? "") }
            found = coding
        }
        self = found ?? .identity
    }
}
