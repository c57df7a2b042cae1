/// What the kernel says about the network at one moment: interfaces, their addresses, the routes, and the
/// answers to route lookups for particular destinations. Reachability is a pure function of it
/// (`ReachabilityEvaluator`), so every rule is testable without a socket.
public struct ReachabilitySnapshot: Sendable, Hashable {
    /// The interfaces.
    public var links: [Link]
    /// The addresses of every interface, both families.
    public var addresses: [Address]
    /// The routes of every table, both families.
    public var routes: [Route]
    /// The kernel's answers to route lookups (`RTM_GETROUTE` for one destination), by destination. A destination
    /// missing here is looked up in `routes` instead (longest prefix).
    public var lookups: [IPAddress: RouteLookup]

    /// A snapshot of these parts.
    public init(links: [Link] = [], addresses: [Address] = [], routes: [Route] = [], lookups: [IPAddress: RouteLookup] = [:]) {
        self.links = links
        self.addresses = addresses
        self.routes = routes
        self.lookups = lookups
    }

    /// An IPv4 or IPv6 address, in network byte order.
    public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
        /// 4 bytes (IPv4) or 16 (IPv6).
        public let bytes: [UInt8]

        /// An address from its bytes; nil unless there are 4 or 16.
        public init?(bytes: [UInt8]) {
            guard bytes.count == 4 || bytes.count == 16 else { return nil }
            self.bytes = bytes
        }

        /// The address family.
        public var family: AddressFamily { bytes.count == 4 ? .ipv4 : .ipv6 }

        /// Whether the address is in 127.0.0.0/8 or is ::1.
        public var isLoopback: Bool {
            family == .ipv4 ? bytes[0] == 127 : bytes == [UInt8](repeating: 0, count: 15) + [1]
        }

