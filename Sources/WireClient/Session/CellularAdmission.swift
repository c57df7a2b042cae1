import Synchronization
@_spi(Locking) import Wire

/// `allowsCellularAccess == false` on Linux: a new connection whose local address belongs to an
/// interface the classifier calls `.wwan` is refused, closed before any request goes out on it, and the task fails
/// with `.notConnectedToInternet` ("cellular access denied").
///
/// The interface comes from the kernel's address list (a routing-netlink dump, the same reader reachability uses):
/// the interface holding the local address, or else the one whose prefix covers it most narrowly (127.0.0.2 on
/// `lo`). A local address no interface claims is admitted; a dump that fails refuses, since the rule cannot be
/// checked. One instance per classifier, so that every session with the same rule shares the same pools.
final class CellularAdmission: ConnectionAdmission {
    let classifier: InterfaceClassifier

    private static let instances = Lock<[InterfaceClassifier: CellularAdmission]>([:])

    private init(classifier: InterfaceClassifier) {
        self.classifier = classifier
    }

    /// The admission for `classifier`, made once.
    static func denying(by classifier: InterfaceClassifier) -> CellularAdmission {
        instances.withLock { instances in
            if let existing = instances[classifier] { return existing }
            let made = CellularAdmission(classifier: classifier)
            instances[classifier] = made
            return made
        }
    }

    func refusal(local: SocketAddress, remote: SocketAddress) -> String? {
        guard let address = local.ipAddressBytes.flatMap(ReachabilitySnapshot.IPAddress.init(bytes:)) else { return nil }
        let snapshot: ReachabilitySnapshot
        do {
            let reader = try NetlinkSnapshotReader(classifier: classifier)
            defer { reader.close() }
            snapshot = try reader.snapshot(lookingUp: [])
        } catch {
            return "cellular access denied, and the interface of \(local) cannot be told: \(error)"
        }
        guard let link = Self.interface(holding: address, in: snapshot), link.kind == .wwan else { return nil }
        return "cellular access denied: \(local) is on \(link.name), a cellular interface"
    }

    /// The interface that holds `address`, or else whose address prefix covers it most narrowly.
    static func interface(holding address: ReachabilitySnapshot.IPAddress, in snapshot: ReachabilitySnapshot)
        -> ReachabilitySnapshot.Link?
    {
        let owner =
            snapshot.addresses.first { $0.address == address }
            ?? snapshot.addresses
            .filter { address.hasPrefix($0.address, length: $0.prefixLength) }
            .max { $0.prefixLength < $1.prefixLength }
        guard let owner else { return nil }
        return snapshot.links.first { $0.index == owner.interfaceIndex }
    }
}

extension NetworkServiceType {
    /// The IP traffic-class byte the service type sets on its connections: DSCP CS1, AF41, EF and
    /// AF21 in the upper six bits; nil for `.default`, which leaves the socket's class alone.
    package var trafficClass: UInt8? {
        switch self {
        case .default: nil
        case .background: 0x20
        case .video: 0x88
        case .voice: 0xB8
        case .responsiveData: 0x48
        }
    }
}

extension SessionConfiguration {
    /// What the connection for `request` must be: its service type's traffic class (so each service type has
    /// connections of its own) and, when cellular access is off, the cellular admission check.
    func connectionRequirements(for request: ClientRequest) -> ConnectionRequirements {
        let serviceType = request.networkServiceType ?? networkServiceType
        let allowsCellular = request.allowsCellularAccess ?? allowsCellularAccess
        return ConnectionRequirements(
            trafficClass: serviceType.trafficClass,
            admission: allowsCellular ? nil : CellularAdmission.denying(by: interfaceClassifier)
        )
    }
}
