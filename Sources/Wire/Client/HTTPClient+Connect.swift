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
        guard Self.isAuthority(authority) else {
            throw HTTPClientError(.invalidRequest, "a CONNECT target is host:port, not '\(authority)'")
        }
        let url = try HTTPURL(proxy)
        let group = try runningGroup()
        let metrics = HTTPClientMetrics(start: .now())
        let abort = HTTPClientAbortHandle()
        let deadlineTimer = timeout.map { timeout in
            group.next().schedule(in: timeout) {
                abort.abort(
                    HTTPClientError(
                        .deadlineExceeded, "the proxy did not answer CONNECT within \(timeout)",
                        mayHaveBeenProcessed: true))
            }
        }
        defer { deadlineTimer?.cancel() }
        let result = await withTaskCancellationHandler {
            do throws(HTTPClientError) {
                return Result<HTTPConnectResponse, HTTPClientError>.success(
                    try await sendConnect(authority, to: url, headers: headers, metrics: metrics, abort: abort))
            } catch {
                return .failure(error)
            }
        } onCancel: {
            abort.abort(HTTPClientError(.cancelled, "the calling task was cancelled"))
        }
        return try result.get()
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

    private func sendConnect(
        _ authority: String, to url: HTTPURL, headers: HTTPHeaders, metrics: HTTPClientMetrics,
        abort: HTTPClientAbortHandle
    ) async throws(HTTPClientError) -> HTTPConnectResponse {
        let head = HTTPRequestHead(method: .connect, target: authority, headers: headers)
        // RFC 9110 §9.3.6 / §7.2: Host names the tunnel's target, not the proxy.
        let added = addedFields(to: headers, host: authority)
        let headBytes: [UInt8]
        do {
            var bytes: [UInt8] = []
            try HTTP1Serializer.writeRequestHead(head, adding: added, framing: .asInHeaders, into: &bytes)
            headBytes = bytes
        } catch {
            throw HTTPClientError(.invalidRequest, "\(error)")
        }
        metrics.update { $0.requestHead = headBytes }
        let readTimeout = configuration.readTimeout
        var attempt = 0
        while true {
            let lease = try await lease(from: pool(for: url, via: nil), abort: abort)
            metrics.update {
                $0.timings.nameResolved = lease.nameResolution
                $0.timings.connected = lease.connect
                $0.timings.secureConnected = lease.secureConnect
            }
            let connection = lease.connection
            do {
                let (promise, exchangeID) = try await connection.loop.submit {
                    let value = connection.value
                    metrics.update {
                        $0.remoteAddress = value.remoteAddress
                        $0.localAddress = value.localAddress
                        $0.transportSecurity = value.securityInfo
                    }
                    return value.start(
                        head: headBytes, inlineBody: nil, method: .connect, keepAlive: true,
                        requestComplete: true, readTimeout: readTimeout, metrics: metrics)
                }
                abort.setCurrent(connection, exchangeID)
                let start = try await promise.get()
                return HTTPConnectResponse(head: start.head, tunnel: start.tunnel, body: start.body, metrics: metrics)
            } catch let error as HTTPClientError {
                // A pooled connection the proxy closed as it was reused never saw the CONNECT: try a fresh one, once.
                if !lease.isNew && error.failedBeforeResponse && !abort.isAborted && attempt == 0
                    && configuration.retriesStaleConnections
                {
                    attempt += 1
                    metrics.update { $0.retries += 1 }
                    continue
                }
                throw error
            } catch {
                throw HTTPClientError(.shutDown, "the event loop shut down")
            }
        }
    }
}
