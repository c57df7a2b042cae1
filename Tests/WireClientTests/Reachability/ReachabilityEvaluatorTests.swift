import Testing
import WireClient

/// The status function over snapshot values: every rule of `ReachabilityEvaluator`, no sockets.
@Suite struct ReachabilityEvaluatorTests {
    typealias Snapshot = ReachabilitySnapshot

    static func ip(_ bytes: UInt8...) -> Snapshot.IPAddress { Snapshot.IPAddress(bytes: bytes)! }
    static let any4 = ip(0, 0, 0, 0)
    static let any6 = Snapshot.IPAddress(bytes: [UInt8](repeating: 0, count: 16))!
    static let global6 = Snapshot.IPAddress(bytes: [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1])!
    static let linkLocal6 = Snapshot.IPAddress(bytes: [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1])!
    static let upFlags = Snapshot.Link.flagUp | Snapshot.Link.flagRunning

    static func link(
        _ index: Int, _ name: String, _ kind: InterfaceKind = .wired, flags: UInt32 = upFlags,
        state: Snapshot.OperationalState = .up
    ) -> Snapshot.Link {
        Snapshot.Link(index: index, name: name, kind: kind, flags: flags, operationalState: state)
    }

    static func v4Address(on index: Int) -> Snapshot.Address {
        Snapshot.Address(interfaceIndex: index, address: ip(192, 0, 2, UInt8(index)), prefixLength: 24)
    }

    static func defaultRoute(
        _ family: Snapshot.AddressFamily = .ipv4, via index: Int, metric: UInt32 = 0, type: Snapshot.RouteType = .unicast
    ) -> Snapshot.Route {
        Snapshot.Route(
            destination: family == .ipv4 ? any4 : any6, prefixLength: 0, type: type, outputInterfaces: [index], metric: metric)
    }

    static func status(_ snapshot: Snapshot, _ target: ReachabilityTarget = .anyRoute) -> NetworkReachabilityStatus {
        ReachabilityEvaluator.path(for: target, in: snapshot).status
    }

    @Test func statusesKeepAFNetworkingsRawValuesAndStrings() {
        #expect(NetworkReachabilityStatus.unknown.rawValue == -1)
        #expect(NetworkReachabilityStatus.notReachable.rawValue == 0)
        #expect(NetworkReachabilityStatus.reachableViaWWAN.rawValue == 1)
        #expect(NetworkReachabilityStatus.reachableViaWiFi.rawValue == 2)
        #expect(NetworkReachabilityStatus.unknown.description == "Unknown")
        #expect(NetworkReachabilityStatus.notReachable.description == "Not Reachable")
        #expect(NetworkReachabilityStatus.reachableViaWWAN.description == "Reachable via WWAN")
        #expect(NetworkReachabilityStatus.reachableViaWiFi.description == "Reachable via WiFi")
        #expect(!NetworkReachabilityStatus.unknown.isReachable && !NetworkReachabilityStatus.notReachable.isReachable)
        for kind in InterfaceKind.allCases {
            #expect(NetworkReachabilityStatus(reachableVia: kind) == (kind == .wwan ? .reachableViaWWAN : .reachableViaWiFi))
        }
    }

    @Test func emptySnapshotAndNoDefaultRouteAreNotReachable() {
        #expect(Self.status(Snapshot()) == .notReachable)
        let connectedOnly = Snapshot(
            links: [Self.link(2, "eth0")], addresses: [Self.v4Address(on: 2)],
            routes: [Snapshot.Route(destination: Self.ip(192, 0, 2, 0), prefixLength: 24, outputInterfaces: [2])]
        )
        #expect(Self.status(connectedOnly) == .notReachable)
    }

