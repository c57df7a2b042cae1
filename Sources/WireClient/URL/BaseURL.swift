import FoundationEssentials
import Wire

/// The base URL of an `HTTPSessionManager`, normalised (a non-empty path not ending in `/` gets one; the query stays),
/// and the resolution of request paths against it.
///
/// ```swift
/// let base = try BaseURL("http://example.com/v1")      // http://example.com/v1/
/// try base.resolve("foo?bar=baz")                       // http://example.com/v1/foo?bar=baz
/// try base.resolve("/foo")                              // http://example.com/foo
/// ```
package struct BaseURL: Sendable, Hashable {
    /// The normalised base: a terminal `/` added to a non-empty path that lacks one, the query kept.
    package let url: URL
    /// The normalised base as RFC 3986 components.
    package let reference: URIReference

    /// Parses and normalises a base URL.
    ///
    /// The text first goes through `escapingDisallowedBytes(_:)`. A path that is non-empty and does not end in `/`
    /// gets one (`http://h/v1?x=1` → `http://h/v1/?x=1`), so relative paths append below it as below a directory;
    /// an empty path (`http://h`) is left alone.
    /// - Parameter string: The base URL.
    /// - Throws: `.badURL` when the text is not an absolute URL with an authority (a scheme and `//host`).
    package init(_ string: String) throws(ClientError) {
        guard var parsed = URIReference(parsing: Self.escapingDisallowedBytes(string)), parsed.scheme != nil,
            let authority = parsed.authority, !authority.isEmpty
        else { throw ClientError(.badURL, failureReason: "Not an absolute URL with a host: \(string)") }
        if !parsed.path.isEmpty && !parsed.path.hasSuffix("/") { parsed.path += "/" }
        reference = parsed
        url = try Self.makeURL(parsed, from: string)
    }

    /// Resolves `reference` against the base by RFC 3986 §5.2 (strict parser, merge, dot-segment removal).
    ///
    /// The text first goes through `escapingDisallowedBytes(_:)`. An empty reference gives the base without its
    /// fragment; a fragment of the reference is kept on the URL (as NSURL keeps it) and never sent: the request
    /// target is the path and query alone.
    /// - Parameter reference: A relative or absolute reference (`foo`, `/foo`, `../x?y`, `http://other/`).
    /// - Returns: The target URL.
    /// - Throws: `.badURL` when the reference's scheme is malformed or the result is not a URL.
    package func resolve(_ reference: String) throws(ClientError) -> URL {
        guard let parsed = URIReference(parsing: Self.escapingDisallowedBytes(reference)) else {
            throw ClientError(.badURL, failureReason: "Not a URI reference: \(reference)")
        }
        return try Self.makeURL(parsed.resolved(against: self.reference), from: reference)
    }

    /// `text` with every byte that is neither unreserved, reserved (RFC 3986 §2.2) nor `%` percent-encoded as UTF-8
    /// (space → `%20`, `é` → `%C3%A9`), and every `%` not followed by two hexadecimal digits written `%25`.
    /// - Parameter text: A URL or reference as a caller wrote it.
    /// - Returns: Text made only of URI characters.
    package static func escapingDisallowedBytes(_ text: String) -> String {
        // The common case, nothing to escape and no `%` to look at: the text itself, with no copy.
        if text.utf8.allSatisfy({ uriCharacters.contains($0) }) { return text }
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        // Runs between `%` signs go through the escaper whole; each `%` stays when an escape follows it.
        var runStart = 0
        for offset in bytes.indices where bytes[offset] == UInt8(ascii: "%") {
            PercentEncoding.append(bytes[runStart..<offset], allowing: uriCharacters, to: &output)
            let escapes =
                offset + 2 < bytes.count
                && PercentEncoding.hexValue(bytes[offset + 1]) != nil && PercentEncoding.hexValue(bytes[offset + 2]) != nil
            if escapes {
                output.append(UInt8(ascii: "%"))
            } else {
                output.append(contentsOf: "%25".utf8)
            }
            runStart = offset + 1
        }
        PercentEncoding.append(bytes[runStart...], allowing: uriCharacters, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Unreserved and reserved characters: what may stand unescaped in a URI reference.
    private static let uriCharacters = PercentEncoding.AllowedBytes(unreservedAnd: ":/?#[]@!$&'()*+,;=")

    private static func makeURL(_ reference: URIReference, from original: String) throws(ClientError) -> URL {
        guard let url = URL(string: reference.description) else {
            throw ClientError(.badURL, failureReason: "Not a URL: \(original)")
        }
        return url
    }
}
