import Testing
import Wire

/// The SOCKS 4, 4a and 5 handshakes as values: the bytes they send, every reply code as its typed error, malformed
/// replies with their offsets, and replies cut in every way.
struct SOCKSHandshakeTests {
    /// Runs a handshake against a scripted proxy: after each message the client sends, the next reply is delivered
    /// in pieces of `piece` bytes. Returns what the client sent and how it ended.
    private static func run(
        start: () -> SOCKSHandshakeAction, receive: ([UInt8]) -> SOCKSHandshakeAction, replies: [[UInt8]], piece: Int
    ) -> (sent: [[UInt8]], end: SOCKSHandshakeAction) {
        var sent: [[UInt8]] = []
        var action = start()
        var replies = replies[...]
        while case .send(let bytes) = action {
            sent.append(bytes)
            guard let reply = replies.popFirst() else { return (sent, .awaitReply) }
            var rest = reply[...]
            action = .awaitReply
            while !rest.isEmpty, action == .awaitReply {
                action = receive(Array(rest.prefix(piece)))
                rest = rest.dropFirst(piece)
            }
        }
        return (sent, action)
    }

    private static func socks5(
        _ target: SOCKSTarget, _ credentials: ProxyCredentials? = nil, replies: [[UInt8]], piece: Int = .max
    ) throws -> (sent: [[UInt8]], end: SOCKSHandshakeAction) {
        var handshake = try SOCKS5Handshake(target: target, credentials: credentials)
        return run(start: { handshake.start() }, receive: { handshake.receive($0) }, replies: replies, piece: piece)
    }

    private static func socks4(
        _ target: SOCKSTarget, userID: String = "", replies: [[UInt8]], piece: Int = .max
    ) throws -> (sent: [[UInt8]], end: SOCKSHandshakeAction) {
        var handshake = try SOCKS4Handshake(target: target, userID: userID)
        return run(start: { handshake.start() }, receive: { handshake.receive($0) }, replies: replies, piece: piece)
    }

    private static let origin = try! SocketAddress(ipAddress: "192.0.2.7", port: 443)
    private static let success4: [UInt8] = [5, 0, 0, 1, 10, 0, 0, 1, 0x1F, 0x90]

    @Test(arguments: [1, 2, 3, .max])
    func socks5WithoutAuthenticationToAName(piece: Int) throws {
        let (sent, end) = try Self.socks5(.name("example.com", port: 443), replies: [[5, 0], Self.success4], piece: piece)
        #expect(sent == [[5, 1, 0], [5, 1, 0, 3, 11] + Array("example.com".utf8) + [0x01, 0xBB]])
        #expect(end == .established(.address(try SocketAddress(ipAddress: "10.0.0.1", port: 8080)), remainder: []))
    }

    @Test(arguments: [1, 4, .max])
    func socks5WithUsernameAndPasswordToAnIPv6Address(piece: Int) throws {
        let target = try SocketAddress(ipAddress: "2001:db8::1", port: 80)
        let bound: [UInt8] = [5, 0, 0, 4] + [UInt8](repeating: 0, count: 15) + [1, 0, 81]
        let (sent, end) = try Self.socks5(
            .address(target), ProxyCredentials(user: "alice", password: "pw"), replies: [[5, 2], [1, 0], bound + [0xAA]],
            piece: piece)
        #expect(sent[0] == [5, 2, 0, 2])
        #expect(sent[1] == [1, 5] + Array("alice".utf8) + [2] + Array("pw".utf8))
        #expect(sent[2] == [5, 1, 0, 4, 0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1, 0, 80])
        // What arrived with the reply's last byte, in the same read, is the tunnel's first bytes.
        let remainder: [UInt8] = bound.count % piece == 0 ? [] : [0xAA]
        #expect(end == .established(.address(try SocketAddress(ipAddress: "::1", port: 81)), remainder: remainder))
    }

    @Test func socks5ToAnIPv4AddressAndABoundName() throws {
        let reply: [UInt8] = [5, 0, 0, 3, 4] + Array("host".utf8) + [0, 80]
        let (sent, end) = try Self.socks5(.address(Self.origin), replies: [[5, 0], reply])
        #expect(sent[1] == [5, 1, 0, 1, 192, 0, 2, 7, 1, 0xBB])
        #expect(end == .established(.name(Array("host".utf8), port: 80), remainder: []))
        // A proxy that chose no authentication though credentials were offered: straight to the request.
        let (skipped, _) = try Self.socks5(.address(Self.origin), ProxyCredentials(user: "u", password: "p"), replies: [[5, 0]])
        #expect(skipped == [[5, 2, 0, 2], [5, 1, 0, 1, 192, 0, 2, 7, 1, 0xBB]])
    }

