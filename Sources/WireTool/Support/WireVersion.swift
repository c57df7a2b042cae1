import Wire

/// What `wire --version`, `wire get -V` and `wire get --version` print, in curl's `-V` shape: the tool and library
/// versions, then the protocols and features.
enum WireVersion {
    /// The tool's version: the library's, from the `User-Agent` Wire sends (`Wire/0.1`).
    static let number: String = {
        let agent = HTTPClientConfiguration().userAgent ?? "Wire/0.1"
        return agent.split(separator: "/").last.map(String.init) ?? "0.1"
    }()

    /// The lines, each with its line end.
    static var text: String {
        """
        wire \(number) (Linux) Wire/\(number) OpenSSL zlib
        Protocols: http https http+unix
        Features: HTTP1.1 Keep-Alive Pipelining TLS libz UnixSockets Cookies Netrc Resume Retry Cache

        """
    }
}
