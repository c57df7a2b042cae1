/// A URI reference split into RFC 3986's five components, resolved against a base by RFC 3986 §5.2 exactly.
///
/// FoundationEssentials' `URL(string:relativeTo:)` departs from RFC 3986 on several §5.4 examples, so WireClient
/// parses, merges and removes dot segments itself, on the text, and makes a `URL` only from the result.
///
/// ```swift
/// let base = URIReference(parsing: "http://a/b/c/d;p?q")!
/// URIReference(parsing: "../g")!.resolved(against: base).description   // "http://a/b/g"
/// ```
package struct URIReference: Sendable, Hashable, CustomStringConvertible {
    /// The scheme, without its `:`; nil for a relative reference.
    package var scheme: String?
    /// The authority, without its leading `//`; nil when absent (an empty authority is `""`).
    package var authority: String?
    /// The path, possibly empty.
    package var path: String
    /// The query, without its `?`; nil when absent (an empty query is `""`).
    package var query: String?
    /// The fragment, without its `#`; nil when absent.
    package var fragment: String?

    /// Creates a reference from its components.
    /// - Parameters:
    ///   - scheme: The scheme, or nil.
    ///   - authority: The authority, or nil.
    ///   - path: The path.
    ///   - query: The query, or nil.
    ///   - fragment: The fragment, or nil.
    package init(
        scheme: String? = nil, authority: String? = nil, path: String = "", query: String? = nil, fragment: String? = nil
    ) {
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.query = query
        self.fragment = fragment
    }

    /// Splits `text` as RFC 3986 Appendix B does, then checks the scheme against RFC 3986 §3.1's grammar
    /// (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`).
    ///
    /// A first segment holding a `:` that is not a valid scheme (`1a:b`, `:x`) cannot start a relative reference
    /// (RFC 3986 §4.2), so it is refused rather than read as a path.
    /// - Parameter text: The reference.
    /// - Returns: The components, or nil when the scheme is malformed.
    package init?(parsing text: String) {
        var rest = Substring(text)
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let mark = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: mark)...])
            rest = rest[..<mark]
        }
        if let colon = rest.firstIndex(of: ":"), !rest[..<colon].contains("/") {
            let candidate = rest[..<colon]
            guard Self.isScheme(candidate) else { return nil }
            scheme = String(candidate)
            rest = rest[rest.index(after: colon)...]
        }
        if rest.hasPrefix("//") {
            let afterSlashes = rest.index(rest.startIndex, offsetBy: 2)
            let end = rest[afterSlashes...].firstIndex(of: "/") ?? rest.endIndex
            authority = String(rest[afterSlashes..<end])
            rest = rest[end...]
        }
        path = String(rest)
    }

    /// The reference written back as RFC 3986 §5.3 recomposes it.
    package var description: String {
        var result = ""
        if let scheme { result += scheme + ":" }
        if let authority { result += "//" + authority }
        result += path
        if let query { result += "?" + query }
        if let fragment { result += "#" + fragment }
        return result
    }

    /// This reference resolved against `base` by RFC 3986 §5.2.2 with a strict parser: a scheme equal to the base's
    /// is not ignored (`http:g` stays `http:g`).
    /// - Parameter base: An absolute URI (one with a scheme); its fragment is never used.
    /// - Returns: The target URI.
    package func resolved(against base: URIReference) -> URIReference {
        var target = URIReference()
        if let scheme {
            target.scheme = scheme
            target.authority = authority
            target.path = Self.removingDotSegments(path)
            target.query = query
        } else {
            if let authority {
                target.authority = authority
                target.path = Self.removingDotSegments(path)
                target.query = query
            } else {
                if path.isEmpty {
                    target.path = base.path
                    target.query = query ?? base.query
                } else {
                    if path.hasPrefix("/") {
                        target.path = Self.removingDotSegments(path)
                    } else {
                        target.path = Self.removingDotSegments(merge(onto: base))
                    }
                    target.query = query
                }
                target.authority = base.authority
            }
            target.scheme = base.scheme
        }
        target.fragment = fragment
        return target
    }

    /// RFC 3986 §5.2.3: this relative path appended to the base path's directory.
    private func merge(onto base: URIReference) -> String {
        if base.authority != nil && base.path.isEmpty { return "/" + path }
        guard let slash = base.path.lastIndex(of: "/") else { return path }
        return String(base.path[...slash]) + path
    }

    /// `path` with its `.` and `..` segments interpreted and removed (RFC 3986 §5.2.4, step by step on the input
    /// and output buffers).
    /// - Parameter path: A path.
    /// - Returns: The path without dot segments.
    package static func removingDotSegments(_ path: String) -> String {
        var input = Array(path.utf8)[...]
        var output: [UInt8] = []
        let slash = UInt8(ascii: "/")
        func starts(_ prefix: String) -> Bool { input.starts(with: prefix.utf8) }
        func equals(_ whole: String) -> Bool { input.elementsEqual(whole.utf8) }
        func dropLastOutputSegment() {
            if let last = output.lastIndex(of: slash) { output.removeSubrange(last...) } else { output.removeAll() }
        }
        while !input.isEmpty {
            if starts("../") {
                input = input.dropFirst(3)
            } else if starts("./") {
                input = input.dropFirst(2)
            } else if starts("/./") {
                input = input.dropFirst(2)
            } else if equals("/.") {
                input = [slash][...]
            } else if starts("/../") {
                input = input.dropFirst(3)
                dropLastOutputSegment()
            } else if equals("/..") {
                input = [slash][...]
                dropLastOutputSegment()
            } else if equals(".") || equals("..") {
                input = []
            } else {
                let searchStart = input.first == slash ? input.index(after: input.startIndex) : input.startIndex
                let end = input[searchStart...].firstIndex(of: slash) ?? input.endIndex
                output.append(contentsOf: input[..<end])
                input = input[end...]
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.utf8.first, isLetter(first) else { return false }
        return text.utf8.allSatisfy { isLetter($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }
}
