/// Where a SOCKS proxy is asked to connect.
package enum SOCKSTarget: Hashable, Sendable {
    /// An address the client resolved (SOCKS 4 and 5), or an IP literal.
    case address(SocketAddress)
    /// A name the proxy resolves (SOCKS 4a, SOCKS 5's address type 3).
    case name(String, port: Int)

    /// The target curl 7.88 sends for `host` through a proxy of `kind`, or nil when the client must resolve the name
    /// first (SOCKS 4 and 5, unless the host is an address already). SOCKS 4a sends the host as a name even when it
    /// is an address; SOCKS 5h sends an IP literal as an address (type 1 or 4) and anything else as a name.
    /// - Parameters:
    ///   - host: The URL's host, an IPv6 literal without brackets.
    ///   - port: The URL's port.
    ///   - kind: The proxy's kind.
    package static func forHost(_ host: String, port: Int, through kind: Proxy.Kind) -> SOCKSTarget? {
        let literal = IPv4Literal.dottedQuad(host.utf8).map { _ in host } ?? IPv6Literal.presentation(host.utf8)
        let address = literal.flatMap { try? SocketAddress(ipAddress: $0, port: port) }
        switch kind {
        case .socks4a: return .name(host, port: port)
        case .socks5h: return address.map { .address($0) } ?? .name(host, port: port)
        case .socks4, .socks5, .http, .https: return address.map { .address($0) }
        }
    }
}

/// The address and port the proxy reports in its success reply (BND.ADDR and BND.PORT; SOCKS 4's DSTIP and DSTPORT).
package enum SOCKSBoundAddress: Hashable, Sendable {
    /// An IPv4 or IPv6 address.
    case address(SocketAddress)
    /// A name (SOCKS 5's address type 3), as the bytes sent.
    case name([UInt8], port: Int)
}

/// What the shell does after handing a SOCKS handshake an event.
package enum SOCKSHandshakeAction: Hashable, Sendable {
    /// Write these bytes to the proxy, then read.
    case send([UInt8])
    /// Read more bytes: the reply is not complete.
    case awaitReply
    /// The tunnel is open. `remainder` is what the proxy sent after its reply: the origin's first bytes.
    case established(SOCKSBoundAddress, remainder: [UInt8])
    /// The handshake failed; close the connection.
    case failed(SOCKSError)
}

/// The bytes a proxy sent that the handshake has not consumed, and the offset of the first in all it sent.
private struct ReplyBuffer {
    var bytes: [UInt8] = []
    var offset = 0

    /// Drops `count` consumed bytes.
    mutating func consume(_ count: Int) {
        bytes.removeFirst(count)
        offset += count
    }
}

/// A SOCKS 4 or 4a handshake as a value: one CONNECT request, one 8-byte reply. No I/O; the shell writes what
/// `start()` returns and hands every read to `receive(_:)`, in whatever pieces it arrived.
///
/// An address target makes a SOCKS 4 request; a name makes a SOCKS 4a one (`DSTIP` 0.0.0.1, the name after the
/// user ID).
package struct SOCKS4Handshake: Sendable {
    private enum State: Sendable {
        case initial(request: [UInt8])
        case awaitingReply
        case established
        case failed(SOCKSError)
    }

    private var state: State
    private var buffer = ReplyBuffer()

    /// Prepares the request.
    /// - Parameters:
    ///   - target: An IPv4 address (SOCKS 4) or a name (SOCKS 4a).
    ///   - userID: The user ID (curl sends the proxy's user name); empty by default.
    /// - Throws: `SOCKSError` for a request that cannot be sent: an IPv6 target, a name that is empty, holds a NUL
    ///   or is longer than 254 bytes, a user ID with a NUL, a port outside 0...65535.
    package init(target: SOCKSTarget, userID: String = "") throws(SOCKSError) {
        guard !userID.utf8.contains(0) else { throw .invalidUserID }
        var request: [UInt8] = [4, 1]
        switch target {
        case .address(let address):
            guard case .v4(let networkOrder, let port) = address.storage else { throw .addressFamilyNotSupported }
            let value = UInt32(bigEndian: networkOrder)
            request += [UInt8(port >> 8), UInt8(port & 0xFF)]
            request += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
            request += Array(userID.utf8) + [0]
        case .name(let name, let port):
            guard (0...65535).contains(port) else { throw .invalidPort(port) }
            let nameBytes = Array(name.utf8)
            guard !nameBytes.isEmpty, !nameBytes.contains(0) else { throw .invalidHostName }
            // curl's limit: the name and its NUL in 255 bytes.
            guard nameBytes.count <= 254 else { throw .hostNameTooLong(length: nameBytes.count, limit: 254) }
            request += [UInt8(port >> 8), UInt8(port & 0xFF), 0, 0, 0, 1]
            request += Array(userID.utf8) + [0] + nameBytes + [0]
        }
        state = .initial(request: request)
    }

    /// The request to send first.
    package mutating func start() -> SOCKSHandshakeAction {
        guard case .initial(let request) = state else { return fail(.malformedReply(.unexpectedBytes, offset: 0)) }
        state = .awaitingReply
        return .send(request)
    }

    /// Bytes the proxy sent.
    package mutating func receive(_ bytes: some Collection<UInt8>) -> SOCKSHandshakeAction {
        switch state {
        case .failed(let error):
            return .failed(error)
        case .initial, .established:
            // The proxy speaks before the request, or the shell fed tunnel bytes to a finished handshake.
            return fail(.malformedReply(.unexpectedBytes, offset: buffer.offset))
        case .awaitingReply:
            buffer.bytes.append(contentsOf: bytes)
        }
        let reply = buffer.bytes
        if let version = reply.first, version != 0 {
            return fail(.malformedReply(.version(expected: 0, received: version), offset: buffer.offset))
        }
        if reply.count >= 2, reply[1] != 90 { return fail(.socks4Reply(reply[1])) }
        guard reply.count >= 8 else { return .awaitReply }
        let port = UInt16(reply[2]) << 8 | UInt16(reply[3])
        let value = UInt32(reply[4]) << 24 | UInt32(reply[5]) << 16 | UInt32(reply[6]) << 8 | UInt32(reply[7])
        buffer.consume(8)
        state = .established
        let bound = SocketAddress(storage: .v4(address: value.bigEndian, port: port))
        return .established(.address(bound), remainder: buffer.bytes)
    }

    /// The proxy closed the connection.
    package mutating func endOfStream() -> SOCKSHandshakeAction {
        switch state {
        case .failed(let error): return .failed(error)
        case .established: return .awaitReply
        case .initial, .awaitingReply: return fail(.closedDuringHandshake(offset: buffer.offset + buffer.bytes.count))
        }
    }

    private mutating func fail(_ error: SOCKSError) -> SOCKSHandshakeAction {
        state = .failed(error)
        return .failed(error)
    }
}

