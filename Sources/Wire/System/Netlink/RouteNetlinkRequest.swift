/// The requests reachability sends to the kernel's routing netlink, encoded as bytes (pure, host byte order).
package enum RouteNetlinkRequest {
    /// What a dump lists.
    package enum DumpKind: Sendable {
        /// Every interface (`RTM_GETLINK`).
        case links
        /// Every address of both families (`RTM_GETADDR`).
        case addresses
        /// Every route of both families and every table (`RTM_GETROUTE`).
        case routes
    }

    /// A dump request (`NLM_F_REQUEST | NLM_F_DUMP`) for `kind`, family `AF_UNSPEC`.
    package static func dump(_ kind: DumpKind, sequence: UInt32) -> [UInt8] {
        let (type, body): (UInt16, [UInt8])
        switch kind {
        case .links: (type, body) = (18, [UInt8](repeating: 0, count: 16))  // ifinfomsg
        case .addresses: (type, body) = (22, [UInt8](repeating: 0, count: 8))  // ifaddrmsg
        case .routes: (type, body) = (26, [UInt8](repeating: 0, count: 12))  // rtmsg
        }
        return message(type: type, flags: 0x1 | 0x300, sequence: sequence, body: body)
    }

    /// A route lookup (`RTM_GETROUTE` without `NLM_F_DUMP`): the kernel answers with the one route it would use
    /// for `destination` (4 or 16 bytes, network order), or with an error such as `ENETUNREACH`.
    package static func lookup(destination: [UInt8], sequence: UInt32) -> [UInt8] {
        let isV4 = destination.count == 4
        // rtmsg: family, dst_len, then zeros (table, protocol, scope, type are the kernel's to fill in).
        var body: [UInt8] = [isV4 ? 2 : 10, UInt8(destination.count * 8)] + [UInt8](repeating: 0, count: 10)
        // RTA_DST: rta_len = 4 + address, then the padding to 4 bytes (none for 4 or 16).
        body.appendHost(UInt16(4 + destination.count))
        body.appendHost(UInt16(1))
        body += destination
        return message(type: 26, flags: 0x1, sequence: sequence, body: body)
    }

    private static func message(type: UInt16, flags: UInt16, sequence: UInt32, body: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16 + body.count)
        bytes.appendHost(UInt32(16 + body.count))
        bytes.appendHost(type)
        bytes.appendHost(flags)
        bytes.appendHost(sequence)
        bytes.appendHost(UInt32(0))  // port id: the kernel fills in ours
        return bytes + body
    }
}

extension [UInt8] {
    /// Appends `value`'s bytes in host order, as netlink wants them.
    package mutating func appendHost<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value) { append(contentsOf: $0) }
    }
}

extension SocketAddress {
    /// The IP address's bytes in network order (4 or 16), nil for a Unix-domain address: what a route lookup asks.
    package var ipAddressBytes: [UInt8]? {
        switch storage {
        case .v4(let address, _):
            return Swift.withUnsafeBytes(of: address) { Array($0) }  // s_addr is already in network order
        case .v6(let high, let low, _, _):
            return Swift.withUnsafeBytes(of: high.bigEndian) { Array($0) }
                + Swift.withUnsafeBytes(of: low.bigEndian) { Array($0) }
        case .unix:
            return nil
        }
    }
}
