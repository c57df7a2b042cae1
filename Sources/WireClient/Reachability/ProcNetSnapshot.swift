/// A snapshot from procfs and sysfs, for when no netlink socket can be opened: links from
/// `<sysfs>/class/net/*` (`ifindex`, `flags`, `operstate`), IPv4 routes from `<proc>/net/route`, IPv6 routes from
/// `<proc>/net/ipv6_route`, IPv6 addresses from `<proc>/net/if_inet6`. procfs lists no IPv4 addresses per
/// interface, so an interface with a directly connected IPv4 route (no gateway) counts as having an IPv4 address.
/// The parsers are pure and skip lines they cannot read.
package enum ProcNetSnapshot {
    /// Reads the files under `procRoot` and `classifier.sysfsRoot`.
    package static func read(procRoot: String = "/proc", classifier: InterfaceClassifier = InterfaceClassifier())
        -> ReachabilitySnapshot
    {
        let netDirectory = "\(classifier.sysfsRoot)/class/net"
        let links = SysfsFile.names(in: netDirectory).compactMap { name -> ReachabilitySnapshot.Link? in
            let directory = "\(netDirectory)/\(name)"
            guard let index = SysfsFile.read("\(directory)/ifindex").flatMap({ Int(SysfsFile.trimmed($0)) }) else { return nil }
            let flags =
                SysfsFile.read("\(directory)/flags").flatMap { text -> UInt32? in
                    let trimmed = SysfsFile.trimmed(text)
                    return UInt32(trimmed.hasPrefix("0x") ? trimmed.dropFirst(2) : trimmed, radix: 16)
                } ?? 0
            let state = SysfsFile.read("\(directory)/operstate").map {
                ReachabilitySnapshot.OperationalState(text: SysfsFile.trimmed($0))
            }
            return ReachabilitySnapshot.Link(
                index: index, name: name, kind: classifier.kind(ofInterface: name), flags: flags,
                operationalState: state ?? .unknown
            )
        }
        return snapshot(
            links: links,
            ipv4Routes: SysfsFile.read("\(procRoot)/net/route") ?? "",
            ipv6Routes: SysfsFile.read("\(procRoot)/net/ipv6_route") ?? "",
            ipv6Addresses: SysfsFile.read("\(procRoot)/net/if_inet6") ?? ""
        )
    }

    /// The snapshot these file contents describe (`links` already read from sysfs).
    package static func snapshot(
        links: [ReachabilitySnapshot.Link], ipv4Routes: String, ipv6Routes: String, ipv6Addresses: String
    ) -> ReachabilitySnapshot {
        let indexes = Dictionary(links.map { ($0.name, $0.index) }, uniquingKeysWith: { first, _ in first })
        var snapshot = ReachabilitySnapshot(links: links)
        // /proc/net/route: Iface Destination Gateway Flags RefCnt Use Metric Mask ...; addresses are the in_addr
        // value printed as a host-order hex number.
        for line in ipv4Routes.split(whereSeparator: \.isNewline).dropFirst() {
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count >= 8, let index = indexes[String(fields[0])],
                let destination = UInt32(fields[1], radix: 16), let flags = UInt32(fields[3], radix: 16),
                let metric = UInt32(fields[6]), let mask = UInt32(fields[7], radix: 16),
                let address = ReachabilitySnapshot.IPAddress(bytes: littleEndianBytes(destination))
            else { continue }
            // RTF_UP 0x1, RTF_GATEWAY 0x2, RTF_REJECT 0x200.
            guard flags & 0x1 != 0 else { continue }
            snapshot.routes.append(
                ReachabilitySnapshot.Route(
                    destination: address, prefixLength: mask.nonzeroBitCount,
                    type: flags & 0x200 != 0 ? .unreachable : .unicast, outputInterfaces: [index], metric: metric
                ))
            if flags & 0x2 == 0, flags & 0x200 == 0, mask != 0 {
                snapshot.addresses.append(
                    ReachabilitySnapshot.Address(interfaceIndex: index, address: address, prefixLength: mask.nonzeroBitCount))
            }
        }
        // /proc/net/ipv6_route: dest dest_len src src_len next_hop metric refcnt use flags iface (hex fields).
        for line in ipv6Routes.split(whereSeparator: \.isNewline) {
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count >= 10, let index = indexes[String(fields[9])],
                let destination = hexBytes(fields[0]).flatMap(ReachabilitySnapshot.IPAddress.init(bytes:)),
                let length = Int(fields[1], radix: 16), let metric = UInt32(fields[5], radix: 16),
                let flags = UInt32(fields[8], radix: 16)
            else { continue }
            // RTF_UP 0x1, RTF_REJECT 0x200, RTF_LOCAL 0x80000000.
            guard flags & 0x1 != 0 else { continue }
            let type: ReachabilitySnapshot.RouteType =
                flags & 0x200 != 0 ? .unreachable : flags & 0x8000_0000 != 0 ? .local : .unicast
            snapshot.routes.append(
                ReachabilitySnapshot.Route(
                    destination: destination, prefixLength: length, type: type, outputInterfaces: [index], metric: metric,
                    table: type == .local ? ReachabilityEvaluator.localTable : 254
                ))
        }
        // /proc/net/if_inet6: address ifindex prefix_len scope flags name.
        for line in ipv6Addresses.split(whereSeparator: \.isNewline) {
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count >= 6, let address = hexBytes(fields[0]).flatMap(ReachabilitySnapshot.IPAddress.init(bytes:)),
                let index = Int(fields[1], radix: 16), let length = Int(fields[2], radix: 16),
                let scope = UInt8(fields[3], radix: 16), let flags = UInt32(fields[4], radix: 16)
            else { continue }
            // The scope here is IPv6's (0x00 global, 0x10 host, 0x20 link, 0x40 site), not RT_SCOPE_*.
            let addressScope: ReachabilitySnapshot.Address.Scope =
                switch scope {
                case 0x00: .global
                case 0x10: .host
                case 0x20: .link
                default: .site
                }
            snapshot.addresses.append(
                ReachabilitySnapshot.Address(
                    interfaceIndex: index, address: address, prefixLength: length, scope: addressScope,
                    isTentative: flags & 0x48 != 0
                ))
        }
        return snapshot
    }

    private static func littleEndianBytes(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    private static func hexBytes(_ text: Substring) -> [UInt8]? {
        guard text.count == 32 else { return nil }
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
