/// The detail behind a `NetworkReachabilityStatus`: which interface the traffic would leave through and what kind
/// it is, and which families have a usable route.
public struct ReachabilityPath: Sendable, Hashable {
    /// AFNetworking's status.
    public var status: NetworkReachabilityStatus
    /// The interface of the chosen route (`eth0`), nil when not reachable.
    public var interfaceName: String?
    /// Its kind, nil when not reachable.
    public var interfaceKind: InterfaceKind?
    /// Whether the path is metered: it leaves through a WWAN interface.
    public var isExpensive: Bool { interfaceKind == .wwan }
    /// Whether an IPv4 route to the target leaves through an interface that is up and has an address.
    public var hasIPv4Route: Bool
    /// Whether an IPv6 route to the target leaves through an interface that is up and has a global address.
    public var hasIPv6Route: Bool

    /// A path with these properties.
    public init(
        status: NetworkReachabilityStatus, interfaceName: String? = nil, interfaceKind: InterfaceKind? = nil,
        hasIPv4Route: Bool = false, hasIPv6Route: Bool = false
    ) {
        self.status = status
        self.interfaceName = interfaceName
        self.interfaceKind = interfaceKind
        self.hasIPv4Route = hasIPv4Route
        self.hasIPv6Route = hasIPv6Route
    }

    /// Nothing known yet.
    public static let unknown = ReachabilityPath(status: .unknown)
    /// No way out.
    public static let notReachable = ReachabilityPath(status: .notReachable)

    /// A reachable path through `link`.
    init(through link: ReachabilitySnapshot.Link, hasIPv4Route: Bool, hasIPv6Route: Bool) {
        self.init(
            status: NetworkReachabilityStatus(reachableVia: link.kind), interfaceName: link.name,
            interfaceKind: link.kind, hasIPv4Route: hasIPv4Route, hasIPv6Route: hasIPv6Route
        )
    }
}

/// What a reachability manager asks about.
package enum ReachabilityTarget: Sendable, Hashable {
    /// Any default route: "is there a network at all" (AFNetworking's zero-address manager).
    case anyRoute
    /// Any of these addresses (an address manager's one, a domain manager's resolved ones; none: not reachable).
    case addresses([ReachabilitySnapshot.IPAddress])
}
