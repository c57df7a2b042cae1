import Wire
import WireTLS

/// Why one transfer of `wire get` or `wire request` failed: curl's exit status for the same failure and a line
/// naming the cause.
///
/// This file imports only `Wire`, so the test target compiles it too (through a symlink) and checks the mapping as a
/// pure table, without running the tool.
package struct TransferFailure: Error, Equatable, Sendable {
    /// The process exit status curl uses for this failure.
    package var status: Int32
    /// What went wrong, in words: the host, the limit, the system error.
    package var message: String

    package init(status: Int32, message: String) {
        self.status = status
        self.message = message
    }

    /// The line printed on standard error: `wire: (7) connection to 127.0.0.1 port 1 refused (…)`.
    package var line: String { "wire: (\(status)) \(message)" }
}

/// curl's exit statuses, for the failures `wire get` can meet (curl's `libcurl-errors(3)` names in the comments).
enum ExitStatus {
    /// Everything worked.
    static let success: Int32 = 0
    /// A failure with no closer curl equivalent (CURLE_UNSUPPORTED_PROTOCOL is curl's catch-all of this kind).
    static let generic: Int32 = 1
    /// A command-line mistake (curl's CURLE_FAILED_INIT is 2 as well).
    static let usage: Int32 = 2
    /// CURLE_URL_MALFORMAT.
    static let malformedURL: Int32 = 3
    /// CURLE_COULDNT_RESOLVE_HOST.
    static let unknownHost: Int32 = 6
    /// CURLE_COULDNT_CONNECT: refused or unreachable.
    static let couldNotConnect: Int32 = 7
    /// CURLE_WEIRD_SERVER_REPLY.
    static let malformedReply: Int32 = 8
    /// CURLE_PARTIAL_FILE: the body ended before its announced length.
    static let partialBody: Int32 = 18
    /// CURLE_HTTP_RETURNED_ERROR, with `--fail`.
    static let httpError: Int32 = 22
    /// CURLE_WRITE_ERROR: the output could not be written.
    static let writeError: Int32 = 23
    /// CURLE_READ_ERROR: the upload file could not be read.
    static let readError: Int32 = 26
    /// CURLE_UPLOAD_FAILED: `-T -` (a body of unknown length) with `--http1.0`, which has no chunked coding.
    static let uploadFailed: Int32 = 25
    /// CURLE_RANGE_ERROR: `-C -` asked for the rest of a file and the server did not answer with that range.
    static let rangeError: Int32 = 33
    /// CURLE_OPERATION_TIMEDOUT: connect, read or total time ran out.
    static let timedOut: Int32 = 28
    /// CURLE_ABORTED_BY_CALLBACK: the transfer was cancelled.
    static let aborted: Int32 = 42
    /// CURLE_TOO_MANY_REDIRECTS.
    static let tooManyRedirects: Int32 = 47
    /// CURLE_GOT_NOTHING: the server closed without a byte of response.
    static let emptyReply: Int32 = 52
    /// CURLE_SEND_ERROR.
    static let sendError: Int32 = 55
    /// CURLE_RECV_ERROR: the connection broke while receiving.
    static let receiveError: Int32 = 56
    /// CURLE_BAD_CONTENT_ENCODING: `--compressed` met a corrupt, truncated or unknown content encoding.
    static let badContentEncoding: Int32 = 61
    /// CURLE_INTERFACE_FAILED: `--interface` names nothing to bind to, or the bind failed.
    static let interfaceFailed: Int32 = 45
    /// CURLE_SETOPT_OPTION_SYNTAX: a `--resolve` or `--connect-to` entry that cannot be read.
    static let optionSyntax: Int32 = 49
    /// CURLE_SSL_CIPHER: `--ciphers`, `--tls13-ciphers` or `--curves` cannot be set.
    static let cipher: Int32 = 59
    /// CURLE_FILESIZE_EXCEEDED.
    static let tooLarge: Int32 = 63
    /// CURLE_SSL_CONNECT_ERROR: the TLS handshake failed (an alert, no common version or cipher, not TLS).
    static let tlsHandshake: Int32 = 35
    /// CURLE_SSL_CERTPROBLEM: this side's certificate, key or trust file cannot be used.
    static let localCertificate: Int32 = 58
    /// CURLE_PEER_FAILED_VERIFICATION: the peer's certificate was not verified.
    static let peerVerification: Int32 = 60
    /// CURLE_SSL_PINNEDPUBKEYNOTMATCH.
    static let pinMismatch: Int32 = 90
}

