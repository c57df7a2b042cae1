/// Why a proxy URL was refused. The description never repeats the URL, which may hold a password.
public enum ProxyURLError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The scheme names no kind of proxy (curl: "Unsupported proxy scheme", exit code 7). The known ones are
    /// `http`, `https`, `socks4`, `socks` (SOCKS 4), `socks4a`, `socks5` and `socks5h`. A URL without a scheme whose
    /// host starts with `ftp.`, `dict.`, `ldap.`, `imap.`, `smtp.` or `pop3.` is taken to have that scheme, as curl
    /// guesses it, and refused too.
    case unsupportedScheme(String)
    /// The text is not a URL (curl: "Unsupported proxy syntax", exit code 5).
    case malformed(Reason)

    /// What is wrong with a malformed proxy URL.
    public enum Reason: Hashable, Sendable, CustomStringConvertible {
        /// There is no host.
        case noHost
        /// The scheme is followed by no slash or by more than three.
        case slashes
        /// A control character or a space.
        case invalidCharacter
        /// The port is not a decimal number up to 65535 (or is empty in a URL without a scheme).
        case invalidPort
        /// The host holds a character a host name cannot have.
        case invalidHost
        /// A bracketed IPv6 literal is not one (or its zone is empty or longer than 15 characters).
        case invalidIPv6Literal
        /// The user name or password decodes to a control character or to bytes that are not UTF-8.
        case invalidCredentials

        /// A few words.
        public var description: String {
            switch self {
            case .noHost: "no host"
            case .slashes: "one to three slashes must follow the scheme"
            case .invalidCharacter: "a control character or a space"
            case .invalidPort: "the port is not a number from 0 to 65535"
            case .invalidHost: "the host holds a character no host name has"
            case .invalidIPv6Literal: "the bracketed IPv6 address is not one"
            case .invalidCredentials: "the user name or password is not UTF-8 text without control characters"
            }
        }
    }

    /// One line, without the URL.
    public var description: String {
        switch self {
        case .unsupportedScheme(let scheme): "unsupported proxy scheme '\(scheme)'"
        case .malformed(let reason): "malformed proxy URL: \(reason)"
        }
    }
}

extension Proxy {
    /// Reads a proxy URL as curl 7.88 does (`-x`, `CURLOPT_PROXY`, the `*_proxy` variables).
    ///
    /// - The scheme is optional: without one the URL is `http://`, unless its host starts with `ftp.`, `dict.`,
    ///   `ldap.`, `imap.`, `smtp.` or `pop3.`, which curl takes for that scheme (and then refuses). Schemes are read
    ///   without regard to case; one to three slashes follow.
    /// - `http://` means `defaultKind` (curl's `CURLOPT_PROXYTYPE`: `--socks5 http://host` is a SOCKS 5 proxy).
    /// - The port defaults to 443 for an HTTPS proxy, 1080 for every other kind.
    /// - `user:password@` before the host is percent-decoded and wins over `credentials`; a user without a
    ///   password has the empty password.
    /// - The host may be a name (percent-decoded), an IPv4 address in any of the forms curl's URL parser accepts
    ///   (`127.1`, `0x7f.0.0.1`, `2130706433`; kept as a dotted quad), or an IPv6 literal in brackets, optionally
    ///   with a zone (`[fe80::1%eth0]`), kept without brackets in its shortest form. A path, query or fragment
    ///   after it is ignored.
    ///
    /// - Parameters:
    ///   - text: The URL.
    ///   - defaultKind: The kind an `http://` URL (or one without a scheme) stands for. Default `.http`.
    ///   - credentials: Credentials given apart from the URL (curl's `-U`), used when the URL has none.
    /// - Throws: `ProxyURLError`: `.unsupportedScheme` for a scheme naming no proxy kind, `.malformed` for text
    ///   that is not a URL.
    public init(parsing text: String, defaultKind: Kind = .http, credentials: ProxyCredentials? = nil)
        throws(ProxyURLError)
    {
        let parsed = try ProxyURLParser.parse(Array(text.utf8))
        let kind: Kind
        switch parsed.scheme {
        case "http": kind = defaultKind
        case "https": kind = .https
        case "socks5h": kind = .socks5h
        case "socks5": kind = .socks5
        case "socks4a": kind = .socks4a
        case "socks4", "socks": kind = .socks4
        default: throw .unsupportedScheme(parsed.scheme)
        }
        self.init(
            kind: kind, host: parsed.host, port: parsed.port ?? kind.defaultPort,
            credentials: parsed.credentials ?? credentials)
    }
}

/// The syntax of a proxy URL, as curl 7.88's URL parser reads it with `CURLU_NON_SUPPORT_SCHEME` and
/// `CURLU_GUESS_SCHEME` (lib/urlapi.c), written from that reading.
enum ProxyURLParser {
    struct Parsed {
        /// Lower case; guessed when the URL has none.
        var scheme: String
        var host: String
        var port: Int?
        var credentials: ProxyCredentials?
    }

    /// A scheme is at most this long (curl's `MAX_SCHEME_LEN`).
    private static let maximumSchemeLength = 40

