import Wire
import WireTLS

/// The route of each hop through the proxy switches and the environment, and what `-v` says about it.
extension Fetcher {
    /// Where one hop goes: straight, or through a proxy (with `--proxy-header`'s fields), and the `-v` line naming
    /// the environment variable it came from, as curl prints it.
    struct ProxyChoice {
        var configuration: ProxyConfiguration
        var proxy: Proxy?
        var note: String?
    }

    /// The route curl 7.88 takes to `url` with the command line's proxy switches and the process's environment. A
    /// Unix socket (`--unix-socket`) always goes direct.
    func proxyChoice(for url: HTTPURL) throws(TransferFailure) -> ProxyChoice {
        guard options.unixSocket == nil, url.unixSocketPath == nil else { return ProxyChoice(configuration: .none) }
        let environment = ProxyEnvironment.process
        let route: ProxyRoute
        do {
            route = try ProxyRoute.resolve(
                scheme: url.scheme, host: url.host, proxy: options.proxy.url, noProxy: options.proxy.noProxy,
                environment: environment, defaultKind: options.proxy.kind, credentials: options.proxy.credentials)
        } catch {
            let text = options.proxy.url ?? environment.proxyVariable(forScheme: url.scheme)?.value ?? ""
            switch error {
            case .unsupportedScheme:
                throw TransferFailure(status: ExitStatus.couldNotConnect, message: "Unsupported proxy scheme for '\(text)'")
            case .malformed(let reason):
                throw TransferFailure(
                    status: ExitStatus.unknownProxy, message: "Unsupported proxy syntax in '\(text)': \(reason)")
            }
        }
        // curl names the no_proxy variable it read whenever --noproxy is not given, then the proxy variable it used.
        var note = ""
        if options.proxy.noProxy == nil, let variable = environment.noProxyVariable {
            note = "* Uses proxy env variable \(variable.name) == '\(variable.value)'\n"
        }
        guard case .proxy(var proxy) = route else {
            return ProxyChoice(configuration: .none, note: note.isEmpty ? nil : note)
        }
        for field in options.proxy.headers { proxy.headers.add(name: field.name, value: field.value) }
        if options.proxy.url == nil, let variable = environment.proxyVariable(forScheme: url.scheme) {
            note += "* Uses proxy env variable \(variable.name) == '\(variable.value)'\n"
        }
        return ProxyChoice(configuration: .proxy(proxy), proxy: proxy, note: note.isEmpty ? nil : note)
    }

    /// The client settings of the proxy switches: `-p`, and the trust in an `https` proxy's certificate
    /// (`--proxy-cacert`, `--proxy-insecure`; the system's roots otherwise), apart from the origin's.
    static func applyProxyOptions(_ options: FetchOptions.ProxyOptions, to configuration: inout HTTPClientConfiguration) {
        configuration.tunnelsThroughHTTPProxy = options.tunnel
        var tls = TLSConfiguration()
        if let file = options.caCertificateFile { tls.trustRoots = .pemFile(file) }
        if options.insecure { tls.waiveVerification() }
        configuration.proxyTLS = tls
    }

    /// curl's `-v` lines for the proxy a hop went through: the variables read (`note`), the `CONNECT` exchange that
    /// opened a new tunnel, or the SOCKS request; nothing for a direct hop.
    static func verboseProxy(_ metrics: HTTPClientMetrics.Snapshot, url: HTTPURL, note: String?) -> String {
        var text = note ?? ""
        guard let proxy = metrics.proxy else { return text }
        let target = tunnelTarget(url)
        text += "* proxy: \(proxy)\n"
        if let connect = metrics.proxyConnect {
            text += verboseConnectExchange(
                request: connect.requestHead, response: connect.responseHead, target: target, proxy: proxy)
            text += "* CONNECT phase completed\n"
            text += "* CONNECT tunnel established, response \(connect.responseHead.status.code)\n"
        } else if proxy.kind.isSOCKS, metrics.proxyHandshake != nil {
            let version =
                switch proxy.kind {
                case .socks4: "SOCKS4"
                case .socks4a: "SOCKS4a"
                default: "SOCKS5"
                }
            let resolved = proxy.kind.resolvesNamesRemotely ? "remotely resolved" : "locally resolved"
            text += "* \(version) connect to \(target) (\(resolved))\n"
            text += "* \(version) request granted.\n"
        }
        return text
    }
}