    @Test(arguments: Array(UInt8(1)...UInt8(10)) + [0x7F, 0xFF])
    func everySOCKS5ReplyCodeIsATypedError(code: UInt8) throws {
        let (_, end) = try Self.socks5(.address(Self.origin), replies: [[5, 0], [5, code, 0, 1, 0, 0, 0, 0, 0, 0]], piece: 1)
        let expected: [UInt8: SOCKSError] = [
            1: .generalServerFailure, 2: .connectionNotAllowed, 3: .networkUnreachable, 4: .hostUnreachable,
            5: .connectionRefused, 6: .ttlExpired, 7: .commandNotSupported, 8: .addressTypeNotSupported,
        ]
        let error = expected[code] ?? .unassignedReply(code)
        #expect(end == .failed(error))
        #expect(error.replyCode == code)
    }

    @Test func authenticationFailuresAreTyped() throws {
        let credentials = ProxyCredentials(user: "u", password: "p")
        #expect(try Self.socks5(.address(Self.origin), replies: [[5, 0xFF]]).end == .failed(.noAcceptableAuthenticationMethod))
        #expect(try Self.socks5(.address(Self.origin), replies: [[5, 2]]).end == .failed(.unofferedAuthenticationMethod(2)))
        #expect(
            try Self.socks5(.address(Self.origin), credentials, replies: [[5, 1]]).end
                == .failed(.unofferedAuthenticationMethod(1)))
        #expect(
            try Self.socks5(.address(Self.origin), credentials, replies: [[5, 2], [1, 1]]).end
                == .failed(.authenticationFailed(status: 1)))
        // curl reads a status 0 whatever the version byte says: some proxies answer 5.
        #expect(try Self.socks5(.address(Self.origin), credentials, replies: [[5, 2], [5, 0]]).sent.count == 3)
    }

    @Test func malformedRepliesNameTheirOffset() throws {
        let credentials = ProxyCredentials(user: "u", password: "p")
        #expect(
            try Self.socks5(.address(Self.origin), replies: [[4, 0]]).end
                == .failed(.malformedReply(.version(expected: 5, received: 4), offset: 0)))
        #expect(
            try Self.socks5(.address(Self.origin), credentials, replies: [[5, 2], [1, 0], [0, 0]]).end
                == .failed(.malformedReply(.version(expected: 5, received: 0), offset: 4)))
        #expect(
            try Self.socks5(.address(Self.origin), replies: [[5, 0], [5, 0, 0, 2, 0]]).end
                == .failed(.malformedReply(.addressType(2), offset: 5)))
        // A proxy that answers ahead of the client's next message breaks the protocol.
        #expect(
            try Self.socks5(.address(Self.origin), replies: [[5, 0, 5]]).end
                == .failed(.malformedReply(.unexpectedBytes, offset: 2)))
        var early = try SOCKS5Handshake(target: .address(Self.origin))
        #expect(early.receive([5]) == .failed(.malformedReply(.unexpectedBytes, offset: 0)))
        #expect(early.receive([0]) == .failed(.malformedReply(.unexpectedBytes, offset: 0)), "failed stays failed")
    }

    @Test func aProxyClosingMidReplyIsReportedWithTheBytesItSent() throws {
        var handshake = try SOCKS5Handshake(target: .name("a", port: 1))
        _ = handshake.start()
        #expect(handshake.receive([5]) == .awaitReply)
        #expect(handshake.endOfStream() == .failed(.closedDuringHandshake(offset: 1)))
        var four = try SOCKS4Handshake(target: .address(Self.origin))
        _ = four.start()
        #expect(four.receive([0, 90, 0]) == .awaitReply)
        #expect(four.endOfStream() == .failed(.closedDuringHandshake(offset: 3)))
    }

    @Test func requestsThatCannotBeSentAreRefusedBeforeAnyByte() throws {
        let long = String(repeating: "a", count: 256)
        #expect(throws: SOCKSError.hostNameTooLong(length: 256, limit: 255)) {
            try SOCKS5Handshake(target: .name(long, port: 80))
        }
        #expect(throws: Never.self) { try SOCKS5Handshake(target: .name(String(long.dropFirst()), port: 80)) }
        #expect(throws: SOCKSError.userNameTooLong(length: 256)) {
            try SOCKS5Handshake(target: .address(Self.origin), credentials: ProxyCredentials(user: long, password: ""))
        }
        #expect(throws: SOCKSError.passwordTooLong(length: 256)) {
            try SOCKS5Handshake(target: .address(Self.origin), credentials: ProxyCredentials(user: "", password: long))
        }
        #expect(throws: SOCKSError.invalidHostName) { try SOCKS5Handshake(target: .name("", port: 80)) }
        #expect(throws: SOCKSError.invalidHostName) { try SOCKS4Handshake(target: .name("a\u{0}b", port: 80)) }
        #expect(throws: SOCKSError.invalidPort(70000)) { try SOCKS5Handshake(target: .name("a", port: 70000)) }
        #expect(throws: SOCKSError.hostNameTooLong(length: 255, limit: 254)) {
            try SOCKS4Handshake(target: .name(String(long.dropFirst()), port: 80))
        }
        #expect(throws: SOCKSError.addressFamilyNotSupported) {
            try SOCKS4Handshake(target: .address(try SocketAddress(ipAddress: "::1", port: 80)))
        }
        #expect(throws: SOCKSError.invalidUserID) { try SOCKS4Handshake(target: .address(Self.origin), userID: "a\u{0}") }
    }

    @Test(arguments: [1, 3, .max])
    func socks4AndSOCKS4a(piece: Int) throws {
        let reply: [UInt8] = [0, 90, 0x1F, 0x90, 10, 0, 0, 2]
        let bound = SOCKSBoundAddress.address(try SocketAddress(ipAddress: "10.0.0.2", port: 8080))
        let four = try Self.socks4(.address(Self.origin), userID: "bob", replies: [reply + [1, 2]], piece: piece)
        #expect(four.sent == [[4, 1, 1, 0xBB, 192, 0, 2, 7] + Array("bob".utf8) + [0]])
        // The read that completed the reply may carry the tunnel's first bytes.
        let withExtra = reply + [1, 2]
        let completing = piece >= withExtra.count ? withExtra.count : (reply.count + piece - 1) / piece * piece
        #expect(four.end == .established(bound, remainder: Array(withExtra[reply.count..<completing])))
        let fourA = try Self.socks4(.name("example.com", port: 80), replies: [reply], piece: piece)
        #expect(fourA.sent == [[4, 1, 0, 80, 0, 0, 0, 1, 0] + Array("example.com".utf8) + [0]])
        #expect(fourA.end == .established(bound, remainder: []))
    }

    @Test(arguments: [91, 92, 93, 0, 89, 255] as [UInt8])
    func everySOCKS4ReplyCodeIsATypedError(code: UInt8) throws {
        let expected: [UInt8: SOCKSError] = [91: .requestRejected, 92: .identdUnreachable, 93: .identdMismatch]
        let end = try Self.socks4(.address(Self.origin), replies: [[0, code, 0, 0, 0, 0, 0, 0]], piece: 1).end
        #expect(end == .failed(expected[code] ?? .unknownSOCKS4Reply(code)))
        #expect(
            try Self.socks4(.address(Self.origin), replies: [[4, 90]]).end
                == .failed(.malformedReply(.version(expected: 0, received: 4), offset: 0)))
    }

    @Test func theTargetFollowsCurlsResolutionRules() throws {
        #expect(SOCKSTarget.forHost("example.com", port: 80, through: .socks5) == nil)
        #expect(SOCKSTarget.forHost("example.com", port: 80, through: .socks4) == nil)
        #expect(SOCKSTarget.forHost("example.com", port: 80, through: .socks5h) == .name("example.com", port: 80))
        #expect(SOCKSTarget.forHost("192.0.2.7", port: 443, through: .socks5h) == .address(Self.origin))
        #expect(SOCKSTarget.forHost("192.0.2.7", port: 443, through: .socks4) == .address(Self.origin))
        #expect(SOCKSTarget.forHost("192.0.2.7", port: 443, through: .socks4a) == .name("192.0.2.7", port: 443))
        #expect(
            SOCKSTarget.forHost("::1", port: 80, through: .socks5h) == .address(try SocketAddress(ipAddress: "::1", port: 80)))
    }
}
