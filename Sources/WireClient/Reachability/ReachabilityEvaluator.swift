/// Reachability as a pure function of a snapshot. No I/O, no clock: the managers feed it
/// snapshots; tests feed it values.
package enum ReachabilityEvaluator {
    /// The path to `target` in `snapshot`.
    ///
    /// - `.anyRoute`: reachable iff some unicast default route (outside the local table) leaves through an
    ///   interface that is up and has a usable address of the route's family; the path is the route with the
    ///   lowest metric, then IPv4 before IPv6, then the lowest interface index.
    /// - `.addresses`: reachable iff one of them is, in order: by the kernel's lookup when the snapshot has one,
    ///   else by the longest matching prefix of `routes`; a unicast route must leave through an interface that
    ///   is up, a local route or a loopback destination is reachable via loopback, and `unreachable`,
    ///   `prohibit`, `blackhole` or no route are not reachable.
    package static func path(for target: ReachabilityTarget, in snapshot: ReachabilitySnapshot) -> ReachabilityPath {
        let links = Dictionary(snapshot.links.map { ($0.index, $0) }, uniquingKeysWith: { first, _ in first })
        switch target {
        case .anyRoute: return defaultPath(snapshot, links)
        case .addresses(let destinations): return addressPath(destinations, snapshot, links)
        }
    }

    private struct Candidate {
        var link: ReachabilitySnapshot.Link
        var metric: UInt32
        var family: ReachabilitySnapshot.AddressFamily

        /// Lowest metric, then IPv4 before IPv6, then lowest interface index.
        func isPreferred(to other: Candidate) -> Bool {
            if metric != other.metric { return metric < other.metric }
            if family != other.family { return family == .ipv4 }
            return link.index < other.link.index
        }
    }

    private static func defaultPath(_ snapshot: ReachabilitySnapshot, _ links: [Int: ReachabilitySnapshot.Link])
        -> ReachabilityPath
    {
        var candidates: [Candidate] = []
        for route in snapshot.routes where route.isDefault && route.type == .unicast && route.table != localTable {
            let family = route.destination.family
            let usable = route.outputInterfaces.lazy.compactMap { links[$0] }.first { link in
                link.isUp
                    && snapshot.addresses.contains {
                        $0.interfaceIndex == link.index && $0.address.family == family && $0.isUsableForDefaultRoute
                    }
            }
            if let usable { candidates.append(Candidate(link: usable, metric: route.metric, family: family)) }
        }
        guard let best = candidates.min(by: { $0.isPreferred(to: $1) }) else { return .notReachable }
        return ReachabilityPath(
            through: best.link,
            hasIPv4Route: candidates.contains { $0.family == .ipv4 },
            hasIPv6Route: candidates.contains { $0.family == .ipv6 }
        )
    }

    private static func addressPath(
        _ destinations: [ReachabilitySnapshot.IPAddress], _ snapshot: ReachabilitySnapshot,
        _ links: [Int: ReachabilitySnapshot.Link]
    ) -> ReachabilityPath {
        var chosen: ReachabilitySnapshot.Link?
        var hasIPv4 = false
        var hasIPv6 = false
        for destination in destinations {
            guard let link = exit(for: destination, snapshot, links) else { continue }
            if chosen == nil { chosen = link }
            if destination.family == .ipv4 { hasIPv4 = true } else { hasIPv6 = true }
        }
        guard let chosen else { return .notReachable }
        return ReachabilityPath(through: chosen, hasIPv4Route: hasIPv4, hasIPv6Route: hasIPv6)
    }

    static let localTable: UInt32 = 255

    /// The interface traffic to `destination` leaves through, nil when it cannot leave.
    private static func exit(
        for destination: ReachabilitySnapshot.IPAddress, _ snapshot: ReachabilitySnapshot,
        _ links: [Int: ReachabilitySnapshot.Link]
    ) -> ReachabilitySnapshot.Link? {
        if let lookup = snapshot.lookups[destination] {
            switch lookup {
            case .failed: return nil
            case .route(let type, let interface): return exit(type: type, interface: interface, links)
            }
        }
        if destination.isLoopback { return loopback(links) }
        // Longest prefix first, then the lowest metric; the local table (the machine's own addresses) wins a tie.
        let matching = snapshot.routes.filter {
            $0.destination.family == destination.family && destination.hasPrefix($0.destination, length: $0.prefixLength)
                && $0.type != .broadcast && $0.type != .multicast && $0.type != .anycast
        }
        let best = matching.min { a, b in
            if a.prefixLength != b.prefixLength { return a.prefixLength > b.prefixLength }
            if (a.table == localTable) != (b.table == localTable) { return a.table == localTable }
            return a.metric < b.metric
        }
        guard let best else { return nil }
        return exit(
            type: best.type, interface: best.outputInterfaces.first { links[$0]?.isUp == true } ?? best.outputInterfaces.first,
            links)
    }

    private static func exit(type: ReachabilitySnapshot.RouteType, interface: Int?, _ links: [Int: ReachabilitySnapshot.Link])
        -> ReachabilitySnapshot.Link?
    {
        switch type {
        case .local: return loopback(links)
        case .unicast:
            guard let interface, let link = links[interface], link.isUp else { return nil }
            return link
        default: return nil
        }
    }

    /// The loopback interface when it is up (`lo` reports no carrier state: `IFF_UP` is what counts).
    private static func loopback(_ links: [Int: ReachabilitySnapshot.Link]) -> ReachabilitySnapshot.Link? {
        links.values.filter { $0.kind == .loopback && $0.flags & ReachabilitySnapshot.Link.flagUp != 0 }.min {
            $0.index < $1.index
        }
    }
}
