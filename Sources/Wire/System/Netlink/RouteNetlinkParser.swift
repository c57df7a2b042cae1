/// Decodes routing netlink datagrams. Pure and bounds-checked: every length the kernel (or anyone able to send
/// to the socket) declares is checked against the bytes actually there before it is used, so a malformed
/// datagram gives a `RouteNetlinkParseError`, never a trap. Netlink integers are in host byte order.
package enum RouteNetlinkParser {
    static let headerSize = 16
    static let alignment = 4

    /// The messages of one datagram, in order.
    ///
    /// - Throws: `RouteNetlinkParseError` at the first structure that breaks the framing.
    package static func messages(in datagram: [UInt8]) throws(RouteNetlinkParseError) -> [RouteNetlinkMessage] {
        var messages: [RouteNetlinkMessage] = []
        var offset = 0
        while offset < datagram.count {
            let remaining = datagram.count - offset
            guard remaining >= headerSize else {
                throw RouteNetlinkParseError(offset: offset, reason: .truncatedHeader(remaining: remaining))
            }
            let length = Int(datagram.hostUInt32(at: offset))
            guard length >= headerSize, length <= remaining else {
                throw RouteNetlinkParseError(offset: offset, reason: .badMessageLength(declared: length, remaining: remaining))
            }
            let type = datagram.hostUInt16(at: offset + 4)
            let body = (offset + headerSize)..<(offset + length)
            let payload = try decode(type: type, datagram: datagram, body: body)
            messages.append(
                RouteNetlinkMessage(
                    sequence: datagram.hostUInt32(at: offset + 8),
                    portID: datagram.hostUInt32(at: offset + 12),
                    payload: payload
                ))
            // The last message need not be padded; `min` keeps a short tail from skipping past the end.
            offset = min(offset + aligned(length), datagram.count)
        }
        return messages
    }

    static func aligned(_ length: Int) -> Int { (length + alignment - 1) & ~(alignment - 1) }

    private static func decode(type: UInt16, datagram: [UInt8], body: Range<Int>) throws(RouteNetlinkParseError)
        -> RouteNetlinkMessage.Payload
    {
        // An address or route of another family (an AF_UNSPEC dump also lists MPLS and multicast routes, families 28
        // and 128): not an IP path, and no reason to refuse the datagram around it.
        if [20, 21, 24, 25].contains(type), let family = body.isEmpty ? nil : datagram[body.lowerBound], family != 2, family != 10
        {
            return .other(type: type)
        }
        switch type {
        case 1: return .other(type: type)  // NLMSG_NOOP
        case 2:  // NLMSG_ERROR: a negative errno, then the request's header
            try require(type: type, body: body, size: 4)
            let code = Int32(bitPattern: datagram.hostUInt32(at: body.lowerBound))
            // The kernel sends -errno; a positive or minimal value is not a valid errno: report it unchanged.
            return .error(errno: code == .min ? code : -code)
        case 3: return .done
        case 4: return .overrun
        case 16, 17: return .link(try link(datagram, body, type), isDeleted: type == 17)
        case 20, 21: return .address(try address(datagram, body, type), isDeleted: type == 21)
        case 24, 25: return .route(try route(datagram, body, type), isDeleted: type == 25)
        default: return .other(type: type)
        }
    }

    private static func require(type: UInt16, body: Range<Int>, size: Int) throws(RouteNetlinkParseError) {
        guard body.count >= size else {
            throw RouteNetlinkParseError(
                offset: body.lowerBound - headerSize,
                reason: .truncatedBody(type: type, needed: size, available: body.count)
            )
        }
    }

    /// `ifinfomsg` (16 bytes): family, pad, type u16, index i32, flags u32, change u32.
    private static func link(_ bytes: [UInt8], _ body: Range<Int>, _ type: UInt16) throws(RouteNetlinkParseError) -> NetlinkLink {
        try require(type: type, body: body, size: 16)
        let start = body.lowerBound
        var link = NetlinkLink(
            index: Int32(bitPattern: bytes.hostUInt32(at: start + 4)),
            name: "",
            hardwareType: bytes.hostUInt16(at: start + 2),
            flags: bytes.hostUInt32(at: start + 8),
            operationalState: nil
        )
        try forEachAttribute(bytes, in: (start + 16)..<body.upperBound) { (kind, value) throws(RouteNetlinkParseError) in
            switch kind {
            case 3:  // IFLA_IFNAME, NUL-terminated
                let end = bytes[value].firstIndex(of: 0) ?? value.upperBound
                link.name = String(decoding: bytes[value.lowerBound..<end], as: UTF8.self)
            case 16:  // IFLA_OPERSTATE, one byte
                guard value.count >= 1 else { throw attributeSize(kind, value) }
                link.operationalState = bytes[value.lowerBound]
            default: break
            }
        }
        return link
    }

    /// `ifaddrmsg` (8 bytes): family, prefix length, flags, scope, index u32.
    private static func address(_ bytes: [UInt8], _ body: Range<Int>, _ type: UInt16) throws(RouteNetlinkParseError)
        -> NetlinkAddress
    {
        try require(type: type, body: body, size: 8)
        let start = body.lowerBound
        let family = bytes[start]
        var address = NetlinkAddress(
            family: family,
            prefixLength: bytes[start + 1],
            flags: UInt32(bytes[start + 2]),
            scope: bytes[start + 3],
            interfaceIndex: Int32(bitPattern: bytes.hostUInt32(at: start + 4)),
            bytes: []
        )
        var local: [UInt8]?
        var peer: [UInt8]?
        try forEachAttribute(bytes, in: (start + 8)..<body.upperBound) { (kind, value) throws(RouteNetlinkParseError) in
            switch kind {
            case 1: peer = try addressBytes(bytes, value, family: family, kind: kind)  // IFA_ADDRESS
            case 2: local = try addressBytes(bytes, value, family: family, kind: kind)  // IFA_LOCAL
            case 8:  // IFA_FLAGS, u32
                guard value.count >= 4 else { throw attributeSize(kind, value) }
                address.flags = bytes.hostUInt32(at: value.lowerBound)
            default: break
            }
        }
        address.bytes = local ?? peer ?? []
        return address
    }

    /// `rtmsg` (12 bytes): family, dst_len, src_len, tos, table, protocol, scope, type, flags u32.
    private static func route(_ bytes: [UInt8], _ body: Range<Int>, _ type: UInt16) throws(RouteNetlinkParseError) -> NetlinkRoute
    {
        try require(type: type, body: body, size: 12)
        let start = body.lowerBound
        let family = bytes[start]
        var route = NetlinkRoute(
            family: family, destinationLength: bytes[start + 1], table: UInt32(bytes[start + 4]),
            type: bytes[start + 7], scope: bytes[start + 6], destination: [], gateway: nil,
            outputInterfaces: [], priority: 0
        )
        var outputInterface: Int32?
        var nextHops: [Int32] = []
        try forEachAttribute(bytes, in: (start + 12)..<body.upperBound) { (kind, value) throws(RouteNetlinkParseError) in
            switch kind {
            case 1: route.destination = try addressBytes(bytes, value, family: family, kind: kind)  // RTA_DST
            case 5: route.gateway = try addressBytes(bytes, value, family: family, kind: kind)  // RTA_GATEWAY
            case 4:  // RTA_OIF
                guard value.count >= 4 else { throw attributeSize(kind, value) }
                outputInterface = Int32(bitPattern: bytes.hostUInt32(at: value.lowerBound))
            case 6:  // RTA_PRIORITY
                guard value.count >= 4 else { throw attributeSize(kind, value) }
                route.priority = bytes.hostUInt32(at: value.lowerBound)
            case 15:  // RTA_TABLE
                guard value.count >= 4 else { throw attributeSize(kind, value) }
                route.table = bytes.hostUInt32(at: value.lowerBound)
            case 9: nextHops = try multipathInterfaces(bytes, value)  // RTA_MULTIPATH
            default: break
            }
        }
        route.outputInterfaces = (outputInterface.map { [$0] } ?? []) + nextHops
        return route
    }

    /// The interfaces of `RTA_MULTIPATH`'s `rtnexthop`s (len u16, flags u8, hops u8, ifindex i32, attributes).
    private static func multipathInterfaces(_ bytes: [UInt8], _ range: Range<Int>) throws(RouteNetlinkParseError) -> [Int32] {
        var interfaces: [Int32] = []
        var offset = range.lowerBound
        while offset < range.upperBound {
            let remaining = range.upperBound - offset
            guard remaining >= 8 else {
                throw RouteNetlinkParseError(
                    offset: offset, reason: .badAttributeLength(declared: remaining, remaining: remaining))
            }
            let length = Int(bytes.hostUInt16(at: offset))
            guard length >= 8, length <= remaining else {
                throw RouteNetlinkParseError(offset: offset, reason: .badAttributeLength(declared: length, remaining: remaining))
            }
            interfaces.append(Int32(bitPattern: bytes.hostUInt32(at: offset + 4)))
            offset = min(offset + aligned(length), range.upperBound)
        }
        return interfaces
    }

    /// Calls `body` with each attribute's type (flag bits cleared) and payload range, checking every `rta_len`.
    private static func forEachAttribute(
        _ bytes: [UInt8], in range: Range<Int>,
        _ body: (UInt16, Range<Int>) throws(RouteNetlinkParseError) -> Void
    ) throws(RouteNetlinkParseError) {
        var offset = range.lowerBound
        while offset < range.upperBound {
            let remaining = range.upperBound - offset
            guard remaining >= 4 else {
                throw RouteNetlinkParseError(
                    offset: offset, reason: .badAttributeLength(declared: remaining, remaining: remaining))
            }
            let length = Int(bytes.hostUInt16(at: offset))
            guard length >= 4, length <= remaining else {
                throw RouteNetlinkParseError(offset: offset, reason: .badAttributeLength(declared: length, remaining: remaining))
            }
            // NLA_F_NESTED and NLA_F_NET_BYTEORDER are flags on the type, not part of it.
            try body(bytes.hostUInt16(at: offset + 2) & 0x3FFF, (offset + 4)..<(offset + length))
            offset = min(offset + aligned(length), range.upperBound)
        }
    }

    private static func addressBytes(_ bytes: [UInt8], _ value: Range<Int>, family: UInt8, kind: UInt16)
        throws(RouteNetlinkParseError) -> [UInt8]
    {
        let size: Int
        switch family {
        case 2: size = 4  // AF_INET
        case 10: size = 16  // AF_INET6
        default: throw RouteNetlinkParseError(offset: value.lowerBound - 4, reason: .unknownFamily(family))
        }
        guard value.count == size else { throw attributeSize(kind, value) }
        return Array(bytes[value])
    }

    private static func attributeSize(_ kind: UInt16, _ value: Range<Int>) -> RouteNetlinkParseError {
        RouteNetlinkParseError(offset: value.lowerBound - 4, reason: .badAttributeSize(type: kind, size: value.count))
    }
}

extension [UInt8] {
    /// The host-order `UInt16` at `offset`; the caller has checked that two bytes are there.
    func hostUInt16(at offset: Int) -> UInt16 {
        let value = UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
        #if _endian(big)
        return value.byteSwapped
        #else
        return value
        #endif
    }

    /// The host-order `UInt32` at `offset`; the caller has checked that four bytes are there.
    func hostUInt32(at offset: Int) -> UInt32 {
        let value =
            UInt32(self[offset]) | UInt32(self[offset + 1]) << 8 | UInt32(self[offset + 2]) << 16 | UInt32(self[offset + 3]) << 24
        #if _endian(big)
        return value.byteSwapped
        #else
        return value
        #endif
    }
}