extension TransferFailure {
    /// The exit status and summary for each client error code. A connect failure is refined by its reason in
    /// `init(_:)`; a code missing here (one added to the library later) exits `ExitStatus.generic`.
    package static let statusByCode: [HTTPClientError.Code: (status: Int32, summary: String)] = [
        .invalidURL: (ExitStatus.malformedURL, "malformed URL"),
        .connectFailed: (ExitStatus.couldNotConnect, "could not connect"),
        .connectTimeout: (ExitStatus.timedOut, "connection timed out"),
        .readTimeout: (ExitStatus.timedOut, "operation timed out"),
        .deadlineExceeded: (ExitStatus.timedOut, "operation timed out"),
        .emptyReply: (ExitStatus.emptyReply, "empty reply from server"),
        // The head was cut short: curl reports a receive failure for a connection that dies mid-response.
        .connectionClosed: (ExitStatus.receiveError, "failure receiving data"),
        .connectionReset: (ExitStatus.receiveError, "failure receiving data"),
        .bodyTruncated: (ExitStatus.partialBody, "transfer closed with data remaining"),
        .malformedResponse: (ExitStatus.malformedReply, "malformed server reply"),
        .invalidRequest: (ExitStatus.usage, "the request cannot be sent"),
        .writeFailed: (ExitStatus.sendError, "failure sending data"),
        .tooManyRedirects: (ExitStatus.tooManyRedirects, "too many redirects"),
        .redirectRefused: (ExitStatus.tooManyRedirects, "redirect refused"),
        // curl refuses a Location outside its redirect protocols with CURLE_UNSUPPORTED_PROTOCOL.
        .redirectSchemeNotAllowed: (ExitStatus.generic, "redirect refused"),
        // Settings the client refuses come from the command line: curl calls a bad option value a usage error.
        .invalidConfiguration: (ExitStatus.usage, "invalid setting"),
        .startFailed: (ExitStatus.generic, "cannot start the client"),
        .cancelled: (ExitStatus.aborted, "transfer aborted"),
        .shutDown: (ExitStatus.generic, "the client shut down"),
        .bodyTooLarge: (ExitStatus.tooLarge, "body too large"),
        .upgradeNotSupported: (ExitStatus.generic, "unsupported protocol switch"),
        .tlsFailed: (ExitStatus.tlsHandshake, "TLS handshake failed"),
    ]

    /// The failure curl would report for `error`.
    package init(_ error: HTTPClientError) {
        if let failure = TransferFailure(atProxy: error) {
            self = failure
            return
        }
        if error.code == .connectFailed, let connect = error.connectError, !connect.attempts.isEmpty,
            connect.attempts.allSatisfy({ $0.error.syscall == "bind" }),
            let refused = connect.attempts.first(where: { $0.error.errno != .addressFamilyNotSupported })
        {
            // --interface: the socket could not be bound where it was told to (an address of another family is
            // curl's "could not connect" instead).
            self.init(
                status: ExitStatus.interfaceFailed,
                message:
                    "bind failed with errno \(refused.error.errno.rawValue): \(refused.error.errno) "
                    + "(connecting to \(refused.address))")
            return
        }
        if error.code == .connectFailed, let connect = error.connectError {
            let status: Int32 =
                switch connect.reason {
                case .unknownHost: ExitStatus.unknownHost
                case .refused, .unreachable, .failed: ExitStatus.couldNotConnect
                case .timedOut: ExitStatus.timedOut
                case .eventLoopClosed: ExitStatus.generic
                }
            self.init(status: status, message: connect.description)
            return
        }
        if error.code == .tlsFailed, let tlsError = error.securityError as? TLSError {
            self.init(tlsError)
            return
        }
        if error.code == .invalidRequest, error.ioError != nil {
            // The only I/O behind an invalid request is the body file: curl calls that a read error.
            self.init(status: ExitStatus.readError, message: "cannot read the request body: \(error.detail)")
            return
        }
        let entry = Self.statusByCode[error.code] ?? (ExitStatus.generic, error.code.description)
        self.init(status: entry.status, message: "\(entry.summary): \(error.detail)")
    }

    /// The failure curl would report for a TLS error: which side's certificate, the pins, or the handshake.
    package init(_ error: TLSError) {
        let reason = error.reason
        if reason == .cipherList {
            self.init(status: ExitStatus.cipher, message: error.detail)
        } else if reason == .localCertificate {
            self.init(status: ExitStatus.localCertificate, message: "problem with the local certificate: \(error.detail)")
        } else if reason == .pinMismatch {
            self.init(status: ExitStatus.pinMismatch, message: "public key does not match a pinned public key: \(error.detail)")
        } else if reason.isCertificateVerdict {
            self.init(status: ExitStatus.peerVerification, message: "peer certificate not verified (\(reason)): \(error.detail)")
        } else if reason == .handshakeTimeout {
            self.init(status: ExitStatus.timedOut, message: "TLS handshake timed out: \(error.detail)")
        } else {
            self.init(status: ExitStatus.tlsHandshake, message: "TLS handshake failed (\(reason)): \(error.detail)")
        }
    }

    /// The failure for any error out of a transfer: client errors through the table, anything else (a body stream
    /// error the library did not wrap) as a receive failure.
    package init(any error: any Error) {
        if let failure = error as? TransferFailure {
            self = failure
        } else if let clientError = error as? HTTPClientError {
            self.init(clientError)
        } else {
            self.init(status: ExitStatus.receiveError, message: "failure receiving data: \(error)")
        }
    }
}