extension Fetcher {
    /// `host:port` of the tunnel to `url`'s origin, as `CONNECT` names it.
    static func tunnelTarget(_ url: HTTPURL) -> String {
        let port = url.port ?? (url.isTLS ? 443 : 80)
        return url.host.utf8.contains(UInt8(ascii: ":")) ? "[\(url.host)]:\(port)" : "\(url.host):\(port)"
    }

    /// curl's `-v` lines for a `CONNECT` exchange: the user the credentials are for, the request as written,
    /// `Proxy-Authorization` included as curl shows it, and the proxy's answer head.
    static func verboseConnectExchange(request: [UInt8], response: HTTPResponseHead, target: String, proxy: Proxy?)
        -> String
    {
        "* Establish HTTP proxy tunnel to \(target)\n"
            + (proxy?.credentials.map { "* Proxy auth using Basic with user '\($0.user)'\n" } ?? "")
            + HeadText.verbose(HeadText.lines(ofSent: request), prefix: "> ")
            + HeadText.verbose(HeadText.lines(of: response), prefix: "< ")
    }

    /// curl's `-v` lines for a tunnel the proxy refused (a non-2xx answer to `CONNECT`): the variables read, the
    /// proxy, the exchange, and `* CONNECT tunnel failed, response N`; nil for any other failure.
    static func verboseRefusedConnect(_ error: any Error, url: HTTPURL, note: String?) -> String? {
        guard let error = error as? HTTPClientError, error.code == .proxyRefused, let response = error.proxyResponse,
            let request = error.proxyConnectRequest
        else { return nil }
        var text = note ?? ""
        if let proxy = error.proxy { text += "* proxy: \(proxy)\n" }
        text += verboseConnectExchange(request: request, response: response, target: tunnelTarget(url), proxy: error.proxy)
        text += "* CONNECT tunnel failed, response \(response.status.code)\n"
        return text
    }
}

extension TransferFailure {
    /// curl's exit status for a failure at a proxy, or nil when `error` did not happen at one: 5 when the proxy's
    /// name does not resolve, 7 when it refuses the connection, 56 for a non-2xx answer to `CONNECT`, 97 for a
    /// SOCKS failure.
    init?(atProxy error: HTTPClientError) {
        switch error.code {
        case .proxyRefused:
            let code = error.proxyResponse.map { "\($0.status.code)" } ?? "?"
            self.init(status: ExitStatus.receiveError, message: "CONNECT tunnel failed, response \(code)")
        case .proxyHandshakeFailed:
            let status = error.socksError != nil ? ExitStatus.proxyFailure : ExitStatus.receiveError
            self.init(status: status, message: "proxy handshake failed: \(error.detail)")
        case .invalidProxy:
            self.init(status: ExitStatus.couldNotConnect, message: "cannot use the proxy: \(error.detail)")
        case .connectFailed where error.proxy != nil:
            guard let proxy = error.proxy, let connect = error.connectError else { return nil }
            if connect.reason == .unknownHost, connect.host == proxy.host {
                self.init(status: ExitStatus.unknownProxy, message: "Could not resolve proxy: \(proxy.host)")
            } else {
                return nil
            }
        default:
            return nil
        }
    }
}

extension ExitStatus {
    /// CURLE_COULDNT_RESOLVE_PROXY: the proxy's name did not resolve, or its URL cannot be read.
    static let unknownProxy: Int32 = 5
    /// CURLE_PROXY: a SOCKS proxy refused or broke its handshake.
    static let proxyFailure: Int32 = 97
}