/// A SOCKS 5 handshake (RFC 1928) as a value: method negotiation (no authentication, or username and password per
/// RFC 1929 when credentials are given), then CONNECT to an IPv4 or IPv6 address (ATYP 1, 4) or a name (ATYP 3). No
/// I/O; the shell writes what each call returns and hands every read to `receive(_:)`, in whatever pieces it
/// arrived.
package struct SOCKS5Handshake: Sendable {
    private enum State: Sendable {
        case initial
        case awaitingMethod
        case awaitingAuthentication
        case awaitingReply
        case established
        case failed(SOCKSError)
    }

    private var state = State.initial
    private var buffer = ReplyBuffer()
    private let request: [UInt8]
    private let authentication: [UInt8]?

    /// Prepares the messages.
    /// - Parameters:
    ///   - target: An address (ATYP 1 or 4) or a name (ATYP 3, SOCKS 5h).
    ///   - credentials: The user name and password to offer (method 02), or nil to offer only method 00.
    /// - Throws: `SOCKSError` for messages that cannot be sent: a name that is empty, holds a NUL or is longer than
    ///   255 bytes, a user name or password longer than 255 bytes, a Unix socket address, a port outside 0...65535.
    package init(target: SOCKSTarget, credentials: ProxyCredentials? = nil) throws(SOCKSError) {
        var request: [UInt8] = [5, 1, 0]
        let port: Int
        switch target {
        case .address(let address):
            switch address.storage {
            case .v4(let networkOrder, let addressPort):
                let value = UInt32(bigEndian: networkOrder)
                request += [1, UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
                port = Int(addressPort)
            case .v6(let high, let low, let addressPort, _):
                request.append(4)
                for half in [high, low] {
                    for shift in stride(from: 56, through: 0, by: -8) {
                        request.append(UInt8(truncatingIfNeeded: half >> UInt64(shift)))
                    }
                }
                port = Int(addressPort)
            case .unix:
                throw .addressFamilyNotSupported
            }
        case .name(let name, let namePort):
            guard (0...65535).contains(namePort) else { throw .invalidPort(namePort) }
            let nameBytes = Array(name.utf8)
            guard !nameBytes.isEmpty, !nameBytes.contains(0) else { throw .invalidHostName }
            guard nameBytes.count <= 255 else { throw .hostNameTooLong(length: nameBytes.count, limit: 255) }
            request += [3, UInt8(nameBytes.count)] + nameBytes
            port = namePort
        }
        request += [UInt8(port >> 8), UInt8(port & 0xFF)]
        self.request = request
        if let credentials {
            let user = Array(credentials.user.utf8)
            let password = Array(credentials.password.utf8)
            guard user.count <= 255 else { throw .userNameTooLong(length: user.count) }
            guard password.count <= 255 else { throw .passwordTooLong(length: password.count) }
            authentication = [1, UInt8(user.count)] + user + [UInt8(password.count)] + password
        } else {
            authentication = nil
        }
    }

    /// The greeting to send first: the methods offered.
    package mutating func start() -> SOCKSHandshakeAction {
        guard case .initial = state else { return fail(.malformedReply(.unexpectedBytes, offset: 0)) }
        state = .awaitingMethod
        return .send(authentication == nil ? [5, 1, 0] : [5, 2, 0, 2])
    }

    /// Bytes the proxy sent.
    package mutating func receive(_ bytes: some Collection<UInt8>) -> SOCKSHandshakeAction {
        switch state {
        case .failed(let error):
            return .failed(error)
        case .initial, .established:
            return fail(.malformedReply(.unexpectedBytes, offset: buffer.offset))
        case .awaitingMethod, .awaitingAuthentication, .awaitingReply:
            buffer.bytes.append(contentsOf: bytes)
        }
        switch state {
        case .awaitingMethod: return methodSelected()
        case .awaitingAuthentication: return authenticated()
        default: return replied()
        }
    }

    /// The proxy closed the connection.
    package mutating func endOfStream() -> SOCKSHandshakeAction {
        switch state {
        case .failed(let error): return .failed(error)
        case .established: return .awaitReply
        default: return fail(.closedDuringHandshake(offset: buffer.offset + buffer.bytes.count))
        }
    }

    /// VER, METHOD.
    private mutating func methodSelected() -> SOCKSHandshakeAction {
        let reply = buffer.bytes
        if let version = reply.first, version != 5 {
            return fail(.malformedReply(.version(expected: 5, received: version), offset: buffer.offset))
        }
        guard reply.count >= 2 else { return .awaitReply }
        switch reply[1] {
        case 0:
            return sendNext(consuming: 2, then: .awaitingReply, request)
        case 2 where authentication != nil:
            return sendNext(consuming: 2, then: .awaitingAuthentication, authentication!)
        case 0xFF:
            return fail(.noAcceptableAuthenticationMethod)
        case let method:
            return fail(.unofferedAuthenticationMethod(method))
        }
    }

    /// VER, STATUS (RFC 1929 §2). The version byte is not checked, as curl does not: some proxies answer 5.
    private mutating func authenticated() -> SOCKSHandshakeAction {
        let reply = buffer.bytes
        guard reply.count >= 2 else { return .awaitReply }
        guard reply[1] == 0 else { return fail(.authenticationFailed(status: reply[1])) }
        return sendNext(consuming: 2, then: .awaitingReply, request)
    }

    /// VER, REP, RSV, ATYP, BND.ADDR, BND.PORT. RSV is not checked, as curl does not.
    private mutating func replied() -> SOCKSHandshakeAction {
        let reply = buffer.bytes
        if let version = reply.first, version != 5 {
            return fail(.malformedReply(.version(expected: 5, received: version), offset: buffer.offset))
        }
        if reply.count >= 2, reply[1] != 0 { return fail(.socks5Reply(reply[1])) }
        guard reply.count >= 4 else { return .awaitReply }
        let addressLength: Int
        switch reply[3] {
        case 1: addressLength = 4
        case 4: addressLength = 16
        case 3:
            guard reply.count >= 5 else { return .awaitReply }
            addressLength = 1 + Int(reply[4])
        case let type:
            return fail(.malformedReply(.addressType(type), offset: buffer.offset + 3))
        }
        let length = 4 + addressLength + 2
        guard reply.count >= length else { return .awaitReply }
        let port = UInt16(reply[length - 2]) << 8 | UInt16(reply[length - 1])
        let bound: SOCKSBoundAddress
        switch reply[3] {
        case 1:
            let value = reply[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            bound = .address(SocketAddress(storage: .v4(address: value.bigEndian, port: port)))
        case 4:
            let high = reply[4..<12].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let low = reply[12..<20].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            bound = .address(SocketAddress(storage: .v6(high: high, low: low, port: port, scopeID: 0)))
        default:
            bound = .name(Array(reply[5..<(length - 2)]), port: Int(port))
        }
        buffer.consume(length)
        state = .established
        return .established(bound, remainder: buffer.bytes)
    }

    /// Consumes a complete reply and sends the next message; the proxy must then wait for it, so any byte it sent
    /// beyond the reply breaks the protocol.
    private mutating func sendNext(consuming count: Int, then next: State, _ message: [UInt8]) -> SOCKSHandshakeAction {
        buffer.consume(count)
        guard buffer.bytes.isEmpty else { return fail(.malformedReply(.unexpectedBytes, offset: buffer.offset)) }
        state = next
        return .send(message)
    }

    private mutating func fail(_ error: SOCKSError) -> SOCKSHandshakeAction {
        state = .failed(error)
        return .failed(error)
    }
}
