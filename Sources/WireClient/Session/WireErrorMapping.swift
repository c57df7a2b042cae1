import FoundationEssentials
import Wire

extension ClientError {
    /// The WireClient error for a Wire client failure (§14.1), carrying it as `underlying`.
    /// - Parameters:
    ///   - error: What Wire threw.
    ///   - url: The URL being fetched.
    static func transport(_ error: HTTPClientError, url: URL) -> ClientError {
        let code: Code = switch error.code {
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
        case .tlsFailed: .secureConnectionFailed
        case .invalidRequest: .requestSerializationFailed
        case .startFailed, .invalidConfiguration: .cannotConnectToHost
        default: .networkConnectionLost
        }
        return ClientError(code, failingURL: url, underlying: error, failureReason: error.detail)
    }

    /// The WireClient error for a failure while reading a response body.
    static func body(_ error: any Error, url: URL) -> ClientError {
        if let wire = error as? HTTPClientError { return transport(wire, url: url) }
        if let body = error as? HTTPBodyError, body == .cancelled {
            return ClientError(.cancelled, failingURL: url, underlying: error, failureReason: "reading the body was cancelled")
        }
        return ClientError(.networkConnectionLost, failingURL: url, underlying: error,
                           failureReason: "the response body ended with an error: \(error)")
    }
}
