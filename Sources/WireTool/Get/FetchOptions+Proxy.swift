import Wire

extension FetchOptions {
    /// curl's proxy switches (`-x`, `--noproxy`, `-U`, `--socks*`, `-p`, `--proxy-*`). Without `-x` or a
    /// `--socks*` switch the environment names the proxy, as curl 7.88 reads it (`ProxyRoute.resolve`).
    struct ProxyOptions: Equatable, Sendable {
        /// The proxy's URL from `-x` or a `--socks*` switch, the last one given; nil follows the environment, and
        /// an empty one (`-x ""`) means no proxy at all.
        var url: String?
        /// What a proxy URL without a scheme, or with `http://`, stands for: `.http` after `-x`, the SOCKS kind
        /// after `--socks4`, `--socks4a`, `--socks5` or `--socks5-hostname` (curl's proxy type).
        var kind: Proxy.Kind = .http
        /// `--noproxy LIST`: the hosts that go direct, in place of the environment's `no_proxy` (even empty).
        var noProxy: String?
        /// `-U user:password`: the proxy's credentials, unless its URL has its own.
        var credentials: ProxyCredentials?
        /// `-p`/`--proxytunnel`: `http` URLs too go through a `CONNECT` tunnel instead of being forwarded.
        var tunnel = false
        /// `--proxy-insecure`: an `https` proxy's certificate is not verified.
        var insecure = false
        /// `--proxy-cacert FILE`: the roots an `https` proxy's certificate is verified with.
        var caCertificateFile: String?
        /// `--proxy-header`: fields for the proxy (on `CONNECT`, and added to forwarded requests), in order.
        var headers: [HeaderField] = []
    }

    /// Sets the proxy flag spelled `word`; false when `word` is not one.
    mutating func setProxyFlag(_ word: String) -> Bool {
        switch word {
        case "-p", "--proxytunnel": proxy.tunnel = true
        case "--proxy-insecure": proxy.insecure = true
        // Basic is the only scheme Wire sends to a proxy, as -U's default is in curl.
        case "--proxy-basic", "--proxy-anyauth": break
        default: return false
        }
        return true
    }

    /// The proxy options that take a value, long spellings first.
    static let proxyValued: [String: String] = [
        "-x": "--proxy", "--proxy": "--proxy", "--noproxy": "--noproxy", "-U": "--proxy-user",
        "--proxy-user": "--proxy-user", "--socks4": "--socks4", "--socks4a": "--socks4a", "--socks5": "--socks5",
        "--socks5-hostname": "--socks5-hostname", "--proxy-cacert": "--proxy-cacert", "--proxy-header": "--proxy-header",
    ]

    /// Sets the proxy option `name` (its long spelling) to `value`.
    mutating func applyProxy(_ name: String, _ value: String) throws(FetchUsageError) {
        switch name {
        case "--proxy":
            // curl: -x sets the proxy and makes its type HTTP again, whatever --socks* said before.
            proxy.url = value
            proxy.kind = .http
        case "--socks4", "--socks4a", "--socks5", "--socks5-hostname":
            // As -x, with the type the switch names (the last of -x and these wins, as in curl 7.88).
            proxy.url = value
            proxy.kind =
                switch name {
                case "--socks4": .socks4
                case "--socks4a": .socks4a
                case "--socks5": .socks5
                default: .socks5h
                }
        case "--noproxy":
            proxy.noProxy = value
        case "--proxy-user":
            // curl would prompt for a missing password; a tool run from scripts asks for it outright.
            guard let colon = value.firstIndex(of: ":") else {
                throw FetchUsageError(message: "-U needs user:password (wire does not prompt for a password)")
            }
            proxy.credentials = ProxyCredentials(
                user: String(value[..<colon]), password: String(value[value.index(after: colon)...]))
        case "--proxy-cacert":
            proxy.caCertificateFile = try Self.file(value, option: name)
        case "--proxy-header":
            // curl ignores a --proxy-header without a colon or with an empty value (it has no removal form here).
            if case .send(let field) = try Self.headerLine(value) { proxy.headers.append(field) }
        default:
            throw FetchUsageError(message: "option \(name) is not supported")
        }
    }
}
