/// An absolute `http`, `https` or `http+unix` URL, split into what a request needs.
///
/// `http+unix://%2Fvar%2Frun%2Fdocker.sock/v1/info` names a Unix socket path in the host part,
/// percent-encoded, the convention other HTTP clients use. IPv6 literals go in brackets.
public struct HTTPURL: Hashable, Sendable, CustomStringConvertible {
    /// `http`, `https` or `http+unix`.
    public let scheme: String
    /// The host as written (lower-cased; brackets removed from IPv6 literals), or the socket path.
    public let host: String
    /// The port (the scheme's default if absent); nil for Unix sockets.
    public let port: Int?
    /// The origin-form request target: path and query, at least `/`.
    public let target: String
    /// Whether the scheme is `https`.
    public var isTLS: Bool { scheme == "https" }
    /// The socket path for `http+unix`.
    public var unixSocketPath: String? { scheme == "http+unix" ? host : nil }

    /// The value for the Host header: the host, bracketed if IPv6, with the port if not default.
    public var hostHeader: String {
        if scheme == "http+unix" { return "localhost" }
        // On the UTF-8 view: `contains(":")` on the string would break graphemes, on every request.
        let name = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        let defaultPort = scheme == "https" ? 443 : 80
        return port == defaultPort ? name : "\(name):\(port!)"
    }

    /// Parses `text`.
    ///
    /// - Throws: `HTTPClientError` with code `.invalidURL` naming what is wrong.
    public init(_ text: String) throws(HTTPClientError) {
        func invalid(_ why: String) -> HTTPClientError { .invalidURL(text, why) }
        guard let separator = Self.schemeSeparator(in: text) else { throw invalid("no scheme") }
        let scheme = Self.asciiLowercased(text[..<separator])
        guard scheme == "http" || scheme == "https" || scheme == "http+unix" else {
            throw invalid("unsupported scheme \(scheme)")
        }
        // The delimiters are ASCII bytes (RFC 3986 §2.2), found in the UTF-8 view: a search by
        // Character would pay for grapheme breaking on every request.
        var rest = text[text.utf8.index(separator, offsetBy: 3)...]
        if let fragment = rest.utf8.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<fragment] }
        let authorityEnd = rest.utf8.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        var target = String(rest[authorityEnd...])
        if target.isEmpty || target.utf8.first == UInt8(ascii: "?") { target = "/" + target }
        guard !target.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw invalid("spaces or control characters in the path")
        }
        if let at = authority.utf8.lastIndex(of: UInt8(ascii: "@")) { authority = authority[authority.utf8.index(after: at)...] }
        guard !authority.isEmpty else { throw invalid("no host") }

        if scheme == "http+unix" {
            guard let path = Self.percentDecoded(String(authority)), path.hasPrefix("/") || path.hasPrefix(".") else {
                throw invalid("the host of an http+unix URL must be a percent-encoded socket path")
            }
            self.scheme = scheme
            self.host = path
            self.port = nil
            self.target = target
            return
        }

        var host: Substring
        var portText: Substring?
        if authority.utf8.first == UInt8(ascii: "[") {
            guard let close = authority.utf8.firstIndex(of: UInt8(ascii: "]")) else { throw invalid("unclosed IPv6 bracket") }
            host = authority[authority.utf8.index(after: authority.startIndex)..<close]
            let after = authority[authority.utf8.index(after: close)...]
            if !after.isEmpty {
                guard after.utf8.first == UInt8(ascii: ":") else { throw invalid("junk after IPv6 literal") }
                portText = after[after.utf8.index(after: after.startIndex)...]
            }
        } else if let colon = authority.utf8.lastIndex(of: UInt8(ascii: ":")) {
            host = authority[..<colon]
            portText = authority[authority.utf8.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw invalid("no host") }
        guard host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "\\") }) else {
            throw invalid("invalid character in host")
        }
        let defaultPort = scheme == "https" ? 443 : 80
        var port = defaultPort
        if let portText, !portText.isEmpty {
            guard portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(portText), (1...65535).contains(value)
            else {
                throw invalid("invalid port \(portText)")
            }
            port = value
        }
        self.scheme = scheme
        self.host = Self.asciiLowercased(host)
        self.port = port
        self.target = target
    }

    /// This URL with `target` as its request target, sent as given instead of the URL's path and query (curl's
    /// `--request-target`: `*` for `OPTIONS *`, an absolute form, a path no URL spells). The caller checks it; the
    /// serializer still refuses spaces and control bytes.
    package func replacingTarget(_ target: String) -> HTTPURL {
        HTTPURL(scheme: scheme, host: host, port: port, target: target)
    }

    private init(scheme: String, host: String, port: Int?, target: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.target = target
    }

    /// Resolves a `Location` value against this URL (RFC 9110 §10.2.2, RFC 3986 §5).
    public func resolving(_ reference: String) throws(HTTPClientError) -> HTTPURL {
        if Self.schemeSeparator(in: reference) != nil { return try HTTPURL(reference) }
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

    /// Whether two URLs share scheme, host and port (RFC 6454 origin).
    public func isSameOrigin(as other: HTTPURL) -> Bool {
        scheme == other.scheme && host == other.host && port == other.port
    }

    /// `text` lower-cased; as it is when it has no upper-case ASCII letter (the usual case: no Unicode case mapping
    /// and no new string per request). Anything else goes through `lowercased()`, as before.
    private static func asciiLowercased(_ text: Substring) -> String {
        let needsMapping = text.utf8.contains { ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) || $0 >= 0x80 }
        return needsMapping ? text.lowercased() : String(text)
    }

    /// The index of `://` after a valid scheme name (RFC 3986 §3.1), if any.
    static func schemeSeparator(in text: String) -> String.Index? {
        let bytes = text.utf8
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: ":") {
                return bytes[index...].starts(with: "://".utf8) && index != bytes.startIndex ? index : nil
            }
            let isSchemeByte =
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: ".")
            guard isSchemeByte else { return nil }
            index = bytes.index(after: index)
        }
        return nil
    }

    static func percentDecoded(_ text: String) -> String? {
        PercentEncoding.decode(text)
    }

    static func percentEncodedPath(_ path: String) -> String {
        PercentEncoding.encode(path, allowing: .unreserved)
    }
}
