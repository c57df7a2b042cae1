extension ConnectionPool {
    /// The origin one pool serves, in the pool's own terms: where its connections go, whom they speak TLS and HTTP
    /// to, and what they must be, so that requests for different origins never share a connection.
    ///
    /// Without a proxy both are the origin. Through a proxy, `endpoint` is the proxy (where the socket connects) and
    /// `route` says what rides on the connection: requests for any origin (`.proxy`: forwarded requests and
    /// `CONNECT`s, one pool per proxy shared across origins), or a tunnel to one origin (`.tunnel`), through which
    /// TLS (with `security`) and HTTP speak to that origin, never to the proxy.
    package struct Key: Hashable, Sendable, CustomStringConvertible {
        /// What the pool's connections carry, and to whom.
        package enum Route: Hashable, Sendable {
            /// Straight to the origin at `endpoint`.
            case direct
            /// To the HTTP proxy at `endpoint` itself (over TLS for an `https` proxy, with the proxy's own
            /// settings): requests for any origin in absolute form, and `CONNECT`s.
            case proxy(Proxy)
            /// Through a tunnel the proxy at `endpoint` opens to `host:port` (`CONNECT`, or a SOCKS handshake).
            case tunnel(Proxy, host: String, port: Int)
        }

        /// Where a connection of the pool goes.
        package enum Endpoint: Hashable, Sendable {
            /// A host name or IP address, resolved (Happy Eyeballs) and connected over TCP.
            case host(String, port: Int)
            /// A Unix stream socket.
            case unixSocket(path: String)
        }

        /// The URL scheme the pool's requests use (`http`, `https`, `http+unix`): part of the
        /// identity, so plain and secured connections to one host are never mixed.
        var scheme: String
        var endpoint: Endpoint
        /// The security settings' identity (`ClientTransportSecurity.poolKey`), for https.
        var security: String?
        /// What the requests ask of their connections (a traffic class, an admission check).
        var requirements: ConnectionRequirements
        /// What the connections carry: see `Route`.
        var route: Route

        package init(
            scheme: String, endpoint: Endpoint, security: String? = nil,
            requirements: ConnectionRequirements = ConnectionRequirements(), route: Route = .direct
        ) {
            self.scheme = scheme
            self.endpoint = endpoint
            self.security = security
            self.requirements = requirements
            self.route = route
        }

        /// The host name the connection speaks TLS to (the server name): the tunnel's far end, or the endpoint; or
        /// the socket path.
        var host: String {
            if case .tunnel(_, let host, _) = route { return host }
            switch endpoint {
            case .host(let host, _): return host
            case .unixSocket(let path): return path
            }
        }

        /// The port the connection speaks TLS to, as `host`.
        var port: Int? {
            if case .tunnel(_, _, let port) = route { return port }
            if case .host(_, let port) = endpoint { return port }
            return nil
        }

        /// Whether this is the key of a pool straight to `scheme://host:port`, with no requirements: what a request to
        /// that origin, direct, would build. `port` nil (a Unix socket's URL) never matches.
        func isDirect(scheme: String, host: String, port: Int?) -> Bool {
            guard case .direct = route, requirements.isEmpty, let port, case .host(let ownHost, let ownPort) = endpoint
            else { return false }
            return ownPort == port && ownHost == host && self.scheme == scheme
        }

        /// The proxy requests on these connections are forwarded to (absolute-form targets, `Proxy-Authorization`).
        var forwardingProxy: Proxy? {
            if case .proxy(let proxy) = route { return proxy }
            return nil
        }

        /// The proxy the connections go through, if any.
        var proxy: Proxy? {
            switch route {
            case .direct: nil
            case .proxy(let proxy), .tunnel(let proxy, _, _): proxy
            }
        }

        package var description: String {
            var origin =
                switch endpoint {
                case .host(let host, let port): "\(scheme)://\(host):\(port)"
                case .unixSocket(let path): "\(scheme)://\(path)"
                }
            switch route {
            case .direct: break
            case .proxy(let proxy): origin = "\(proxy)"
            case .tunnel(let proxy, let host, let port):
                let authority = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]:\(port)" : "\(host):\(port)"
                origin = "\(scheme)://\(authority) via \(proxy)"
            }
            guard !requirements.isEmpty else { return origin }
            let trafficClass = requirements.trafficClass.map { " traffic class 0x" + String($0, radix: 16) } ?? ""
            let admission = requirements.admission.map { " admitted by \(type(of: $0))" } ?? ""
            return origin + " (" + (trafficClass + admission).dropFirst() + ")"
        }
    }
}
