extension HTTPClientError {
    /// The client's error for a pool's failure, keeping what lies underneath (the connect
    /// attempts, the system call and errno, the security layer's error). `abortError` is what the
    /// request was aborted with, which an `.abandoned` wait reports.
    init(_ error: ConnectionPoolError, abortError: HTTPClientError?) {
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
        case .shutDown:
            self.init(.shutDown, "the client is shut down")
        case .abandoned:
            self = abortError ?? HTTPClientError(.cancelled, "the request stopped waiting for a connection")
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
