import Synchronization
@_spi(Locking) import Wire

/// Takes snapshots over a private routing netlink socket (no multicast groups): dumps of links, addresses and
/// routes, then a route lookup per destination. The socket is opened once, on the thread that starts the watch
/// (so in that thread's network namespace), and closed once by `close()`.
final class NetlinkSnapshotReader: Sendable {
    private let socket: Lock<RouteNetlinkSocket>
    private let sequence = Atomic<UInt32>(0)
    private let classifier: InterfaceClassifier
    /// How long one request may wait for the kernel's answer.
    static let timeout = Duration.seconds(2)

    init(classifier: InterfaceClassifier) throws(IOError) {
        socket = Lock(try RouteNetlinkSocket(groups: 0))
        self.classifier = classifier
    }

    /// A fresh snapshot; throws when the socket is closed or the kernel's answers are unusable.
    func snapshot(lookingUp destinations: [ReachabilitySnapshot.IPAddress]) throws -> ReachabilitySnapshot {
        try socket.withLock { socket throws -> ReachabilitySnapshot in
            // Serialised: one dump at a time per socket (the kernel refuses a second with EBUSY).
            guard socket.isOpen else { throw ReachabilityWatchError.stopped }
            var snapshot = ReachabilitySnapshot()
            for message in try exchange(socket, dump: .links) {
                if case .link(let link, false) = message.payload { snapshot.links.append(convert(link)) }
            }
            for message in try exchange(socket, dump: .addresses) {
                if case .address(let address, false) = message.payload, let converted = Self.convert(address) {
                    snapshot.addresses.append(converted)
                }
            }
            for message in try exchange(socket, dump: .routes) {
                if case .route(let route, false) = message.payload, let converted = Self.convert(route) {
                    snapshot.routes.append(converted)
                }
            }
            for destination in Set(destinations) {
                let sequence = next()
                let request = RouteNetlinkRequest.lookup(destination: destination.bytes, sequence: sequence)
                let answer = try socket.exchange(request, sequence: sequence, isDump: false, timeout: Self.timeout)
                snapshot.lookups[destination] = Self.lookup(answer)
            }
            return snapshot
        }
    }

    /// Closes the socket (once; later calls do nothing).
    func close() {
        socket.withLock { socket in
            if socket.isOpen { try? socket.close() }
        }
    }

    private func next() -> UInt32 { sequence.add(1, ordering: .relaxed).newValue }

    /// The messages of one dump; throws when the kernel ends it with an error.
    private func exchange(_ socket: borrowing RouteNetlinkSocket, dump kind: RouteNetlinkRequest.DumpKind) throws
        -> [RouteNetlinkMessage]
    {
        let sequence = next()
        let messages = try socket.exchange(
            RouteNetlinkRequest.dump(kind, sequence: sequence), sequence: sequence, isDump: true, timeout: Self.timeout)
        if case .error(let errno)? = messages.last?.payload, errno != 0 {
            throw ReachabilityWatchError.kernelRefused(errno: errno)
        }
        return messages
    }

    private func convert(_ link: NetlinkLink) -> ReachabilitySnapshot.Link {
        ReachabilitySnapshot.Link(
            index: Int(link.index), name: link.name,
            kind: classifier.kind(ofInterface: link.name, hardwareType: Int(link.hardwareType)),
            flags: link.flags,
            operationalState: link.operationalState.map(ReachabilitySnapshot.OperationalState.init(code:)) ?? .unknown
        )
    }

    static func convert(_ address: NetlinkAddress) -> ReachabilitySnapshot.Address? {
        guard let ip = ReachabilitySnapshot.IPAddress(bytes: address.bytes) else { return nil }
        // IFA_F_TENTATIVE (0x40) and IFA_F_DADFAILED (0x08): not usable.
        return ReachabilitySnapshot.Address(
            interfaceIndex: Int(address.interfaceIndex), address: ip, prefixLength: Int(address.prefixLength),
            scope: .init(code: address.scope), isTentative: address.flags & 0x48 != 0
        )
    }

    static func convert(_ route: NetlinkRoute) -> ReachabilitySnapshot.Route? {
        let zero = [UInt8](repeating: 0, count: route.family == 2 ? 4 : 16)
        guard route.family == 2 || route.family == 10,
            let destination = ReachabilitySnapshot.IPAddress(bytes: route.destination.isEmpty ? zero : route.destination)
        else { return nil }
        return ReachabilitySnapshot.Route(
            destination: destination, prefixLength: Int(route.destinationLength), type: .init(code: route.type),
            outputInterfaces: route.outputInterfaces.map(Int.init), metric: route.priority, table: route.table
        )
    }

    static func lookup(_ answer: [RouteNetlinkMessage]) -> ReachabilitySnapshot.RouteLookup {
        for message in answer {
            switch message.payload {
            case .route(let route, false):
                return .route(type: .init(code: route.type), outputInterface: route.outputInterfaces.first.map(Int.init))
            case .error(let errno) where errno != 0:
                return .failed(errno: errno)
            default: continue
            }
        }
        return .failed(errno: 0)
    }
}

/// Why a reachability watch could not give a snapshot.
public enum ReachabilityWatchError: Error, Hashable, Sendable {
    /// The watch was stopped.
    case stopped
    /// The kernel refused a dump (errno given).
    case kernelRefused(errno: Int32)
}
