import Foundation
import Testing
import Wire
import WireClient
import WireTestSupport

/// Reachability against a real kernel: a network namespace of its own with a veth pair, changed with iproute2
/// while a manager watches it from a thread that joined the namespace (setns(2)), so its netlink sockets see
/// that namespace only. Needs root and `ip`; CI has both.
@Suite(
    .exclusiveIO,
    .enabled(
        if: NetworkNamespaceFixture.unavailableReason == nil,
        "needs root and iproute2 (ip): \(NetworkNamespaceFixture.unavailableReason ?? "")"))
struct NamespaceReachabilityTests {
    @Test func defaultManagerFollowsLinkAddressAndRoute() async throws {
        let fixture = try NetworkNamespaceFixture()
        defer { fixture.remove() }
        // A loop of the test's own, made before the count (the default shared loop is made on first use and kept).
        let loop = try EventLoop(name: "wire-reach-test")
        defer { loop.shutdown() }
        let manager = NetworkReachabilityManager(source: SystemReachabilitySource(loop: loop))
        let recorder = ReachabilityRecorder(manager)
        try fixture.run { manager.startMonitoring() }
        // The manager's two netlink sockets: the watched one and the one for dumps.
        #expect(try fixture.netlinkSocketsOfThisProcess() == 2)

        // The first callback comes at once, though nothing changed: no default route yet.
        #expect(await recorder.waitForLast(.notReachable) != nil)

        // Address and default route: reachable via the wired veth, reported quickly after the last change.
        try fixture.ip(
            "link set veth1 up", "link set veth0 up", "addr add 10.77.0.1/24 dev veth0",
            "route add default via 10.77.0.2 dev veth0")
        let changed = ContinuousClock.now
        let reachable = try #require(await recorder.waitForLast(.reachableViaWiFi))
        let latency = changed.duration(to: reachable.at)
        #expect(latency < .milliseconds(200), "reported \(latency) after the change")
        #expect(manager.path.interfaceName == "veth0" && manager.path.interfaceKind == .wired && manager.path.hasIPv4Route)
        #expect(!reachable.threadName.hasPrefix("wire-"), "callback ran on \(reachable.threadName)")

        // Link down: not reachable (the kernel also drops the route through it).
        try fixture.ip("link set veth0 down")
        #expect(await recorder.waitForLast(.notReachable) != nil)
        try fixture.ip("link set veth0 up", "route add default via 10.77.0.2 dev veth0")
        #expect(await recorder.waitForLast(.reachableViaWiFi) != nil)

        // Route removed, then the address: not reachable; only changes were delivered, never a repeat.
        try fixture.ip("route del default")
        #expect(await recorder.waitForLast(.notReachable) != nil)
        try fixture.ip("addr del 10.77.0.1/24 dev veth0")
        let statuses = recorder.statuses
        #expect(statuses == [.notReachable, .reachableViaWiFi, .notReachable, .reachableViaWiFi, .notReachable])
        #expect(recorder.paths.map(\.status).first == .notReachable)

        manager.stopMonitoring()
        // Both netlink sockets are closed (on the loop for the watched one).
        #expect(await eventually(within: .seconds(5)) { (try? fixture.netlinkSocketsOfThisProcess()) == 0 })
        #expect(manager.networkReachabilityStatus == .notReachable)
    }

    @Test func addressAndDomainManagersAskTheKernelsRoute() async throws {
        let fixture = try NetworkNamespaceFixture()
        defer { fixture.remove() }
        try fixture.ip("link set lo up", "link set veth1 up", "link set veth0 up", "addr add 10.77.0.1/24 dev veth0")
        let connected = NetworkReachabilityManager(address: try SocketAddress(ipAddress: "10.77.0.9", port: 0))
        let unrouted = NetworkReachabilityManager(address: try SocketAddress(ipAddress: "198.51.100.1", port: 0))
        let loopback = NetworkReachabilityManager(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0))
        let domain = NetworkReachabilityManager(
            domain: "service.test",
            resolver: StaticResolver(["service.test": [try SocketAddress(ipAddress: "198.51.100.1", port: 0)]])
        )
        let recorders = [connected, unrouted, loopback, domain].map(ReachabilityRecorder.init)
        try fixture.run {
            for manager in [connected, unrouted, loopback, domain] { manager.startMonitoring() }
        }
        defer { for manager in [connected, unrouted, loopback, domain] { manager.stopMonitoring() } }
        #expect(await recorders[0].waitForLast(.reachableViaWiFi) != nil)
        #expect(await recorders[1].waitForLast(.notReachable) != nil)
        #expect(await recorders[2].waitForLast(.reachableViaWiFi) != nil)
        #expect(loopback.path.interfaceKind == .loopback)
        #expect(await recorders[3].waitForLast(.notReachable) != nil)

        // A default route makes the unrouted address (and the domain resolving to it) reachable.
        try fixture.ip("route add default via 10.77.0.2 dev veth0")
        #expect(await recorders[1].waitForLast(.reachableViaWiFi) != nil)
        #expect(await recorders[3].waitForLast(.reachableViaWiFi) != nil)
        #expect(unrouted.path.interfaceName == "veth0")
        // An unreachable route for it wins over the default: the kernel's answer, not a guess.
        try fixture.ip("route add unreachable 198.51.100.0/24")
        #expect(await recorders[1].waitForLast(.notReachable) != nil)
        #expect(recorders[0].statuses == [.reachableViaWiFi])
    }
}

/// A network namespace named for this process with a veth pair (veth0, veth1) in it, removed by `remove()`.
struct NetworkNamespaceFixture {
    let name: String

    /// Why namespaces cannot be made here, nil when they can.
    static let unavailableReason: String? = {
        if getuid() != 0 { return "not running as root" }
        if (try? runBash("command -v ip >/dev/null")) != 0 { return "`ip` (iproute2) is not installed" }
        return nil
    }()

    init() throws {
        name = "wirereach-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard try runBash("ip netns add \(name) && ip -n \(name) link add veth0 type veth peer name veth1") == 0 else {
            _ = try? runBash("ip netns del \(name)")
            throw FixtureError.setupFailed(name)
        }
    }

    enum FixtureError: Error { case setupFailed(String), commandFailed(String) }

    /// Runs each `ip` command inside the namespace, in order.
    func ip(_ commands: String...) throws {
        for command in commands {
            guard try runBash("ip -n \(name) \(command)") == 0 else { throw FixtureError.commandFailed(command) }
        }
    }

    /// Runs `body` on a thread inside the namespace.
    func run(_ body: @escaping @Sendable () throws -> Void) throws {
        try NetworkNamespace.run(inNamespaceAt: "/var/run/netns/\(name)", body)
    }

    /// How many of this process's descriptors are netlink sockets of the namespace (inodes of
    /// `/proc/thread-self/net/netlink`, read from inside it, against the targets of `/proc/self/fd/*`).
    func netlinkSocketsOfThisProcess() throws -> Int {
        let table = Guarded("")
        try run { table.withLock { $0 = (try? String(contentsOfFile: "/proc/thread-self/net/netlink", encoding: .utf8)) ?? "" } }
        // Columns: sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode.
        let inodes = Set(
            table.withLock { $0 }.split(separator: "\n").dropFirst().compactMap { $0.split(separator: " ").last.map(String.init) }
        )
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.filter { fd in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
                target.hasPrefix("socket:[")
            else { return false }
            return inodes.contains(String(target.dropFirst("socket:[".count).dropLast()))
        }.count
    }

    func remove() {
        _ = try? runBash("ip netns del \(name)")
    }
}