        /// Whether the first `length` bits equal those of `prefix` (of the same family).
        package func hasPrefix(_ prefix: IPAddress, length: Int) -> Bool {
            guard prefix.family == family, length >= 0, length <= bytes.count * 8 else { return false }
            let whole = length / 8
            guard bytes[..<whole] == prefix.bytes[..<whole] else { return false }
            let rest = length % 8
            guard rest > 0 else { return true }
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - rest))
            return bytes[whole] & mask == prefix.bytes[whole] & mask
        }

        /// Dotted quad or RFC 5952 text.
        public var description: String {
            if family == .ipv4 { return bytes.map(String.init).joined(separator: ".") }
            let groups = stride(from: 0, to: 16, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
            // The longest run of two or more zero groups becomes "::".
            var best: Range<Int>? = nil
            var index = 0
            while index < 8 {
                guard groups[index] == 0 else { index += 1; continue }
                var end = index
                while end < 8, groups[end] == 0 { end += 1 }
                if end - index >= 2, end - index > (best?.count ?? 0) { best = index..<end }
                index = end
            }
            let hex = groups.map { String($0, radix: 16) }
            guard let best else { return hex.joined(separator: ":") }
            return hex[..<best.lowerBound].joined(separator: ":") + "::" + hex[best.upperBound...].joined(separator: ":")
        }
    }

    /// IPv4 or IPv6.
    public enum AddressFamily: Sendable, Hashable {
        /// IPv4.
        case ipv4
        /// IPv6.
        case ipv6
    }

    /// RFC 2863's operational state, as the kernel reports it (`IFLA_OPERSTATE`, sysfs `operstate`).
    public enum OperationalState: Sendable, Hashable {
        /// Not reported (many virtual interfaces): counts as up when the flags say so.
        case unknown
        /// A component is missing.
        case notPresent
        /// Down.
        case down
        /// Down because an interface below it is.
        case lowerLayerDown
        /// In a test mode.
        case testing
        /// Waiting for an external event (802.1X authentication, say).
        case dormant
        /// Up.
        case up

        /// The state of the kernel's numeric code (`IF_OPER_*`); out-of-range codes are `.unknown`.
        package init(code: UInt8) {
            self =
                switch code {
                case 1: .notPresent
                case 2: .down
                case 3: .lowerLayerDown
                case 4: .testing
                case 5: .dormant
                case 6: .up
                default: .unknown
                }
        }

        /// The state of sysfs's `operstate` text (`up`, `down`, `lowerlayerdown`, ...).
        package init(text: some StringProtocol) {
            self =
                switch text {
                case "notpresent": .notPresent
                case "down": .down
                case "lowerlayerdown": .lowerLayerDown
                case "testing": .testing
                case "dormant": .dormant
                case "up": .up
                default: .unknown
                }
        }
    }

    /// A network interface.
    public struct Link: Sendable, Hashable {
        /// The interface index.
        public var index: Int
        /// The interface name (`eth0`).
        public var name: String
        /// What it connects to.
        public var kind: InterfaceKind
        /// The `IFF_*` flags.
        public var flags: UInt32
        /// The operational state.
        public var operationalState: OperationalState

        /// An interface with these properties.
        public init(index: Int, name: String, kind: InterfaceKind, flags: UInt32, operationalState: OperationalState) {
            self.index = index
            self.name = name
            self.kind = kind
            self.flags = flags
            self.operationalState = operationalState
        }

        /// `IFF_UP`: administratively up.
        public static let flagUp: UInt32 = 0x1
        /// `IFF_RUNNING`: the carrier is there.
        public static let flagRunning: UInt32 = 0x40

        /// Whether traffic can leave through it: `IFF_UP` and `IFF_RUNNING` set, and the operational state `up` or
        /// `unknown` (many virtual interfaces never report one); `down`, `dormant`, `lowerLayerDown` (and the
        /// others) count as down.
        public var isUp: Bool {
            let wanted = Self.flagUp | Self.flagRunning
            return flags & wanted == wanted && (operationalState == .up || operationalState == .unknown)
        }
    }

    /// An address of an interface.
    public struct Address: Sendable, Hashable {
        /// The interface it belongs to.
        public var interfaceIndex: Int
        /// The address.
        public var address: IPAddress
        /// The prefix length of its subnet.
        public var prefixLength: Int
        /// Its scope.
        public var scope: Scope
        /// Whether duplicate address detection has not finished, or failed: not usable yet.
        public var isTentative: Bool

        /// An address with these properties.
        public init(interfaceIndex: Int, address: IPAddress, prefixLength: Int, scope: Scope = .global, isTentative: Bool = false)
        {
            self.interfaceIndex = interfaceIndex
            self.address = address
            self.prefixLength = prefixLength
            self.scope = scope
            self.isTentative = isTentative
        }

        /// Where an address is valid (`RT_SCOPE_*`).
        public enum Scope: Sendable, Hashable {
            /// Anywhere (`RT_SCOPE_UNIVERSE`).
            case global
            /// Within a site.
            case site
            /// On the link only (`fe80::/10`).
            case link
            /// On this host only (`::1`).
            case host
            /// Nowhere.
            case nowhere

            /// The scope of the kernel's numeric code (0, 200, 253, 254, 255); other values are `.site`.
            package init(code: UInt8) {
                self =
                    switch code {
                    case 0: .global
                    case 253: .link
                    case 254: .host
                    case 255: .nowhere
                    default: .site
                    }
            }
        }

        /// Whether a default route of its family can use it: any settled IPv4 address, or a settled global IPv6 one.
        package var isUsableForDefaultRoute: Bool {
            guard !isTentative else { return false }
            return address.family == .ipv4 || scope == .global
        }
    }

    /// What a route does with matching packets (`RTN_*`).
    public enum RouteType: Sendable, Hashable {
        /// A gateway or a directly connected destination.
        case unicast
        /// This machine's own address.
        case local
        /// A broadcast address.
        case broadcast
        /// An anycast address.
        case anycast
        /// A multicast route.
        case multicast
        /// Silently discarded.
        case blackhole
        /// Refused with "unreachable".
        case unreachable
        /// Refused with "prohibited".
        case prohibit
        /// Continue in the next table.
        case `throw`
        /// Any other type.
        case other

        /// The type of the kernel's numeric code.
        package init(code: UInt8) {
            self =
                switch code {
                case 1: .unicast
                case 2: .local
                case 3: .broadcast
                case 4: .anycast
                case 5: .multicast
                case 6: .blackhole
                case 7: .unreachable
                case 8: .prohibit
                case 9: .throw
                default: .other
                }
        }
    }

    /// A route.
    public struct Route: Sendable, Hashable {
        /// The destination prefix (`0.0.0.0` or `::` for a default route).
        public var destination: IPAddress
        /// The prefix length: 0 for a default route.
        public var prefixLength: Int
        /// What the route does.
        public var type: RouteType
        /// The interfaces it leaves through (several for a multipath route), in order.
        public var outputInterfaces: [Int]
        /// The metric (`RTA_PRIORITY`): lower is preferred.
        public var metric: UInt32
        /// The routing table (254 main, 255 local).
        public var table: UInt32

        /// A route with these properties.
        public init(
            destination: IPAddress, prefixLength: Int, type: RouteType = .unicast, outputInterfaces: [Int], metric: UInt32 = 0,
            table: UInt32 = 254
        ) {
            self.destination = destination
            self.prefixLength = prefixLength
            self.type = type
            self.outputInterfaces = outputInterfaces
            self.metric = metric
            self.table = table
        }

        /// Whether it is a default route (`0.0.0.0/0` or `::/0`).
        public var isDefault: Bool { prefixLength == 0 }
    }

    /// The kernel's answer to a route lookup for one destination.
    public enum RouteLookup: Sendable, Hashable {
        /// The route it would use: its type and the interface it leaves through.
        case route(type: RouteType, outputInterface: Int?)
        /// No route (`ENETUNREACH`, `EHOSTUNREACH` and the like, errno given).
        case failed(errno: Int32)
    }
}
