/// One message of the kernel's routing netlink protocol (`NETLINK_ROUTE`), decoded into values: what reachability
/// needs from links, addresses and routes, and the protocol's own control messages.
package struct RouteNetlinkMessage: Hashable, Sendable {
    /// The message's sequence number: the request's for a reply, usually 0 for a notification.
    package var sequence: UInt32
    /// The sender's port id (0 from the kernel; the requester's for a notification it caused).
    package var portID: UInt32
    /// What the message says.
    package var payload: Payload

    /// The decoded body of a message.
    package enum Payload: Hashable, Sendable {
        /// `RTM_NEWLINK` (`isDeleted` false) or `RTM_DELLINK`.
        case link(NetlinkLink, isDeleted: Bool)
        /// `RTM_NEWADDR` or `RTM_DELADDR`.
        case address(NetlinkAddress, isDeleted: Bool)
        /// `RTM_NEWROUTE` or `RTM_DELROUTE`.
        case route(NetlinkRoute, isDeleted: Bool)
        /// `NLMSG_DONE`: the end of a dump.
        case done
        /// `NLMSG_ERROR`: an acknowledgement (`errno` 0) or the failure of a request (a positive errno).
        case error(errno: Int32)
        /// `NLMSG_OVERRUN`: data was lost.
        case overrun
        /// A type reachability does not read (`NLMSG_NOOP`, neighbours, rules, ...).
        case other(type: UInt16)
    }
}

/// A network interface as `RTM_NEWLINK` describes it (`ifinfomsg` and its attributes).
package struct NetlinkLink: Hashable, Sendable {
    /// The interface index.
    package var index: Int32
    /// `IFLA_IFNAME`; empty when the kernel sent none.
    package var name: String
    /// The ARPHRD hardware type (1 Ethernet, 772 loopback, 65534 none, ...).
    package var hardwareType: UInt16
    /// The `IFF_*` flags (`IFF_UP` 0x1, `IFF_RUNNING` 0x40, ...).
    package var flags: UInt32
    /// `IFLA_OPERSTATE` (RFC 2863: 0 unknown ... 6 up), nil when absent.
    package var operationalState: UInt8?

    package init(index: Int32, name: String, hardwareType: UInt16, flags: UInt32, operationalState: UInt8?) {
        self.index = index
        self.name = name
        self.hardwareType = hardwareType
        self.flags = flags
        self.operationalState = operationalState
    }
}

/// An interface address as `RTM_NEWADDR` describes it (`ifaddrmsg` and its attributes).
package struct NetlinkAddress: Hashable, Sendable {
    /// `AF_INET` (2) or `AF_INET6` (10).
    package var family: UInt8
    /// The prefix length.
    package var prefixLength: UInt8
    /// `IFA_F_*` flags, from `IFA_FLAGS` when present (it holds all 32 bits), else the header's 8.
    package var flags: UInt32
    /// `RT_SCOPE_*`: 0 universe (global), 200 site, 253 link, 254 host, 255 nowhere.
    package var scope: UInt8
    /// The interface the address is on.
    package var interfaceIndex: Int32
    /// The address (4 or 16 bytes, network order): `IFA_LOCAL` when present, else `IFA_ADDRESS`.
    package var bytes: [UInt8]

    package init(family: UInt8, prefixLength: UInt8, flags: UInt32, scope: UInt8, interfaceIndex: Int32, bytes: [UInt8]) {
        self.family = family
        self.prefixLength = prefixLength
        self.flags = flags
        self.scope = scope
        self.interfaceIndex = interfaceIndex
        self.bytes = bytes
    }
}

/// A route as `RTM_NEWROUTE` describes it (`rtmsg` and its attributes).
package struct NetlinkRoute: Hashable, Sendable {
    /// `AF_INET` or `AF_INET6`.
    package var family: UInt8
    /// The destination prefix length (0 for a default route).
    package var destinationLength: UInt8
    /// The routing table: `RTA_TABLE` when present, else the header's 8-bit table (254 main, 255 local).
    package var table: UInt32
    /// `RTN_*`: 1 unicast, 2 local, 3 broadcast, ..., 6 blackhole, 7 unreachable, 8 prohibit.
    package var type: UInt8
    /// `RT_SCOPE_*`.
    package var scope: UInt8
    /// `RTA_DST` (network order), empty for a default route.
    package var destination: [UInt8]
    /// `RTA_GATEWAY`, nil for a directly connected route.
    package var gateway: [UInt8]?
    /// `RTA_OIF`, then each next hop's interface of `RTA_MULTIPATH`, in order.
    package var outputInterfaces: [Int32]
    /// `RTA_PRIORITY` (the metric), 0 when absent.
    package var priority: UInt32

    package init(
        family: UInt8, destinationLength: UInt8, table: UInt32, type: UInt8, scope: UInt8,
        destination: [UInt8], gateway: [UInt8]?, outputInterfaces: [Int32], priority: UInt32
    ) {
        self.family = family
        self.destinationLength = destinationLength
        self.table = table
        self.type = type
        self.scope = scope
        self.destination = destination
        self.gateway = gateway
        self.outputInterfaces = outputInterfaces
        self.priority = priority
    }
}

/// A routing netlink datagram that breaks the protocol's framing: where, and which rule.
package struct RouteNetlinkParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    package enum Reason: Hashable, Sendable {
        /// Fewer bytes remain than a `nlmsghdr` (16) needs.
        case truncatedHeader(remaining: Int)
        /// `nlmsg_len` is below the header's size or beyond the datagram's end.
        case badMessageLength(declared: Int, remaining: Int)
        /// The message is too short for its fixed family header (`ifinfomsg`, `ifaddrmsg`, `rtmsg`, `nlmsgerr`).
        case truncatedBody(type: UInt16, needed: Int, available: Int)
        /// `rta_len` is below 4 or beyond the message's end.
        case badAttributeLength(declared: Int, remaining: Int)
        /// An attribute's payload is not the size its type requires (an address of the wrong length).
        case badAttributeSize(type: UInt16, size: Int)
        /// An address family other than `AF_INET`/`AF_INET6` where an address is given.
        case unknownFamily(UInt8)
    }

    /// The byte offset in the datagram where the offending structure starts.
    package var offset: Int
    /// The rule broken.
    package var reason: Reason

    package init(offset: Int, reason: Reason) {
        self.offset = offset
        self.reason = reason
    }

    package var description: String { "malformed routing netlink message at byte \(offset): \(reason)" }
}
