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

        init(scheme: String, endpoint: Endpoint, security: String? = nil) {
            self.scheme = scheme
            self.endpoint = endpoint
            self.security = security
        }

        /// The host name the connection is made for (the TLS server name), or the socket path.
        var host: String {
            switch endpoint {
            case .host(let host, _): host
            case .unixSocket(let path): path
            }
        }

        var description: String {
            switch endpoint {
            case .host(let host, let port): "\(scheme)://\(host):\(port)"
            case .unixSocket(let path): "\(scheme)://\(path)"
            }
        }
    }
}
