/// Whether the network (or a host) can be reached, and how: AFNetworking's `AFNetworkReachabilityStatus`, with its
/// raw values and its descriptions.
///
/// On Linux every interface that is not classified `.wwan` counts as "WiFi", AFNetworking's meaning of "not
/// WWAN" (macOS Ethernet reports "WiFi" too); `ReachabilityPath` keeps the real kind of interface.
public enum NetworkReachabilityStatus: Int, Sendable, Hashable, CustomStringConvertible, Codable {
    /// Not known yet: monitoring has not produced a first status.
    case unknown = -1
    /// No route to the destination through an interface that is up.
    case notReachable = 0
    /// Reachable through a cellular (WWAN) interface.
    case reachableViaWWAN = 1
    /// Reachable through any other interface: wired, wireless, tunnel or loopback.
    case reachableViaWiFi = 2

    /// Whether the destination can be reached at all.
    public var isReachable: Bool { self == .reachableViaWWAN || self == .reachableViaWiFi }

    /// AFNetworking's localised string: "Unknown", "Not Reachable", "Reachable via WWAN", "Reachable via WiFi".
    public var description: String {
        switch self {
        case .unknown: "Unknown"
        case .notReachable: "Not Reachable"
        case .reachableViaWWAN: "Reachable via WWAN"
        case .reachableViaWiFi: "Reachable via WiFi"
        }
    }

    /// The status of a path through an interface of `kind`.
    public init(reachableVia kind: InterfaceKind) {
        self = kind == .wwan ? .reachableViaWWAN : .reachableViaWiFi
    }
}
