import Testing
import WireTestSupport
import Wire

/// The routing netlink parser on hand-built, truncated, lying and random datagrams: every malformed one gives a
/// typed error at the right offset, none traps; and on what the kernel really sends.
@Suite struct RouteNetlinkParserTests {
    /// A message: nlmsghdr (host order) then `body`, with `length` overriding nlmsg_len.
    static func message(type: UInt16, sequence: UInt32 = 7, body: [UInt8], length: UInt32? = nil) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendHost(length ?? UInt32(16 + body.count))
        bytes.appendHost(type)
        bytes.appendHost(UInt16(0))
        bytes.appendHost(sequence)
        bytes.appendHost(UInt32(0))
        return bytes + body
    }

    /// An attribute, padded to 4 bytes.
    static func attribute(_ type: UInt16, _ payload: [UInt8], length: UInt16? = nil) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendHost(length ?? UInt16(4 + payload.count))
        bytes.appendHost(type)
        bytes += payload
        while bytes.count % 4 != 0 { bytes.append(0) }
        return bytes
    }

    static func ifinfo(index: Int32, type: UInt16 = 1, flags: UInt32 = 0x41) -> [UInt8] {
        var bytes: [UInt8] = [0, 0]
        bytes.appendHost(type)
        bytes.appendHost(index)
        bytes.appendHost(flags)
        bytes.appendHost(UInt32(0))
        return bytes
    }

    static func rtmsg(family: UInt8 = 2, length: UInt8 = 0, table: UInt8 = 254, type: UInt8 = 1) -> [UInt8] {
        [family, length, 0, 0, table, 3, 0, type, 0, 0, 0, 0]
    }

    static let link = message(type: 16, body: ifinfo(index: 2) + attribute(3, Array("eth0".utf8) + [0]) + attribute(16, [6]))
    static let route: [UInt8] = {
        var oif: [UInt8] = []
        oif.appendHost(Int32(2))
        var priority: [UInt8] = []
        priority.appendHost(UInt32(100))
        return message(type: 24, body: rtmsg() + attribute(5, [10, 0, 0, 1]) + attribute(4, oif) + attribute(6, priority))
    }()

    @Test func wellFormedMessagesDecode() throws {
        let address = Self.message(
            type: 20, body: [2, 24, 0, 0, 2, 0, 0, 0] + Self.attribute(2, [192, 0, 2, 9]) + Self.attribute(1, [192, 0, 2, 10]))
        let messages = try RouteNetlinkParser.messages(
            in: Self.link + Self.route + address + Self.message(type: 3, body: [0, 0, 0, 0]))
        #expect(messages.map(\.sequence) == [7, 7, 7, 7])
        #expect(
            messages[0].payload
                == .link(NetlinkLink(index: 2, name: "eth0", hardwareType: 1, flags: 0x41, operationalState: 6), isDeleted: false)
        )
        #expect(
            messages[1].payload
                == .route(
                    NetlinkRoute(
                        family: 2, destinationLength: 0, table: 254, type: 1, scope: 0, destination: [], gateway: [10, 0, 0, 1],
                        outputInterfaces: [2], priority: 100
                    ), isDeleted: false))
        // IFA_LOCAL wins over IFA_ADDRESS (they differ on point-to-point links).
        #expect(
            messages[2].payload
                == .address(
                    NetlinkAddress(family: 2, prefixLength: 24, flags: 0, scope: 0, interfaceIndex: 2, bytes: [192, 0, 2, 9]),
                    isDeleted: false))
        #expect(messages[3].payload == .done)
        var error: [UInt8] = []
        error.appendHost(Int32(-101))
        #expect(
            try RouteNetlinkParser.messages(in: Self.message(type: 2, body: error + [UInt8](repeating: 0, count: 16))).first?
                .payload == .error(errno: 101))
    }

    @Test func routesOfOtherFamiliesAreSkippedNotRefused() throws {
        // An AF_UNSPEC dump lists multicast (128) and MPLS (28) routes beside the IP ones: the datagram still parses.
        let multicast = Self.message(type: 24, body: Self.rtmsg(family: 128) + Self.attribute(1, [1, 2, 3, 4]))
        let mpls = Self.message(type: 25, body: Self.rtmsg(family: 28) + Self.attribute(5, [0, 0, 1]))
        let messages = try RouteNetlinkParser.messages(in: multicast + Self.route + mpls)
        #expect(messages.map(\.payload) == [.other(type: 24), messages[1].payload, .other(type: 25)])
        guard case .route(let route, _) = messages[1].payload else {
            Issue.record("the IPv4 route between them was not read")
            return
        }
        #expect(route.family == 2 && route.gateway == [10, 0, 0, 1])
    }

    @Test func framingErrorsAreTypedWithTheirOffset() {
        func failure(_ datagram: [UInt8]) -> RouteNetlinkParseError? {
            do {
                _ = try RouteNetlinkParser.messages(in: datagram)
                return nil
            } catch {
                return error
            }
        }
        let link = Self.link
        #expect(failure(Array(link[..<10])) == RouteNetlinkParseError(offset: 0, reason: .truncatedHeader(remaining: 10)))
        #expect(failure(link + [1, 2, 3]) == RouteNetlinkParseError(offset: link.count, reason: .truncatedHeader(remaining: 3)))
        #expect(
            failure(Self.message(type: 16, body: [], length: 8))
                == RouteNetlinkParseError(offset: 0, reason: .badMessageLength(declared: 8, remaining: 16)))
        #expect(
            failure(Self.message(type: 16, body: [0, 0], length: 4096))
                == RouteNetlinkParseError(offset: 0, reason: .badMessageLength(declared: 4096, remaining: 18)))
        #expect(
            failure(Self.message(type: 24, body: [2, 0, 0]))
                == RouteNetlinkParseError(offset: 0, reason: .truncatedBody(type: 24, needed: 12, available: 3)))
        #expect(
            failure(Self.message(type: 2, body: [0]))
                == RouteNetlinkParseError(offset: 0, reason: .truncatedBody(type: 2, needed: 4, available: 1)))
        // An attribute whose rta_len runs past the message, or is below its own header.
        #expect(
            failure(Self.message(type: 16, body: Self.ifinfo(index: 1) + Self.attribute(3, [0x41, 0], length: 200)))
                == RouteNetlinkParseError(offset: 32, reason: .badAttributeLength(declared: 200, remaining: 8)))
        #expect(
            failure(Self.message(type: 16, body: Self.ifinfo(index: 1) + Self.attribute(3, [], length: 2)))
                == RouteNetlinkParseError(offset: 32, reason: .badAttributeLength(declared: 2, remaining: 4)))
        #expect(
            failure(Self.message(type: 16, body: Self.ifinfo(index: 1) + [1, 0]))
                == RouteNetlinkParseError(offset: 32, reason: .badAttributeLength(declared: 2, remaining: 2)))
        // A gateway of 3 bytes for IPv4, an operational state of 0 bytes.
        #expect(
            failure(Self.message(type: 24, body: Self.rtmsg() + Self.attribute(5, [10, 0, 1])))
                == RouteNetlinkParseError(offset: 28, reason: .badAttributeSize(type: 5, size: 3)))
        #expect(
            failure(Self.message(type: 16, body: Self.ifinfo(index: 1) + Self.attribute(16, [])))
                == RouteNetlinkParseError(offset: 32, reason: .badAttributeSize(type: 16, size: 0)))
        // A multipath next hop shorter than its header.
        #expect(
            failure(Self.message(type: 24, body: Self.rtmsg() + Self.attribute(9, [4, 0, 0, 0])))
                == RouteNetlinkParseError(offset: 32, reason: .badAttributeLength(declared: 4, remaining: 4)))
    }

    /// Every truncation and every single-byte corruption of valid datagrams, then random bytes: an answer or a
    /// typed error, never a trap (the fuzz target runs the same function without a bound).
    @Test func truncatedCorruptedAndRandomBytesNeverTrap() {
        let valid = Self.link + Self.route
        for end in 0...valid.count { _ = try? RouteNetlinkParser.messages(in: Array(valid[..<end])) }
        for index in valid.indices {
            for value: UInt8 in [0, 1, 3, 4, 0x7F, 0x80, 0xFF] {
                var corrupted = valid
                corrupted[index] = value
                _ = try? RouteNetlinkParser.messages(in: corrupted)
            }
        }
        var random = SplitMix64(seed: 0x5EED_0F_0A_11)
        for _ in 0..<5_000 {
            let count = Int.random(in: 0..<200, using: &random)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            // Plausible lengths reach deeper than pure noise.
            if bytes.count >= 16 {
                bytes.replaceSubrange(0..<4, with: [UInt8(truncatingIfNeeded: bytes.count), 0, 0, 0])
                bytes.replaceSubrange(4..<6, with: [[16, 20, 24, 2][Int.random(in: 0..<4, using: &random)], 0])
            }
            _ = try? RouteNetlinkParser.messages(in: bytes)
        }
    }

    /// The kernel's own answers parse: a dump of links has a loopback and ends with DONE.
    @Test(.exclusiveIO) func kernelDumpsParse() throws {
        let socket = try RouteNetlinkSocket(groups: 0)
        let links = try socket.exchange(
            RouteNetlinkRequest.dump(.links, sequence: 41), sequence: 41, isDump: true, timeout: .seconds(5))
        #expect(
            links.contains {
                if case .link(let link, false) = $0.payload { link.hardwareType == 772 && link.name == "lo" } else { false }
            })
        let routes = try socket.exchange(
            RouteNetlinkRequest.dump(.routes, sequence: 42), sequence: 42, isDump: true, timeout: .seconds(5))
        #expect(routes.contains { if case .route = $0.payload { true } else { false } })
        let lookup = try socket.exchange(
            RouteNetlinkRequest.lookup(destination: [127, 0, 0, 1], sequence: 43), sequence: 43, isDump: false,
            timeout: .seconds(5))
        // RTN_LOCAL
        #expect(lookup.contains { if case .route(let route, false) = $0.payload { route.type == 2 } else { false } })
    }
}