    @Test func defaultRouteThroughAnUpInterfaceWithAnAddressIsReachable() {
        let snapshot = Snapshot(
            links: [Self.link(2, "eth0")], addresses: [Self.v4Address(on: 2)], routes: [Self.defaultRoute(via: 2)])
        let path = ReachabilityEvaluator.path(for: .anyRoute, in: snapshot)
        #expect(
            path
                == ReachabilityPath(
                    status: .reachableViaWiFi, interfaceName: "eth0", interfaceKind: .wired, hasIPv4Route: true,
                    hasIPv6Route: false))
        #expect(!path.isExpensive)
    }

    /// Every combination of flags and operational state: up iff IFF_UP and IFF_RUNNING and the state is up or unknown.
    @Test(arguments: [Snapshot.OperationalState.unknown, .notPresent, .down, .lowerLayerDown, .testing, .dormant, .up])
    func interfaceStateDecides(state: Snapshot.OperationalState) {
        for flags: UInt32 in [0, Snapshot.Link.flagUp, Snapshot.Link.flagRunning, Self.upFlags] {
            let snapshot = Snapshot(
                links: [Self.link(2, "eth0", flags: flags, state: state)], addresses: [Self.v4Address(on: 2)],
                routes: [Self.defaultRoute(via: 2)]
            )
            let expected = flags == Self.upFlags && (state == .up || state == .unknown)
            #expect(Self.status(snapshot).isReachable == expected, "flags \(flags) state \(state)")
        }
    }

    @Test func defaultRouteNeedsAnAddressOfItsFamily() {
        // An IPv6 default route with only an IPv4 address, or only a link-local or tentative IPv6 address: no.
        let v6Route = Self.defaultRoute(.ipv6, via: 2)
        for addresses in [
            [Self.v4Address(on: 2)],
            [Snapshot.Address(interfaceIndex: 2, address: Self.linkLocal6, prefixLength: 64, scope: .link)],
            [Snapshot.Address(interfaceIndex: 2, address: Self.global6, prefixLength: 64, isTentative: true)],
            [Snapshot.Address(interfaceIndex: 3, address: Self.global6, prefixLength: 64)],
        ] {
            let snapshot = Snapshot(links: [Self.link(2, "eth0"), Self.link(3, "eth1")], addresses: addresses, routes: [v6Route])
            #expect(Self.status(snapshot) == .notReachable)
        }
        let good = Snapshot(
            links: [Self.link(2, "eth0")],
            addresses: [Snapshot.Address(interfaceIndex: 2, address: Self.global6, prefixLength: 64)],
            routes: [v6Route]
        )
        let path = ReachabilityEvaluator.path(for: .anyRoute, in: good)
        #expect(path.status == .reachableViaWiFi && path.hasIPv6Route && !path.hasIPv4Route)
        // A tentative IPv4 address does not count either.
        let tentative = Snapshot(
            links: [Self.link(2, "eth0")],
            addresses: [Snapshot.Address(interfaceIndex: 2, address: Self.ip(10, 0, 0, 2), prefixLength: 8, isTentative: true)],
            routes: [Self.defaultRoute(via: 2)]
        )
        #expect(Self.status(tentative) == .notReachable)
    }

    @Test(arguments: [
        Snapshot.RouteType.local, .broadcast, .anycast, .multicast, .blackhole, .unreachable, .prohibit, .throw, .other,
    ])
    func onlyUnicastDefaultRoutesCount(type: Snapshot.RouteType) {
        let snapshot = Snapshot(
            links: [Self.link(2, "eth0")], addresses: [Self.v4Address(on: 2)], routes: [Self.defaultRoute(via: 2, type: type)])
        #expect(Self.status(snapshot) == .notReachable)
    }

    @Test func localTableDefaultRouteDoesNotCount() {
        var route = Self.defaultRoute(via: 2)
        route.table = 255
        #expect(
            Self.status(Snapshot(links: [Self.link(2, "eth0")], addresses: [Self.v4Address(on: 2)], routes: [route]))
                == .notReachable)
    }

    @Test func chosenRouteIsLowestMetricThenIPv4ThenLowestIndex() {
        let links = [Self.link(2, "eth0"), Self.link(3, "wlan0", .wireless), Self.link(4, "wwan0", .wwan)]
        let addresses = [2, 3, 4].flatMap { index in
            [Self.v4Address(on: index), Snapshot.Address(interfaceIndex: index, address: Self.global6, prefixLength: 64)]
        }
        func chosen(_ routes: [Snapshot.Route]) -> String? {
            ReachabilityEvaluator.path(for: .anyRoute, in: Snapshot(links: links, addresses: addresses, routes: routes))
                .interfaceName
        }
        #expect(chosen([Self.defaultRoute(via: 2, metric: 600), Self.defaultRoute(via: 4, metric: 100)]) == "wwan0")
        #expect(chosen([Self.defaultRoute(.ipv6, via: 3, metric: 100), Self.defaultRoute(via: 4, metric: 100)]) == "wwan0")
        #expect(chosen([Self.defaultRoute(.ipv6, via: 2, metric: 50), Self.defaultRoute(via: 4, metric: 100)]) == "eth0")
        #expect(chosen([Self.defaultRoute(via: 4), Self.defaultRoute(via: 3)]) == "wlan0")
        let cellular = ReachabilityEvaluator.path(
            for: .anyRoute, in: Snapshot(links: links, addresses: addresses, routes: [Self.defaultRoute(via: 4)]))
        #expect(cellular.status == .reachableViaWWAN && cellular.isExpensive && cellular.interfaceKind == .wwan)
        // A better route through a down interface is skipped.
        var downLinks = links
        downLinks[0].operationalState = .down
        let skipped = ReachabilityEvaluator.path(
            for: .anyRoute,
            in: Snapshot(
                links: downLinks, addresses: addresses,
                routes: [Self.defaultRoute(via: 2), Self.defaultRoute(via: 3, metric: 900)])
        )
        #expect(skipped.interfaceName == "wlan0")
    }

    @Test func multipathRouteUsesItsFirstUsableHop() {
        let links = [Self.link(2, "eth0", state: .down), Self.link(3, "eth1")]
        let route = Snapshot.Route(destination: Self.any4, prefixLength: 0, outputInterfaces: [2, 3])
        let path = ReachabilityEvaluator.path(
            for: .anyRoute,
            in: Snapshot(links: links, addresses: [Self.v4Address(on: 2), Self.v4Address(on: 3)], routes: [route]))
        #expect(path.interfaceName == "eth1")
    }

    // MARK: Address targets

    static let lo = link(1, "lo", .loopback, state: .unknown)
    static let addressSnapshot = Snapshot(
        links: [lo, link(2, "eth0"), link(3, "wwan0", .wwan)],
        addresses: [v4Address(on: 2), v4Address(on: 3)],
        routes: [
            defaultRoute(via: 2),
            Snapshot.Route(destination: ip(192, 0, 2, 0), prefixLength: 24, outputInterfaces: [2]),
            Snapshot.Route(destination: ip(198, 51, 100, 0), prefixLength: 24, outputInterfaces: [3]),
            Snapshot.Route(destination: ip(203, 0, 113, 0), prefixLength: 24, type: .unreachable, outputInterfaces: []),
            Snapshot.Route(destination: ip(203, 0, 113, 128), prefixLength: 25, type: .blackhole, outputInterfaces: []),
            Snapshot.Route(destination: ip(192, 0, 2, 2), prefixLength: 32, type: .local, outputInterfaces: [2], table: 255),
        ]
    )

    @Test func addressTargetsUseTheLongestPrefix() {
        func path(_ address: Snapshot.IPAddress) -> ReachabilityPath {
            ReachabilityEvaluator.path(for: .addresses([address]), in: Self.addressSnapshot)
        }
        #expect(path(Self.ip(8, 8, 8, 8)).interfaceName == "eth0")
        #expect(path(Self.ip(198, 51, 100, 7)).status == .reachableViaWWAN)
        #expect(path(Self.ip(203, 0, 113, 5)).status == .notReachable)
        #expect(path(Self.ip(203, 0, 113, 200)).status == .notReachable)
        #expect(path(Self.ip(192, 0, 2, 2)).interfaceKind == .loopback)
        #expect(path(Self.ip(127, 0, 0, 1)).interfaceName == "lo")
        // IPv6 with no IPv6 route: nowhere.
        #expect(path(Self.global6).status == .notReachable)
        #expect(ReachabilityEvaluator.path(for: .addresses([]), in: Self.addressSnapshot).status == .notReachable)
    }

    @Test func kernelLookupsOverrideTheTable() {
        var snapshot = Self.addressSnapshot
        let target = Self.ip(8, 8, 8, 8)
        snapshot.lookups[target] = .failed(errno: 101)
        #expect(ReachabilityEvaluator.path(for: .addresses([target]), in: snapshot).status == .notReachable)
        snapshot.lookups[target] = .route(type: .unicast, outputInterface: 3)
        #expect(ReachabilityEvaluator.path(for: .addresses([target]), in: snapshot).status == .reachableViaWWAN)
        for type in [Snapshot.RouteType.unreachable, .prohibit, .blackhole] {
            snapshot.lookups[target] = .route(type: type, outputInterface: nil)
            #expect(ReachabilityEvaluator.path(for: .addresses([target]), in: snapshot).status == .notReachable)
        }
        snapshot.lookups[target] = .route(type: .local, outputInterface: 1)
        #expect(ReachabilityEvaluator.path(for: .addresses([target]), in: snapshot).interfaceKind == .loopback)
        // A unicast answer through an interface that is down is not reachable.
        snapshot.links[1].flags = 0
        snapshot.lookups[target] = .route(type: .unicast, outputInterface: 2)
        #expect(ReachabilityEvaluator.path(for: .addresses([target]), in: snapshot).status == .notReachable)
    }

    @Test func domainTargetIsReachableIfAnyAddressIs() {
        let path = ReachabilityEvaluator.path(
            for: .addresses([Self.ip(203, 0, 113, 5), Self.ip(198, 51, 100, 1), Self.ip(8, 8, 4, 4)]), in: Self.addressSnapshot)
        #expect(path.interfaceName == "wwan0" && path.hasIPv4Route && !path.hasIPv6Route)
    }

    @Test func loopbackDestinationNeedsLoopbackUp() {
        var snapshot = Self.addressSnapshot
        snapshot.links[0].flags = 0
        #expect(ReachabilityEvaluator.path(for: .addresses([Self.ip(127, 0, 0, 1)]), in: snapshot).status == .notReachable)
    }

    @Test func ipAddressTextAndPrefixes() {
        #expect(Self.ip(192, 0, 2, 1).description == "192.0.2.1")
        #expect(Self.global6.description == "2001:db8::1")
        #expect(Self.any6.description == "::")
        #expect(Snapshot.IPAddress(bytes: [1, 2, 3]) == nil)
        #expect(Self.ip(10, 1, 2, 3).hasPrefix(Self.ip(10, 0, 0, 0), length: 8))
        #expect(Self.ip(10, 1, 2, 3).hasPrefix(Self.ip(10, 0, 0, 0), length: 9))
        #expect(!Self.ip(10, 128, 0, 0).hasPrefix(Self.ip(10, 0, 0, 0), length: 9))
        #expect(!Self.ip(10, 0, 0, 0).hasPrefix(Self.any6, length: 0))
    }
}
