/// Why a SOCKS proxy did not open the connection: its reply code, a refused authentication, a reply that breaks the
/// protocol (with the offset of the offending byte among those the proxy sent), or a request that cannot be sent.
public enum SOCKSError: Error, Hashable, Sendable, CustomStringConvertible {
    // SOCKS 5 replies (RFC 1928 §6).

    /// REP 01: general SOCKS server failure.
    case generalServerFailure
    /// REP 02: connection not allowed by ruleset.
    case connectionNotAllowed
    /// REP 03: network unreachable.
    case networkUnreachable
    /// REP 04: host unreachable.
    case hostUnreachable
    /// REP 05: connection refused (by the origin).
    case connectionRefused
    /// REP 06: TTL expired.
    case ttlExpired
    /// REP 07: command not supported.
    case commandNotSupported
    /// REP 08: address type not supported.
    case addressTypeNotSupported
    /// A REP from 09 to FF, which RFC 1928 leaves unassigned.
    case unassignedReply(UInt8)

    // SOCKS 4 replies.

    /// CD 91: request rejected or failed.
    case requestRejected
    /// CD 92: rejected because the proxy cannot reach identd on the client.
    case identdUnreachable
    /// CD 93: rejected because identd reports another user ID than the request's.
    case identdMismatch
    /// A CD other than 90 to 93.
    case unknownSOCKS4Reply(UInt8)

    // Authentication (SOCKS 5).

    /// The proxy accepts none of the offered methods (METHOD FF): it wants credentials that were not given, or a
    /// method Wire does not speak.
    case noAcceptableAuthenticationMethod
    /// The proxy chose a method that was not offered (GSSAPI, or username and password when none were given).
    case unofferedAuthenticationMethod(UInt8)
    /// The proxy refused the user name and password (RFC 1929 STATUS, not 00).
    case authenticationFailed(status: UInt8)

    // The protocol broken.

    /// A reply that breaks the protocol; `offset` counts the bytes the proxy sent before the offending one.
    case malformedReply(MalformedReply, offset: Int)
    /// The proxy closed the connection after `offset` bytes, before the handshake ended.
    case closedDuringHandshake(offset: Int)

    // A request that cannot be sent.

    /// The origin's name is longer than the protocol carries (255 bytes in SOCKS 5, 254 in SOCKS 4a).
    case hostNameTooLong(length: Int, limit: Int)
    /// The name is empty or holds a NUL byte.
    case invalidHostName
    /// The user name is longer than the 255 bytes RFC 1929 carries.
    case userNameTooLong(length: Int)
    /// The password is longer than the 255 bytes RFC 1929 carries.
    case passwordTooLong(length: Int)
    /// A SOCKS 4 user ID holds a NUL byte, which would end it.
    case invalidUserID
    /// SOCKS 4 carries IPv4 addresses only.
    case addressFamilyNotSupported
    /// The origin's port is outside 0...65535.
    case invalidPort(Int)

    /// How a reply breaks the protocol.
    public enum MalformedReply: Hashable, Sendable, CustomStringConvertible {
        /// The version byte is not the one expected (5 for SOCKS 5, 0 in a SOCKS 4 reply).
        case version(expected: UInt8, received: UInt8)
        /// A SOCKS 5 reply's ATYP is not 1, 3 or 4.
        case addressType(UInt8)
        /// Bytes the proxy sent before the client's next message, where it must wait.
        case unexpectedBytes

        /// A few words.
        public var description: String {
            switch self {
            case .version(let expected, let received): "version \(received), expected \(expected)"
            case .addressType(let type): "address type \(type)"
            case .unexpectedBytes: "bytes sent before the client's next message"
            }
        }
    }

    /// The reply code the proxy sent (REP, CD, or the RFC 1929 status), for the errors that carry one.
    public var replyCode: UInt8? {
        switch self {
        case .generalServerFailure: 1
        case .connectionNotAllowed: 2
        case .networkUnreachable: 3
        case .hostUnreachable: 4
        case .connectionRefused: 5
        case .ttlExpired: 6
        case .commandNotSupported: 7
        case .addressTypeNotSupported: 8
        case .unassignedReply(let code), .unknownSOCKS4Reply(let code): code
        case .requestRejected: 91
        case .identdUnreachable: 92
        case .identdMismatch: 93
        case .noAcceptableAuthenticationMethod: 0xFF
        case .unofferedAuthenticationMethod(let method): method
        case .authenticationFailed(let status): status
        default: nil
        }
    }

    /// The error for a SOCKS 5 REP other than 00.
    package static func socks5Reply(_ code: UInt8) -> SOCKSError {
        switch code {
        case 1: .generalServerFailure
        case 2: .connectionNotAllowed
        case 3: .networkUnreachable
        case 4: .hostUnreachable
        case 5: .connectionRefused
        case 6: .ttlExpired
        case 7: .commandNotSupported
        case 8: .addressTypeNotSupported
        default: .unassignedReply(code)
        }
    }

    /// The error for a SOCKS 4 CD other than 90.
    package static func socks4Reply(_ code: UInt8) -> SOCKSError {
        switch code {
        case 91: .requestRejected
        case 92: .identdUnreachable
        case 93: .identdMismatch
        default: .unknownSOCKS4Reply(code)
        }
    }

    /// One line.
    public var description: String {
        switch self {
        case .generalServerFailure: "SOCKS5 proxy: general server failure (01)"
        case .connectionNotAllowed: "SOCKS5 proxy: connection not allowed by ruleset (02)"
        case .networkUnreachable: "SOCKS5 proxy: network unreachable (03)"
        case .hostUnreachable: "SOCKS5 proxy: host unreachable (04)"
        case .connectionRefused: "SOCKS5 proxy: connection refused (05)"
        case .ttlExpired: "SOCKS5 proxy: TTL expired (06)"
        case .commandNotSupported: "SOCKS5 proxy: command not supported (07)"
        case .addressTypeNotSupported: "SOCKS5 proxy: address type not supported (08)"
        case .unassignedReply(let code): "SOCKS5 proxy: unassigned reply \(code)"
        case .requestRejected: "SOCKS4 proxy: request rejected or failed (91)"
        case .identdUnreachable: "SOCKS4 proxy: cannot reach identd on the client (92)"
        case .identdMismatch: "SOCKS4 proxy: identd reports another user ID (93)"
        case .unknownSOCKS4Reply(let code): "SOCKS4 proxy: unknown reply \(code)"
        case .noAcceptableAuthenticationMethod: "SOCKS5 proxy: no acceptable authentication method"
        case .unofferedAuthenticationMethod(let method): "SOCKS5 proxy chose authentication method \(method), not offered"
        case .authenticationFailed(let status): "SOCKS5 proxy refused the user name and password (status \(status))"
        case .malformedReply(let what, let offset): "malformed SOCKS reply at byte \(offset): \(what)"
        case .closedDuringHandshake(let offset): "the SOCKS proxy closed the connection after \(offset) bytes"
        case .hostNameTooLong(let length, let limit): "host name of \(length) bytes; SOCKS carries \(limit) at most"
        case .invalidHostName: "the host name is empty or holds a NUL byte"
        case .userNameTooLong(let length): "SOCKS5 user name of \(length) bytes; 255 at most"
        case .passwordTooLong(let length): "SOCKS5 password of \(length) bytes; 255 at most"
        case .invalidUserID: "the SOCKS4 user ID holds a NUL byte"
        case .addressFamilyNotSupported: "SOCKS4 carries IPv4 addresses only"
        case .invalidPort(let port): "port \(port) is outside 0...65535"
        }
    }
}
