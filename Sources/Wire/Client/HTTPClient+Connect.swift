/// The answer to `CONNECT`: the proxy's head, and on a 2xx the tunnel it opened.
public struct HTTPConnectResponse: Sendable {
    /// The status line and header fields of the proxy's answer.
    public let head: HTTPResponseHead
    /// The tunnel to the requested authority on a 2xx answer (owned by the caller from now on);
    /// nil for any other answer.
    public let tunnel: HTTPTunnel?
    /// The body of an answer that opened no tunnel (a 407's explanation, say): an ordinary
    /// response body, to read or drop. Empty when a tunnel opened.
    public let body: HTTPBody
    /// Timings and connection facts of the exchange with the proxy.
    public let metrics: HTTPClientMetrics

    /// The status code.
    public var status: HTTPStatus { head.status }
    /// The header fields.
    public var headers: HTTPHeaders { head.headers }
}

extension HTTPClient {
    /// Asks the HTTP proxy at `proxy` to open a tunnel to `authority` (RFC 9110 §9.3.6).
    ///
    /// The request is `CONNECT host:port HTTP/1.1` with `Host: host:port`, sent on a connection
    /// to the proxy's origin (reused from the pool when one is idle). A 2xx answer turns that
    /// connection into the returned `tunnel`: it leaves the pool and is never used for HTTP again.
    /// Any other answer (407 Proxy Authentication Required, 502…) is an ordinary response whose
    /// body is in `body`, and the connection goes back to the pool as after any response.
    ///
    /// - Parameters:
    ///   - authority: Where the tunnel should lead, `host:port` (`[::1]:443` for IPv6).
    ///   - proxy: The proxy's URL, `http://host:port` (or `https://` to reach the proxy over TLS).
    ///   - headers: Extra header fields, such as `Proxy-Authorization`.
    ///   - timeout: A deadline for the answer's head; the tunnel itself has none.
    /// - Throws: `HTTPClientError`: `.invalidRequest` for an authority that is not `host:port`, or
    ///   whatever failed while reaching the proxy.
    public func connect(
        to authority: String, via proxy: String, headers: HTTPHeaders = HTTPHeaders(),
        timeout: Duration? = nil
    ) async throws(HTTPClientError) -> HTTPConnectResponse {
        let url = try HTTPURL(proxy)
        guard url.unixSocketPath == nil else {
            throw HTTPClientError(.invalidURL, "a proxy is reached over TCP, not a Unix socket: \(url)")
        }
        var value = Proxy(kind: url.isTLS ? .https : .http, host: url.host, port: url.port)
        // An https proxy named by URL is reached with the TLS settings for proxies, else with the client's own.
        if url.isTLS { value.transportSecurity = configuration.proxyTransportSecurity ?? configuration.transportSecurity }
        return try await connect(to: authority, through: value, headers: headers, timeout: timeout)
    }

    /// Asks an HTTP proxy to open a tunnel to `authority` (RFC 9110 §9.3.6), as `connect(to:via:)` does, with the
    /// proxy given as a value: an `https` one is reached over TLS with its own settings (`Proxy.transportSecurity`,
    /// else the configuration's `proxyTransportSecurity`), its `headers` are added to `headers`, and its credentials,
    /// when it has any, go in `Proxy-Authorization` (Basic) unless the fields have one. The connection to the proxy is one of those
    /// requests forwarded to it use.
    ///
    /// - Throws: `HTTPClientError`: `.invalidRequest` for an authority that is not `host:port`, `.invalidProxy` for a
    ///   SOCKS proxy or an `https` one without TLS settings, or whatever failed while reaching the proxy.
    public func connect(
        to authority: String, through proxy: Proxy, headers: HTTPHeaders = HTTPHeaders(), timeout: Duration? = nil
    ) async throws(HTTPClientError) -> HTTPConnectResponse {
        guard Self.isAuthority(authority) else {
            throw HTTPClientError(.invalidRequest, "a CONNECT target is host:port, not '\(authority)'")
        }
        guard !proxy.kind.isSOCKS else {
            throw .proxy(.invalidProxy, "CONNECT goes to an HTTP proxy, not to \(proxy)", proxy: proxy)
        }
        let head = try connectHead(authority, headers: proxy.fieldsForProxy(headers))
        let pool = try pool(forProxy: proxy)
        let group = try runningGroup()
        let metrics = HTTPClientMetrics(start: .now())
        metrics.update { $0.proxy = proxy }
        let deadlineTimer = timeout.map { timeout in
            group.next().schedule(in: timeout) {
                metrics.abort(
                    HTTPClientError(
                        .deadlineExceeded, "the proxy did not answer CONNECT within \(timeout)",
                        mayHaveBeenProcessed: true))
            }
        }
        defer { deadlineTimer?.cancel() }
        let readTimeout = configuration.readTimeout
        let retries = configuration.retriesStaleConnections
        let result = await withTaskCancellationHandler {
            do throws(ConnectionPool.ConnectExchangeFailure) {
                let sent = Deadline.now()
                let (start, _) = try await pool.sendConnect(
                    head: head, readTimeout: readTimeout, retriesStaleConnections: retries, metrics: metrics)
                metrics.update { $0.proxyHandshake = .now() - sent }
                return Result<HTTP1ClientConnection.ResponseStart, HTTPClientError>.success(start)
            } catch {
                switch error {
                case .lease(let error): return .failure(HTTPClientError(error, abortError: metrics.abortError))
                case .exchange(let error): return .failure(error)
                }
            }
        } onCancel: {
            metrics.abort(HTTPClientError(.cancelled, "the calling task was cancelled"))
        }
        let start = try result.get()
        let tunnel = try await start.tunnel?.makeHTTPTunnel()
        return HTTPConnectResponse(head: start.head, tunnel: tunnel, body: start.body, metrics: metrics)
    }

    /// Whether `text` is an authority-form target: a host (a name, an IPv4 address or a
    /// bracketed IPv6 one) and a port from 1 to 65535.
    package static func isAuthority(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":") else { return false }
        let host = text[..<colon]
        let port = text[text.index(after: colon)...]
        guard !port.isEmpty, port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }),
            let number = Int(port), (1...65535).contains(number), !host.isEmpty
        else { return false }
        if host.hasPrefix("[") {
            return host.hasSuffix("]") && host.count > 2
                && host.dropFirst().dropLast().allSatisfy { $0.isASCII && ($0.isHexDigit || $0 == ":" || $0 == ".") }
        }
        return host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "_") }
    }
}
