import Testing
import Wire

/// The pool fails with its own `ConnectionPoolError`; the client's `HTTPClientError` for it keeps what lies underneath
/// (the connect attempts, the system call and errno, the security layer's error) and the codes the client had before.
struct HTTPClientErrorPoolMappingTests {
    struct SecurityFailure: Error, CustomStringConvertible {
        var description: String { "certificate verify failed" }
    }

    @Test func connectFailuresKeepTheConnectErrorAndTellATimeoutApart() {
        let timedOut = ConnectError(reason: .timedOut, host: "example.test", port: 80)
        let error = HTTPClientError(.connectFailed(timedOut), abortError: nil)
        #expect(error.code == .connectTimeout)
        #expect(error.connectError == timedOut)
        let refused = ConnectError(reason: .refused, host: "example.test", port: 80)
        #expect(HTTPClientError(.connectFailed(refused), abortError: nil).code == .connectFailed)
    }

    @Test func systemCallFailuresKeepTheSyscallAndErrno() {
        let ioError = IOError(syscall: "socket", errno: Errno(rawValue: 24))
        let error = HTTPClientError(.setupFailed(ioError), abortError: nil)
        #expect(error.code == .connectFailed)
        #expect(error.ioError == ioError)
        let reset = IOError(syscall: "read", errno: .connectionReset)
        let closed = HTTPClientError(.closedBeforeFirstRequest(reset), abortError: nil)
        #expect(closed.code == .connectionReset)
        #expect(closed.ioError == reset)
        #expect(closed.failedBeforeResponse)
    }

    @Test func securityFailuresKeepTheLayersError() {
        let error = HTTPClientError(.securityFailed(SecurityFailure()), abortError: nil)
        #expect(error.code == .tlsFailed)
        #expect(error.securityError is SecurityFailure)
        #expect(error.detail.contains("certificate verify failed"))
        let closed = HTTPClientError(.closedBeforeFirstRequest(SecurityFailure()), abortError: nil)
        #expect(closed.code == .tlsFailed && closed.securityError is SecurityFailure)
    }

    @Test func anAbandonedWaitReportsWhatAbortedItAndShutdownIsShutdown() {
        let deadline = HTTPClientError(
            .deadlineExceeded, "the request took longer than its 1s deadline", mayHaveBeenProcessed: true)
        #expect(HTTPClientError(.abandoned, abortError: deadline) == deadline)
        #expect(HTTPClientError(.shutDown, abortError: nil).code == .shutDown)
        let origin = ConnectionPool.Key(scheme: "http", endpoint: .host("example.test", port: 8080))
        let lost = HTTPClientError(.connectionLost(origin: origin), abortError: nil)
        #expect(lost.code == .connectFailed && lost.detail.contains("http://example.test:8080"))
    }
}
