extension HTTPClientError {
    /// The client's error for a pool's failure, keeping what lies underneath (the connect
    /// attempts, the system call and errno, the security layer's error). `abortError` is what the
    /// request was aborted with, which an `.abandoned` wait reports.
    package init(_ error: ConnectionPoolError, abortError: HTTPClientError?) {
        switch error {
        case .connectFailed(let connectError):
            self.init(
                connectError.reason == .timedOut ? .connectTimeout : .connectFailed, connectError.description,
                connectError: connectError)
        case .setupFailed(let ioError):
            self.init(.connectFailed, "\(ioError)", ioError: ioError)
        case .loopClosed(let loopError):
            self.init(.connectFailed, "\(loopError)")
        case .securityFailed(let securityError):
            self.init(.tlsFailed, "\(securityError)", securityError: securityError)
        case .closedBeforeFirstRequest(let closeError):
            self = Self.closedBeforeFirstRequest(closeError)
        case .connectionLost(let origin):
            self.init(.connectFailed, "could not connect to \(origin)")
        case .notAdmitted(let reason, let local, let remote):
            self.init(.connectionNotAdmitted, "the connection from \(local) to \(remote) was not admitted: \(reason)")
        case .atProxy(let proxy, let error):
            self = HTTPClientError.atProxy(proxy, error, abortError: abortError)
        case .proxyRefused(let head, let request):
            self = .proxy(
                .proxyRefused, "the proxy answered CONNECT with \(head.status)", proxy: nil, response: head,
                connectRequest: request)
        case .proxyExchangeFailed(let error):
            self = error
        case .proxyHandshakeFailed(let failure):
            self = Self.proxyHandshakeFailed(failure, proxy: nil)
        case .proxyNeedsTLS:
            self = .proxy(
                .invalidProxy,
                "an https proxy needs WireTLS: import WireTLS and set the proxy's tls (or the "
                    + "configuration's proxyTLS)", proxy: nil)
        case .shutDown:
            self.init(.shutDown, "the client is shut down")
        case .abandoned:
            self = abortError ?? HTTPClientError(.cancelled, "the request stopped waiting for a connection")
        case .waiterLimit(let snapshot):
            self = .pool(
                .poolWaiterLimit,
                "\(snapshot.waiters) requests already wait for a connection to \(snapshot.origin) "
                    + "(maxWaitersPerHost); the pool: \(snapshot)", snapshot: snapshot)
        case .acquireTimedOut(let snapshot, let timeout):
            self = .pool(
                .connectionAcquireTimeout,
                "no connection to \(snapshot.origin) within \(timeout) "
                    + "(connectionAcquireTimeout); the pool: \(snapshot)", snapshot: snapshot)
        }
    }

    /// The client's error for a failure at `proxy`: the proxy's own codes for its answer and handshake, the usual
    /// ones (`.connectFailed`, `.tlsFailed`…) for reaching it; every one names the proxy (`proxy`).
    private static func atProxy(_ proxy: Proxy, _ error: ConnectionPoolError, abortError: HTTPClientError?)
        -> HTTPClientError
    {
        switch error {
        case .proxyRefused(let head, let request):
            return .proxy(
                .proxyRefused, "proxy \(proxy) answered CONNECT with \(head.status.code) \(head.reasonPhrase)", proxy: proxy,
                response: head, connectRequest: request)
        case .proxyHandshakeFailed(let failure):
            return proxyHandshakeFailed(failure, proxy: proxy)
        default:
            return HTTPClientError(error, abortError: abortError).at(proxy)
        }
    }

    private static func proxyHandshakeFailed(_ failure: ProxyHandshakeFailure, proxy: Proxy?) -> HTTPClientError {
        let prefix = proxy.map { "proxy \($0): " } ?? ""
        switch failure {
        case .socks(let error):
            return .proxy(.proxyHandshakeFailed, prefix + error.description, proxy: proxy, socksError: error)
        case .earlyBytes(let count):
            return .proxy(
                .proxyHandshakeFailed, prefix + "\(count) bytes came through the tunnel before the client's first",
                proxy: proxy)
        case .timedOut:
            var error = HTTPClientError(.connectTimeout, prefix + "the proxy's handshake did not end in time")
            if let proxy { error = .proxy(.connectTimeout, error.detail, proxy: proxy) }
            return error
        case .loopClosed:
            return .proxy(.connectFailed, prefix + "the event loop shut down during the proxy's handshake", proxy: proxy)
        case .streamFailed(let error):
            let ioError = error as? IOError
            let code: HTTPClientError.Code =
                ioError.map { $0.errno == .connectionReset || $0.errno == .brokenPipe ? .connectionReset : .connectFailed }
                ?? .connectFailed
            return .proxy(code, prefix + "the connection failed during the handshake: \(error)", proxy: proxy, ioError: ioError)
        }
    }

    /// The error of a new connection whose stream closed before its first request.
    private static func closedBeforeFirstRequest(_ error: (any Error)?) -> HTTPClientError {
        let prefix = "the connection closed before its first request"
        switch error {
        case let ioError as IOError:
            let code: HTTPClientError.Code =
                ioError.errno == .connectionReset || ioError.errno == .brokenPipe ? .connectionReset : .connectFailed
            return HTTPClientError(code, "\(prefix): \(ioError)", ioError: ioError, failedBeforeResponse: true)
        case let error as EventLoopClosedError:
            return HTTPClientError(.connectFailed, "\(prefix): \(error)", failedBeforeResponse: true)
        case let error?:
            // A security layer's error (a TLS alert, a truncated stream) keeps its precise reason.
            return HTTPClientError(.tlsFailed, "\(prefix): \(error)", securityError: error, failedBeforeResponse: true)
        case nil:
            return HTTPClientError(.connectFailed, prefix, failedBeforeResponse: true)
        }
    }
}