    static func parse(_ bytes: [UInt8]) throws(ProxyURLError) -> Parsed {
        // Control characters and spaces are refused in every part of the URL (curl's `junkscan`).
        guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: " ") }) else {
            throw .malformed(.invalidCharacter)
        }
        var scheme: String?
        var index = 0
        let schemeLength = bytes.prefix(maximumSchemeLength).prefix(while: isSchemeByte).count
        if schemeLength > 0, schemeLength + 1 < bytes.count, bytes[schemeLength] == UInt8(ascii: ":"),
            bytes[schemeLength + 1] == UInt8(ascii: "/")
        {
            scheme = String(decoding: bytes[..<schemeLength].map(asciiLowercased), as: UTF8.self)
            index = schemeLength + 1
            let slashes = bytes[index...].prefix(4).prefix(while: { $0 == UInt8(ascii: "/") }).count
            guard (1...3).contains(slashes) else { throw .malformed(.slashes) }
            index += slashes
            // A file: URL has no host to connect to: curl parses it and then refuses the scheme.
            if scheme == "file" { throw .unsupportedScheme("file") }
        }
        let rest = bytes[index...]
        let authority = rest.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        guard !authority.isEmpty else { throw .malformed(.noHost) }

        var hostAndPort = authority
        var credentials: ProxyCredentials?
        if let at = authority.firstIndex(of: UInt8(ascii: "@")) {
            let login = authority[..<at]
            hostAndPort = authority[(at + 1)...]
            let colon = login.firstIndex(of: UInt8(ascii: ":"))
            let user = login[..<(colon ?? login.endIndex)]
            let password = colon.map { login[($0 + 1)...] } ?? []
            guard let user = decodedText(user), let password = decodedText(password) else {
                throw .malformed(.invalidCredentials)
            }
            credentials = ProxyCredentials(user: user, password: password)
        }

        var host = hostAndPort
        var port: Int?
        let portStart: Int?
        if hostAndPort.first == UInt8(ascii: "[") {
            guard let close = hostAndPort.firstIndex(of: UInt8(ascii: "]")) else { throw .malformed(.invalidIPv6Literal) }
            if close + 1 < hostAndPort.endIndex {
                guard hostAndPort[close + 1] == UInt8(ascii: ":") else { throw .malformed(.invalidPort) }
                portStart = close + 1
            } else {
                portStart = nil
            }
        } else {
            portStart = hostAndPort.firstIndex(of: UInt8(ascii: ":"))
        }
        if let portStart {
            host = hostAndPort[..<portStart]
            let digits = hostAndPort[(portStart + 1)...]
            if digits.isEmpty {
                // A colon with no digits means the default port, but only in a URL with a scheme.
                guard scheme != nil else { throw .malformed(.invalidPort) }
            } else {
                guard digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                    throw .malformed(.invalidPort)
                }
                var value = 0
                for digit in digits {
                    value = value * 10 + Int(digit - UInt8(ascii: "0"))
                    guard value <= 65535 else { throw .malformed(.invalidPort) }
                }
                port = value
            }
        }
        guard !host.isEmpty else { throw .malformed(.noHost) }

        let hostText: String
        if let quad = IPv4Literal.curlNormalized(host) {
            hostText = quad
        } else if host.first == UInt8(ascii: "[") {
            hostText = try ipv6Literal(host)
        } else {
            // Only a name is percent-decoded, and curl refuses control characters in what it decodes to.
            let decoded = PercentEncoding.decodeBytesLeniently(utf8: host)
            guard !decoded.contains(where: { $0 < 0x20 || $0 == 0x7F }),
                !decoded.contains(where: { forbiddenInHost.contains($0) })
            else { throw .malformed(.invalidHost) }
            hostText = String(decoding: decoded, as: UTF8.self)
        }

        if scheme == nil {
            // curl's legacy guess from the host's first label.
            let lower = hostText.utf8.prefix(5).map(asciiLowercased)
            for guess in ["ftp", "dict", "ldap", "imap", "smtp", "pop3"] where lower.starts(with: Array((guess + ".").utf8)) {
                throw .unsupportedScheme(guess)
            }
        }
        return Parsed(scheme: scheme ?? "http", host: hostText, port: port, credentials: credentials)
    }

    /// `[address]` or `[address%zone]` (the zone may be written `%25zone`), as curl's `hostname_check` reads it:
    /// the address without brackets, shortened when `inet_ntop` writes it shorter, the zone kept after `%`.
    private static func ipv6Literal(_ bracketed: ArraySlice<UInt8>) throws(ProxyURLError) -> String {
        guard bracketed.count >= 4, bracketed.last == UInt8(ascii: "]") else { throw .malformed(.invalidIPv6Literal) }
        let inner = bracketed.dropFirst().dropLast()
        let addressBytes = inner.prefix { isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }
        var zone: ArraySlice<UInt8> = []
        if addressBytes.count != inner.count {
            guard inner[addressBytes.endIndex] == UInt8(ascii: "%") else { throw .malformed(.invalidIPv6Literal) }
            zone = inner[(addressBytes.endIndex + 1)...]
            if zone.starts(with: "25".utf8), zone.count > 2 { zone = zone.dropFirst(2) }
            guard (1...15).contains(zone.count), !zone.contains(UInt8(ascii: "]")) else {
                throw .malformed(.invalidIPv6Literal)
            }
        }
        let written = String(decoding: addressBytes, as: UTF8.self)
        guard let address = try? SocketAddress(ipAddress: written, port: 0), address.family == .ipv6 else {
            throw .malformed(.invalidIPv6Literal)
        }
        let shortest = address.host.utf8.count < written.utf8.count ? address.host : written
        return zone.isEmpty ? shortest : shortest + "%" + String(decoding: zone, as: UTF8.self)
    }

    /// A user name or password, decoded; nil for a control character or bytes that are not UTF-8.
    private static func decodedText(_ bytes: ArraySlice<UInt8>) -> String? {
        let decoded = PercentEncoding.decodeBytesLeniently(utf8: bytes)
        guard !decoded.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
        return String(validating: decoded, as: UTF8.self)
    }

    /// What curl's `hostname_check` refuses in a host name.
    private static let forbiddenInHost = Set(" \r\n\t/:#?!@{}[]\\$'\"^`*<>=;,+&()".utf8)

    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }

    static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool { PercentEncoding.hexValue(byte) != nil }

    static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }
}
