/// An absolute `http`, `https` or `http+unix` URL, split into what a request needs.
///
/// `http+unix://%2Fvar%2Frun%2Fdocker.sock/v1/info` names a Unix socket path in the host part,
/// percent-encoded, the convention other HTTP clients use. IPv6 literals go in brackets.
public struct HTTPURL: Hashable, Sendable, CustomStringConvertible {
    /// The parts, behind one reference: a URL is copied several times on a request's way (into the request, the
    /// retry loop, the pool's lookup, a cache), and a copy is then one retain instead of one per string.
    private final class Parts: Sendable {
        let scheme: String
        let host: String
        let port: Int?
        let target: String

        init(scheme: String, host: String, port: Int?, target: String) {
            self.scheme = scheme
            self.host = host
            self.port = port
            self.target = target
        }
    }

    private let parts: Parts

    /// `http`, `https` or `http+unix`.
    public var scheme: String { parts.scheme }
    /// The host as written (lower-cased; brackets removed from IPv6 literals), or the socket path.
    public var host: String { parts.host }
    /// The port (the scheme's default if absent); nil for Unix sockets.
    public var port: Int? { parts.port }
    /// The origin-form request target: path and query, at least `/`.
    public var target: String { parts.target }
    /// Whether the scheme is `https`.
    public var isTLS: Bool { scheme == "https" }
    /// The socket path for `http+unix`.
    public var unixSocketPath: String? { scheme == "http+unix" ? host : nil }

    /// The value for the Host header: the host, bracketed if IPv6, with the port if not default.
    public var hostHeader: String { Self.hostHeader(scheme: scheme, host: host, port: port) }

    /// `hostHeader` of a URL with this scheme, host and port (a pool of connections to one origin works it out once).
    package static func hostHeader(scheme: String, host: String, port: Int?) -> String {
        if scheme == "http+unix" { return "localhost" }
        // On the UTF-8 view: `contains(":")` on the string would break graphemes. Off the hot path: a pool straight
        // to one origin works this out once (`ConnectionPool.originHostHeader`).
        let name = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        guard let port, port != (scheme == "https" ? 443 : 80) else { return name }
        return "\(name):\(port)"
    }

