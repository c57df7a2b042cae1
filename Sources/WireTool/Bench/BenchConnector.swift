import ArgumentParser
import Wire
import WireLoad
import WireTLS

/// How `wire bench` opens its connections through a proxy (`-x`, `--socks*`) or over TLS (`https://`): with Wire's own
/// client, so a bench connection meets the same `CONNECT`, SOCKS handshakes and TLS as a request does. One client per
/// bench loop, each on a group that is that loop alone, so that every connection it opens (a tunnel comes back on
/// the loop of the proxy connection that carried the `CONNECT`) lives on the loop that sends its requests.
final class BenchConnector: Sendable {
    /// The bench loops, which the run uses (`LoadGenerator.run(_:on:…)`) and `shutdown()` stops.
    let group: EventLoopGroup
    private let clients: [ObjectIdentifier: HTTPClient]
    /// The proxy the requests are forwarded to (absolute-form targets, its credentials), nil when the connections
    /// lead to the origin (direct or tunnelled).
    let forwardingProxy: Proxy?
    /// Opens one connection on the loop it is given (`LoadPlan.openStream`).
    let openStream: @Sendable (EventLoop) async throws -> LoopBound<any ByteStream>

    /// Starts `loops` loops and a client on each, for requests to `target` with `configuration`.
    init(loops: Int, target: HTTPURL, configuration: HTTPClientConfiguration) throws {
        let group = try EventLoopGroup(loopCount: loops, namePrefix: "wire-bench")
        var clients: [ObjectIdentifier: HTTPClient] = [:]
        do {
            for loop in group.loops {
                clients[ObjectIdentifier(loop)] = try HTTPClient(
                    configuration: configuration, group: EventLoopGroup(sharing: [loop]))
            }
            forwardingProxy = try clients.values.first?.forwardingProxy(for: target)
        } catch {
            group.shutdown()
            throw error
        }
        self.group = group
        self.clients = clients
        openStream = { [clients] loop in
            guard let client = clients[ObjectIdentifier(loop)] else {
                throw LoadStartError(message: "no client for the bench loop \(loop)")
            }
            return try await client.openStream(to: target).stream
        }
    }

    /// Closes what the clients still pool (connections to a proxy that refused a tunnel), then stops the loops.
    func shutdown() async {
        for client in clients.values { await client.shutdown() }
        await group.shutdownGracefully()
    }
}

extension BenchCommand {
    /// The proxy switches, checked: one of `-x` and the `--socks*` options; `-U` as `user:password`.
    func proxySettings(into settings: inout Settings) throws(ValidationError) {
        let given =
            [("-x", proxy), ("--socks4", socks4), ("--socks4a", socks4a), ("--socks5", socks5)]
            + [("--socks5-hostname", socks5Hostname)]
        let named = given.filter { $0.1 != nil }
        guard named.count <= 1 else {
            throw ValidationError("\(named.map(\.0).joined(separator: " and ")): choose one proxy")
        }
        if let proxyUser, !proxyUser.contains(":") {
            throw ValidationError("-U needs user:password (wire does not prompt for a password)")
        }
        let usesProxy = !named.isEmpty && named[0].1 != ""
        if !usesProxy, proxyTunnel || proxyUser != nil || proxyInsecure || proxyCacert != nil {
            throw ValidationError("-p, -U, --proxy-insecure and --proxy-cacert need a proxy (-x or --socks*)")
        }
        if let url = settings.url, url.unixSocketPath != nil, usesProxy {
            throw ValidationError("a Unix socket is reached directly: leave out -x and --socks*")
        }
    }

    /// The proxy of `-x` or `--socks*` with `-U`, read as curl reads it; nil for none (also `-x ""`).
    /// - Throws: `TransferFailure` as `wire get` reports the same URL: 5 for one that cannot be read, 7 for an
    ///   unknown scheme.
    func proxyValue() throws(TransferFailure) -> Proxy? {
        let choices: [(String?, Proxy.Kind)] = [
            (proxy, .http), (socks4, .socks4), (socks4a, .socks4a), (socks5, .socks5), (socks5Hostname, .socks5h),
        ]
        guard let (text, kind) = choices.first(where: { $0.0 != nil }).map({ ($0.0!, $0.1) }), !text.isEmpty else {
            return nil
        }
        let credentials = proxyUser.flatMap { value -> ProxyCredentials? in
            guard let colon = value.firstIndex(of: ":") else { return nil }
            return ProxyCredentials(user: String(value[..<colon]), password: String(value[value.index(after: colon)...]))
        }
        do {
            return try Proxy(parsing: text, defaultKind: kind, credentials: credentials)
        } catch {
            switch error {
            case .unsupportedScheme:
                throw TransferFailure(status: ExitStatus.couldNotConnect, message: "Unsupported proxy scheme for '\(text)'")
            case .malformed(let reason):
                throw TransferFailure(
                    status: ExitStatus.unknownProxy, message: "Unsupported proxy syntax in '\(text)': \(reason)")
            }
        }
    }

    /// Wire's clients for the run, when the target is `https` or a proxy is given; nil for plain `http` straight to
    /// the server (the engine's own connections, no task).
    func makeConnector(_ settings: Settings, target: HTTPURL) throws -> BenchConnector? {
        let proxy = try proxyValue()
        guard proxy != nil || target.isTLS else { return nil }
        var configuration = HTTPClientConfiguration()
        configuration.proxy = proxy.map { .proxy($0) } ?? .none
        configuration.tunnelsThroughHTTPProxy = proxyTunnel
        configuration.connectTimeout = LoadPlan(addresses: [], host: "", port: 0, request: ByteBuffer()).connectTimeout
        // The proxy's pool holds at most one connection per bench connection (a tunnel leaves it once open).
        configuration.maxConnectionsPerHost = max(configuration.maxConnectionsPerHost, connections)
        var tls = TLSConfiguration()
        if let cacert { tls.trustRoots = .pemFile(cacert) }
        if insecure { tls.waiveVerification() }
        configuration.tls = tls
        var proxyTLS = TLSConfiguration()
        if let proxyCacert { proxyTLS.trustRoots = .pemFile(proxyCacert) }
        if proxyInsecure { proxyTLS.waiveVerification() }
        configuration.proxyTLS = proxyTLS
        return try BenchConnector(loops: loops, target: target, configuration: configuration)
    }
}
