/// A connection opened the way the client opens its own, handed over raw: for a caller that speaks HTTP/1.1 itself
/// (`wire bench`'s load engine) and still wants the client's routes, proxies and TLS.
package struct EstablishedStream: Sendable {
    /// The stream, ready for HTTP bytes: to the origin (through a tunnel when there is one, TLS included for
    /// `https`), or to the forwarding proxy. No delegate; the caller owns it and closes it.
    package let stream: LoopBound<any ByteStream>
    /// The proxy that requests on this stream are forwarded through (absolute-form targets and its
    /// `Proxy-Authorization`, `Proxy.fieldsForProxy(_:)`), or nil when the stream leads to the origin.
    package let forwardingProxy: Proxy?
}

extension HTTPClient {
    /// Opens a new connection for requests to `url` as the client's pool would (the configuration's proxy route:
    /// direct, forwarded to an HTTP proxy, or a tunnel by `CONNECT` or SOCKS; TLS to the origin for `https`), and
    /// gives it to the caller instead of the pool: it is never pooled or reused by the client.
    ///
    /// The stream is on one of the client's loops: a client on a group of one loop (`EventLoopGroup(sharing:)`)
    /// opens every stream on that loop.
    ///
    /// - Throws: `HTTPClientError`, as a request would meet it while connecting: `.proxyRefused` with the proxy's
    ///   head for a non-2xx answer to `CONNECT`, `.proxyHandshakeFailed` for SOCKS, `.connectFailed` naming the proxy,
    ///   `.tlsFailed`, `.connectTimeout`.
    package func openStream(to url: HTTPURL) async throws(HTTPClientError) -> EstablishedStream {
        let pool = try streamPool(for: url)
        let loop = try runningGroup().next()
        let events = SetupEvents(listener: configuration.eventListener, call: nil, connection: HTTPClientEvent.nextConnection())
        let stream: LoopBound<any ByteStream>
        do {
            (stream, _) = try await pool.establish(on: loop, started: .now(), events: events)
        } catch {
            throw HTTPClientError(error, abortError: nil)
        }
        if case .proxy(let proxy) = pool.key.route { return EstablishedStream(stream: stream, forwardingProxy: proxy) }
        return EstablishedStream(stream: stream, forwardingProxy: nil)
    }

    /// The proxy that requests to `url` are forwarded through on the configuration's route (their targets in absolute
    /// form), or nil when they go to the origin, directly or through a tunnel: what `openStream(to:)` would report.
    package func forwardingProxy(for url: HTTPURL) throws(HTTPClientError) -> Proxy? {
        if case .proxy(let proxy) = try streamPool(for: url).key.route { return proxy }
        return nil
    }

    /// The pool whose connections `url`'s requests would use: its key says the route.
    private func streamPool(for url: HTTPURL) throws(HTTPClientError) -> ConnectionPool {
        let route = try proxyRoute(for: url, via: nil, configuration: configuration.proxy)
        return try pool(for: url, via: nil, route: route)
    }
}
