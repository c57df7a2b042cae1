extension ConnectionPool {
    /// The origin one pool serves, in the pool's own terms: where its connections go and what
    /// they must be, so that requests for different origins never share a connection.
    struct Key: Hashable, Sendable, CustomStringConvertible {
        /// Where a connection of the pool goes.
        enum Endpoint: Hashable, Sendable {
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

        init(
            scheme: String, endpoint: Endpoint, security: String? = nil,
            requirements: ConnectionRequirements = ConnectionRequirements()
        ) {
            self.scheme = scheme
            self.endpoint = endpoint
            self.security = security
            self.requirements = requirements
        }

        /// The host name the connection is made for (the TLS server name), or the socket path.
        var host: String {
            switch endpoint {
            case .host(let host, _): host
            case .unixSocket(let path): path
            }
        }

        var description: String {
            let origin =
                switch endpoint {
                case .host(let host, let port): "\(scheme)://\(host):\(port)"
                case .unixSocket(let path): "\(scheme)://\(path)"
                }
            guard !requirements.isEmpty else { return origin }
            let trafficClass = requirements.trafficClass.map { " traffic class 0x" + String($0, radix: 16) } ?? ""
            let admission = requirements.admission.map { " admitted by \(type(of: $0))" } ?? ""
            return origin + " (" + (trafficClass + admission).dropFirst() + ")"
        }
    }
}
