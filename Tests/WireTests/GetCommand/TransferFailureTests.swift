import Glibc
import Testing
import WireTLS
import Wire
import WireTool

/// The mapping from client errors to curl's exit statuses, as a table: the tool's own `TransferFailure`, imported
/// from the `wire` module, so the table tested is the one the tool runs.
struct TransferFailureTests {
    static func connectFailure(_ reason: ConnectError.Reason) -> HTTPClientError {
        let attempt = ConnectError.Attempt(
            address: try! SocketAddress(ipAddress: "127.0.0.1", port: 1),
            error: IOError(syscall: "connect", errno: .connectionRefused))
        let connect = ConnectError(
            reason: reason, host: "127.0.0.1", port: 1, attempts: reason == .unknownHost ? [] : [attempt],
            resolutionError: reason == .unknownHost ? .unknownHost("wire-test.invalid") : nil)
        return HTTPClientError(.connectFailed, "\(connect)", connectError: connect)
    }

    static let table: [(HTTPClientError, Int32)] = [
        (HTTPClientError(.invalidURL, "no host: http://"), 3),
        (connectFailure(.unknownHost), 6),
        (connectFailure(.refused), 7),
        (connectFailure(.unreachable), 7),
        (connectFailure(.failed), 7),
        (connectFailure(.timedOut), 28),
        (HTTPClientError(.connectTimeout, "no connection within 1s"), 28),
        (HTTPClientError(.readTimeout, "no data for 30s"), 28),
        (HTTPClientError(.deadlineExceeded, "took longer than 1s"), 28),
        (HTTPClientError(.malformedResponse, "bad status line"), 8),
        (HTTPClientError(.bodyTruncated, "closed after 3 bytes"), 18),
        (HTTPClientError(.tooManyRedirects, "more than 1"), 47),
        (HTTPClientError(.redirectRefused, "refused"), 47),
        (HTTPClientError(.emptyReply, "nothing"), 52),
        (HTTPClientError(.writeFailed, "EPIPE"), 55),
        (HTTPClientError(.connectionReset, "ECONNRESET"), 56),
        (HTTPClientError(.connectionClosed, "mid-head"), 56),
        (HTTPClientError(.cancelled, "cancelled"), 42),
        (HTTPClientError(.bodyTooLarge, "over the limit"), 63),
        (HTTPClientError(.invalidRequest, "bad method"), 2),
        (
            HTTPClientError(
                .invalidRequest, "cannot read the body file", ioError: IOError(syscall: "open", errno: Errno(rawValue: ENOENT))),
            26
        ),
        (HTTPClientError(.upgradeNotSupported, "101"), 1),
        (HTTPClientError(.shutDown, "shut down"), 1),
        (HTTPClientError(.redirectSchemeNotAllowed, "protocol \"http+unix\" not allowed in a redirect"), 1),
    ]

    @Test func everyClientErrorMapsToCurlsStatus() {
        for (error, status) in Self.table {
            #expect(TransferFailure(error).status == status, "\(error)")
        }
    }

    @Test func everyCodeHasAnEntry() {
        // A code added to the client without an entry would fall back to the generic status unnoticed.
        let codes: [HTTPClientError.Code] = [
            .invalidURL, .connectFailed, .connectTimeout, .readTimeout, .deadlineExceeded, .emptyReply, .connectionClosed,
            .connectionReset, .bodyTruncated, .malformedResponse, .invalidRequest, .writeFailed, .tooManyRedirects,
            .redirectRefused, .cancelled, .shutDown, .bodyTooLarge, .upgradeNotSupported, .tlsFailed,
            .redirectSchemeNotAllowed, .invalidConfiguration, .startFailed,
        ]
        for code in codes { #expect(TransferFailure.statusByCode[code] != nil, "\(code)") }
        #expect(TransferFailure.statusByCode.count == codes.count)
    }

    @Test func tlsReasonsMapToCurlsStatuses() {
        let table: [(TLSError.Reason, Int32)] = [
            (.certificateExpired, 60), (.certificateNotYetValid, 60), (.unknownIssuer, 60), (.selfSigned, 60),
            (.selfSignedInChain, 60), (.hostnameMismatch, 60), (.ipAddressMismatch, 60), (.certificateInvalid, 60),
            (.trustRefused, 60), (.pinMismatch, 90), (.localCertificate, 58), (.alertReceived, 35), (.protocolVersion, 35),
            (.handshakeFailed, 35), (.noPeerCertificate, 35), (.handshakeTimeout, 28),
        ]
        for (reason, status) in table {
            let tlsError = TLSError(reason, "detail")
            let failure = TransferFailure(HTTPClientError(.tlsFailed, "\(tlsError)", securityError: tlsError))
            #expect(failure.status == status, "\(reason)")
            #expect(failure.message.contains("detail"))
        }
    }

    @Test func theLineNamesTheStatusAndTheCause() {
        let refused = TransferFailure(Self.connectFailure(.refused))
        #expect(refused.line.hasPrefix("wire: (7) connection to 127.0.0.1 port 1 refused ("))
        let unknown = TransferFailure(Self.connectFailure(.unknownHost))
        #expect(unknown.line == "wire: (6) could not resolve host wire-test.invalid: Name or service not known")
        let timeout = TransferFailure(HTTPClientError(.readTimeout, "no data from the server for 30s"))
        #expect(timeout.line == "wire: (28) operation timed out: no data from the server for 30s")
    }

    @Test func otherErrorsAreReceiveFailures() {
        #expect(TransferFailure(any: HTTPBodyError.cancelled).status == 56)
        let own = TransferFailure(status: 23, message: "disk full")
        #expect(TransferFailure(any: own) == own)
    }
}
