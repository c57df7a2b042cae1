import Foundation
import Testing
import WireClient
import WireTestSupport

/// Interface kinds from a sysfs fixture tree, and the procfs/sysfs snapshot of the polling
/// fallback, from fixture files.
@Suite struct InterfaceClassifierTests {
    /// Builds `<root>/class/net/<name>/` with `files` (relative path → content; a trailing "/" makes a folder).
    static func makeTree(_ interfaces: [String: [String: String]]) throws -> String {
        let root = try makeTemporaryFolder()
        for (name, files) in interfaces {
            let directory = "\(root)/class/net/\(name)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for (path, content) in files {
                if path.hasSuffix("/") {
                    try FileManager.default.createDirectory(atPath: "\(directory)/\(path)", withIntermediateDirectories: true)
                } else {
                    try content.write(toFile: "\(directory)/\(path)", atomically: false, encoding: .utf8)
                }
            }
        }
        return root
    }

    @Test func sysfsFixtureClassifiesEveryKind() throws {
        let root = try Self.makeTree([
            "lo": ["type": "772\n"],
            "eth0": ["type": "1\n", "uevent": "INTERFACE=eth0\nIFINDEX=2\n"],
            "wlan0": ["type": "1\n", "uevent": "DEVTYPE=wlan\nINTERFACE=wlan0\n"],
            "wlp2s0": ["type": "1\n", "phy80211/": ""],
            "wlx0": ["type": "1\n", "wireless/": ""],
            "wwan0": ["type": "519\n"],
            "usb0": ["type": "1\n", "uevent": "DEVTYPE=wwan\n"],
            "rmnet_data0": ["type": "530\n"],
            "ppp0": ["type": "512\n"],
            "tun0": ["type": "65534\n", "tun_flags": "0x1001\n"],
            "tap0": ["type": "1\n", "tun_flags": "0x1002\n"],
            "wg0": ["type": "65534\n", "uevent": "DEVTYPE=wireguard\n"],
            "sit0": ["type": "776\n"],
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let classifier = InterfaceClassifier(sysfsRoot: root)
        let expected: [String: InterfaceKind] = [
            "lo": .loopback, "eth0": .wired, "wlan0": .wireless, "wlp2s0": .wireless, "wlx0": .wireless,
            "wwan0": .wwan, "usb0": .wwan, "rmnet_data0": .wwan, "ppp0": .wwan, "tun0": .tunnel, "tap0": .tunnel,
            "wg0": .tunnel, "sit0": .other,
        ]
        for (name, kind) in expected { #expect(classifier.kind(ofInterface: name) == kind, "\(name)") }
        // Not in sysfs (another namespace): the hardware type from netlink decides; names never escape the tree.
        #expect(classifier.kind(ofInterface: "veth0", hardwareType: 1) == .wired)
        #expect(classifier.kind(ofInterface: "ccmni1", hardwareType: 1) == .wwan)
        #expect(classifier.kind(ofInterface: "../../etc", hardwareType: nil) == .other)
        #expect(classifier.kind(ofInterface: "missing") == .other)
    }

    @Test func procAndSysfsFixturesGiveASnapshot() throws {
        let root = try Self.makeTree([
            "lo": ["type": "772\n", "ifindex": "1\n", "flags": "0x9\n", "operstate": "unknown\n"],
            "eth0": ["type": "1\n", "ifindex": "2\n", "flags": "0x1043\n", "operstate": "up\n"],
            "wwan0": ["type": "519\n", "ifindex": "3\n", "flags": "0x1003\n", "operstate": "down\n"],
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: "\(root)/net", withIntermediateDirectories: true)
        try """
        Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
        eth0\t00000000\t010200C0\t0003\t0\t0\t100\t00000000\t0\t0\t0
        eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
        wwan0\t00000000\t00000000\t0001\t0\t0\t50\t00000000\t0\t0\t0
        garbage line
        """.write(toFile: "\(root)/net/route", atomically: false, encoding: .utf8)
        try """
        20010db8000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0
        00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003     eth0
        00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo
        """.write(toFile: "\(root)/net/ipv6_route", atomically: false, encoding: .utf8)
        try """
        20010db8000000000000000000000002 02 40 00 80     eth0
        fe800000000000000000000000000002 02 40 20 80     eth0
        """.write(toFile: "\(root)/net/if_inet6", atomically: false, encoding: .utf8)
        let snapshot = ProcNetSnapshot.read(procRoot: root, classifier: InterfaceClassifier(sysfsRoot: root))
        #expect(snapshot.links.map(\.name) == ["eth0", "lo", "wwan0"])
        #expect(snapshot.links.first { $0.name == "eth0" }?.isUp == true)
        #expect(snapshot.links.first { $0.name == "wwan0" }?.kind == .wwan)
        #expect(snapshot.routes.count == 6)
        let path = ReachabilityEvaluator.path(for: .anyRoute, in: snapshot)
        // wwan0's metric is lower, but it is down; eth0 has a connected IPv4 route (an address) and a global IPv6 one.
        #expect(
            path
                == ReachabilityPath(
                    status: .reachableViaWiFi, interfaceName: "eth0", interfaceKind: .wired, hasIPv4Route: true,
                    hasIPv6Route: true))
        let loopback = ReachabilitySnapshot.IPAddress(bytes: [UInt8](repeating: 0, count: 15) + [1])!
        #expect(ReachabilityEvaluator.path(for: .addresses([loopback]), in: snapshot).interfaceKind == .loopback)
    }
}

/// The fallback when netlink is unavailable: the manager polls procfs and sysfs (here fixture trees) every
/// interval of the injected clock and reports the change it finds.
@Suite(.exclusiveIO(minutes: 1))
struct PollingFallbackTests {
    @Test func pollingFollowsTheFiles() async throws {
        let root = try InterfaceClassifierTests.makeTree([
            "eth0": ["type": "1\n", "ifindex": "2\n", "flags": "0x1043\n", "operstate": "up\n"]
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: "\(root)/net", withIntermediateDirectories: true)
        let header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
        let connected = "eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
        let defaultRoute = "eth0\t00000000\t010200C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
        try (header + connected + defaultRoute).write(toFile: "\(root)/net/route", atomically: true, encoding: .utf8)
        let source = SystemReachabilitySource(
            classifier: InterfaceClassifier(sysfsRoot: root), procRoot: root, pollingInterval: .milliseconds(20),
            usesNetlink: false
        )
        let manager = NetworkReachabilityManager(source: source)
        let recorder = ReachabilityRecorder(manager)
        manager.startMonitoring()
        defer { manager.stopMonitoring() }
        #expect(await recorder.waitForLast(.reachableViaWiFi) != nil)
        #expect(manager.path.interfaceName == "eth0")
        try (header + connected).write(toFile: "\(root)/net/route", atomically: true, encoding: .utf8)
        #expect(await recorder.waitForLast(.notReachable) != nil)
        try "0x1002\n".write(toFile: "\(root)/class/net/eth0/flags", atomically: true, encoding: .utf8)
        try (header + connected + defaultRoute).write(toFile: "\(root)/net/route", atomically: true, encoding: .utf8)
        // The route is back but the interface is down: still not reachable, and no repeated callback.
        try await Task.sleep(for: .milliseconds(100))  // several polls; a window for a wrong delivery
        #expect(recorder.statuses == [.reachableViaWiFi, .notReachable])
    }
}
