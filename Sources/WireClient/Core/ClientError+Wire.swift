import FoundationEssentials
import Wire
import WireTLS

extension ClientError {
    /// The WireClient error for a Wire client failure, carrying it as `underlying`.
    /// - Parameters:
    ///   - error: What Wire threw.
    ///   - url: The URL being fetched.
    static func transport(_ error: HTTPClientError, url: URL) -> ClientError {
        let code: Code =
            switch error.code {
            case .invalidURL, .redirectSchemeNotAllowed, .redirectRefused: .badURL
            case .connectFailed:
                switch error.connectError?.reason {
                case .unknownHost: .cannotFindHost
                case .timedOut: .timedOut
                case .unreachable: .notConnectedToInternet
                default: .cannotConnectToHost
                }
            case .connectTimeout, .readTimeout, .deadlineExceeded: .timedOut
            case .tooManyRedirects: .tooManyRedirects
            case .cancelled, .shutDown: .cancelled
            case .bodyTooLarge: .responseTooLarge
            case .tlsFailed: isTrustRefusal(error.securityError) ? .serverCertificateUntrusted : .secureConnectionFailed
            case .invalidRequest: .requestSerializationFailed
            case .startFailed, .invalidConfiguration: .cannotConnectToHost
            // The only admission check WireClient sets is the cellular one (`allowsCellularAccess == false`).
            case .connectionNotAdmitted: .notConnectedToInternet
            // The proxy refused the tunnel or broke its handshake, or cannot be used: the origin was never reached.
            case .proxyRefused, .proxyHandshakeFailed, .invalidProxy: .cannotConnectToHost
            default: .networkConnectionLost
            }
        if code == .serverCertificateUntrusted, let tls = error.securityError {
            // The underlying error is the TLSError itself, which names the rule and lists the chain's pins.
            return ClientError(
                code, failingURL: url, underlying: tls, failureReason: "The certificate for this server is invalid: \(tls)")
        }
        return ClientError(code, failingURL: url, underlying: error, failureReason: error.detail)
    }

    /// Whether a TLS failure is a verdict on the server's certificate (a trust refusal, −1202) rather than a failed
    /// handshake (−1200).
    private static func isTrustRefusal(_ error: (any Error)?) -> Bool {
        guard let tls = error as? TLSError else { return false }
        return tls.reason.isCertificateVerdict || tls.reason == .pinMismatch
    }

    /// The WireClient error for a failure while reading a response body.
    static func body(_ error: any Error, url: URL) -> ClientError {
        // Already decided above Wire (content decoding).
        if let client = error as? ClientError { return client }
        if let wire = error as? HTTPClientError { return transport(wire, url: url) }
        if let body = error as? HTTPBodyError, body == .cancelled {
            return ClientError(.cancelled, failingURL: url, underlying: error, failureReason: "reading the body was cancelled")
        }
        return ClientError(
            .networkConnectionLost, failingURL: url, underlying: error,
            failureReason: "the response body ended with an error: \(error)")
    }
}