    /// Parses `text`.
    ///
    /// - Throws: `HTTPClientError` with code `.invalidURL` naming what is wrong.
    public init(_ text: String) throws(HTTPClientError) {
        // One pass over the UTF-8 bytes finds every delimiter (all ASCII, RFC 3986 §2.2) by offset; strings are made
        // only for the host and the target, and the scheme is one of three literals. Every request parses its URL,
        // so this is on the client's hot path.
        func invalid(_ why: String) -> HTTPClientError { .invalidURL(text, why) }
        let bytes = text.utf8.span
        guard let separator = Self.schemeSeparator(in: bytes) else { throw invalid("no scheme") }
        guard let scheme = Self.knownScheme(bytes, upTo: separator) else {
            throw invalid("unsupported scheme \(Self.asciiLowercased(Self.slice(bytes, 0, separator)))")
        }
        // The authority runs to the first `/`, `?` or `#`; the target from there to the first `#` (the fragment goes).
        // One pass each, the last `@` found on the way: user information before it is not part of the host.
        var authorityStart = separator + 3
        var authorityEnd = authorityStart
        while authorityEnd < bytes.count {
            let byte = bytes[authorityEnd]
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
            if byte == UInt8(ascii: "@") { authorityStart = authorityEnd + 1 }
            authorityEnd += 1
        }
        var end = authorityEnd
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "#") { break }
            if byte <= 0x20 || byte == 0x7F { throw invalid("spaces or control characters in the path") }
            end += 1
        }
        let target: String
        if authorityEnd == end {
            target = "/"
        } else if bytes[authorityEnd] == UInt8(ascii: "?") {
            target = "/" + Self.slice(bytes, authorityEnd, end)
        } else {
            target = Self.slice(bytes, authorityEnd, end)
        }
        guard authorityStart < authorityEnd else { throw invalid("no host") }

        if scheme == "http+unix" {
            guard let path = Self.percentDecoded(Self.slice(bytes, authorityStart, authorityEnd)),
                path.hasPrefix("/") || path.hasPrefix(".")
            else {
                throw invalid("the host of an http+unix URL must be a percent-encoded socket path")
            }
            self.init(scheme: scheme, host: path, port: nil, target: target)
            return
        }

        var hostStart = authorityStart
        var hostEnd = authorityEnd
        var portStart: Int? = nil
        if bytes[authorityStart] == UInt8(ascii: "[") {
            var close = authorityStart + 1
            while close < authorityEnd && bytes[close] != UInt8(ascii: "]") { close += 1 }
            guard close < authorityEnd else { throw invalid("unclosed IPv6 bracket") }
            hostStart = authorityStart + 1
            hostEnd = close
            if close + 1 < authorityEnd {
                guard bytes[close + 1] == UInt8(ascii: ":") else { throw invalid("junk after IPv6 literal") }
                portStart = close + 2
            }
        } else {
            var colon = authorityEnd
            while colon > authorityStart && bytes[colon - 1] != UInt8(ascii: ":") { colon -= 1 }
            if colon > authorityStart {
                hostEnd = colon - 1
                portStart = colon
            }
        }
        guard hostStart < hostEnd else { throw invalid("no host") }
        var hasUpperCase = false
        for index in hostStart..<hostEnd {
            let byte = bytes[index]
            guard byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "/") && byte != UInt8(ascii: "\\") else {
                throw invalid("invalid character in host")
            }
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { hasUpperCase = true }
        }
        var port = scheme == "https" ? 443 : 80
        if let portStart, portStart < authorityEnd {
            var value = 0
            for index in portStart..<authorityEnd {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit <= 9 else { throw invalid("invalid port \(Self.slice(bytes, portStart, authorityEnd))") }
                // Leading zeros are allowed; any value past 65535 stays past it.
                value = min(value * 10 + Int(digit), 65536)
            }
            guard (1...65535).contains(value) else {
                throw invalid("invalid port \(Self.slice(bytes, portStart, authorityEnd))")
            }
            port = value
        }
        let host = Self.slice(bytes, hostStart, hostEnd)
        self.init(scheme: scheme, host: hasUpperCase ? host.lowercased() : host, port: port, target: target)
    }

    /// This URL with `target` as its request target, sent as given instead of the URL's path and query (curl's
    /// `--request-target`: `*` for `OPTIONS *`, an absolute form, a path no URL spells). The caller checks it; the
    /// serializer still refuses spaces and control bytes.
    package func replacingTarget(_ target: String) -> HTTPURL {
        HTTPURL(scheme: scheme, host: host, port: port, target: target)
    }

    private init(scheme: String, host: String, port: Int?, target: String) {
        parts = Parts(scheme: scheme, host: host, port: port, target: target)
    }

    /// Equal when scheme, host, port and target are (the strings by `==`, as a struct of the four would compare).
    public static func == (lhs: HTTPURL, rhs: HTTPURL) -> Bool {
        lhs.parts === rhs.parts
            || (lhs.port == rhs.port && lhs.target == rhs.target && lhs.host == rhs.host && lhs.scheme == rhs.scheme)
    }

    /// Hashes scheme, host, port and target.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(parts.scheme)
        hasher.combine(parts.host)
        hasher.combine(parts.port)
        hasher.combine(parts.target)
    }

    /// Resolves a `Location` value against this URL (RFC 9110 §10.2.2, RFC 3986 §5).
    public func resolving(_ reference: String) throws(HTTPClientError) -> HTTPURL {
        if Self.hasScheme(reference) { return try HTTPURL(reference) }
        let origin = "\(scheme)://\(scheme == "http+unix" ? Self.percentEncodedPath(host) : hostHeader)"
        if reference.hasPrefix("//") { return try HTTPURL("\(scheme):\(reference)") }
        if reference.hasPrefix("/") { return try HTTPURL(origin + reference) }
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let directory = path.lastIndex(of: "/").map { path[...$0] } ?? "/"
        if reference.hasPrefix("?") { return try HTTPURL(origin + path + reference) }
        return try HTTPURL(origin + directory + reference)
    }

    /// The URL as text.
    public var description: String {
        if scheme == "http+unix" { return "http+unix://\(Self.percentEncodedPath(host))\(target)" }
        return "\(scheme)://\(hostHeader)\(target)"
    }

    /// Whether `other` has the same scheme, host, port and target byte for byte: what decides that two requests are
    /// written alike (`==` compares the strings by canonical equivalence, which a target's raw bytes must not be).
    package func hasSameBytes(as other: HTTPURL) -> Bool {
        // Copies of one parsed URL (a request repeating the last one's URL) share their parts.
        if parts === other.parts { return true }
        return port == other.port && target.hasSameUTF8(as: other.target) && host.hasSameUTF8(as: other.host)
            && scheme.hasSameUTF8(as: other.scheme)
    }

    /// Whether two URLs share scheme, host and port (RFC 6454 origin).
    public func isSameOrigin(as other: HTTPURL) -> Bool {
        scheme == other.scheme && host == other.host && port == other.port
    }

    /// `text` lower-cased; as it is when it has no upper-case ASCII letter (no Unicode case mapping then).
    private static func asciiLowercased(_ text: String) -> String {
        let needsMapping = text.utf8.contains { ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) || $0 >= 0x80 }
        return needsMapping ? text.lowercased() : text
    }

    /// The bytes from offset `start` up to `end` of a string's UTF-8, as a string. The offsets fall on ASCII delimiters, so on
    /// character boundaries.
    private static func slice(_ bytes: Span<UInt8>, _ start: Int, _ end: Int) -> String {
        // Straight from the bytes: a string of up to 15 bytes is made small, with no allocation (a Substring of the
        // UTF-8 view took ten times the instructions, and this runs twice per request).
        bytes.extracting(start..<end).withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
    }

    /// `http`, `https` or `http+unix` when the bytes before `end` spell one of them in any case; nil otherwise.
    private static func knownScheme(_ bytes: Span<UInt8>, upTo end: Int) -> String? {
        // `| 0x20` folds ASCII letters to lower case; `+` (0x2B) is unchanged by it and no other scheme byte maps to it.
        // Compared byte by byte with the letters: iterating a literal's UTF-8 view cost ten times as much.
        func spellsHTTP() -> Bool {
            bytes[0] | 0x20 == UInt8(ascii: "h") && bytes[1] | 0x20 == UInt8(ascii: "t")
                && bytes[2] | 0x20 == UInt8(ascii: "t") && bytes[3] | 0x20 == UInt8(ascii: "p")
        }
        switch end {
        case 4: return spellsHTTP() ? "http" : nil
        case 5: return spellsHTTP() && bytes[4] | 0x20 == UInt8(ascii: "s") ? "https" : nil
        case 9:
            guard spellsHTTP(), bytes[4] == UInt8(ascii: "+"), bytes[5] | 0x20 == UInt8(ascii: "u"),
                bytes[6] | 0x20 == UInt8(ascii: "n"), bytes[7] | 0x20 == UInt8(ascii: "i"),
                bytes[8] | 0x20 == UInt8(ascii: "x")
            else { return nil }
            return "http+unix"
        default: return nil
        }
    }

    /// The offset of `://` after a valid scheme name (RFC 3986 §3.1), if any.
    private static func schemeSeparator(in bytes: Span<UInt8>) -> Int? {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ":") {
                guard index != 0, index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "/"),
                    bytes[index + 2] == UInt8(ascii: "/")
                else { return nil }
                return index
            }
            let isSchemeByte =
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: ".")
            guard isSchemeByte else { return nil }
            index += 1
        }
        return nil
    }

    /// Whether `text` starts with a scheme name and `://`.
    static func hasScheme(_ text: String) -> Bool { schemeSeparator(in: text.utf8.span) != nil }

    /// The scheme name before `://`, as written, if `text` starts with one.
    static func schemeName(of text: String) -> String? {
        schemeSeparator(in: text.utf8.span).map { slice(text.utf8.span, 0, $0) }
    }

    static func percentDecoded(_ text: String) -> String? {
        PercentEncoding.decode(text)
    }

    static func percentEncodedPath(_ path: String) -> String {
        PercentEncoding.encode(path, allowing: .unreserved)
    }
}
