import Foundation
import Testing

/// `wire reachability` inside a network namespace of its own (iproute2, as root): not reachable without a route,
/// reachable through a veth once it has an address and a default route, and an address target judged by its route.
extension IOSuite {
@Suite struct ReachabilityCommandTests {
    static let unavailableReason: String? = {
        if getuid() != 0 { return "not running as root" }
        if !FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") && !FileManager.default.isExecutableFile(atPath: "/sbin/ip") {
            return "`ip` (iproute2) is not installed"
        }
        return nil
    }()

    static let shell = URL(fileURLWithPath: "/bin/sh")

    /// Runs a shell command, failing the test on a non-zero exit.
    static func sh(_ command: String) async throws {
        let run = try await WireToolRunner.run(program: shell, ["-c", command])
        try #require(run.status == 0, "\(command): \(run.errors)")
    }

    /// `wire reachability arguments` inside the namespace.
    static func reachability(in namespace: String, _ arguments: [String] = []) async throws -> WireToolRunner.Run {
        try await WireToolRunner.run(program: shell, ["-c", "exec ip netns exec \(namespace) \"$0\" reachability \"$@\"",
                                                      WireToolRunner.executable.path] + arguments)
    }

    @Test(.enabled(if: unavailableReason == nil, "needs root and iproute2"))
    func aNamespaceIsUnreachableUntilItHasARoute() async throws {
        let namespace = "wirecmd-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try await Self.sh("ip netns add \(namespace) && ip -n \(namespace) link add veth0 type veth peer name veth1")
        do {
            let none = try await Self.reachability(in: namespace)
            #expect(none.status == 1 && none.text == "Not Reachable\n", "\(none.text) \(none.errors)")

            try await Self.sh("""
                ip -n \(namespace) link set veth0 up && ip -n \(namespace) link set veth1 up && \
                ip -n \(namespace) addr add 10.77.0.2/24 dev veth0 && ip -n \(namespace) route add default via 10.77.0.1
                """)
            let routed = try await Self.reachability(in: namespace)
            #expect(routed.status == 0 && routed.text.hasPrefix("Reachable via WiFi: veth0 (wired), IPv4 route"),
                    "\(routed.text) \(routed.errors)")
            let watched = try await Self.reachability(in: namespace, ["--watch", "--for", "0.3"])
            #expect(watched.status == 0 && watched.text.hasPrefix("Reachable via WiFi: veth0"), "\(watched.text)")

            try await Self.sh("ip -n \(namespace) route del default")
            let onLink = try await Self.reachability(in: namespace, ["--address", "10.77.0.9"])
            #expect(onLink.status == 0 && onLink.text.hasPrefix("Reachable via WiFi: veth0"), "\(onLink.text)")
            let elsewhere = try await Self.reachability(in: namespace, ["--address", "192.0.2.1"])
            #expect(elsewhere.status == 1 && elsewhere.text == "Not Reachable\n", "\(elsewhere.text)")
        } catch {
            try? await Self.sh("ip netns del \(namespace)")
            throw error
        }
        try await Self.sh("ip netns del \(namespace)")
    }

    @Test func badArgumentsAreUsageErrors() async throws {
        let both = try await WireToolRunner.run(["reachability", "--address", "10.0.0.1", "--host", "example.org"])
        #expect(both.status != 0 && both.errors.contains("one target"))
        let notAnAddress = try await WireToolRunner.run(["reachability", "--address", "not-an-ip"])
        #expect(notAnAddress.status != 0 && notAnAddress.errors.contains("not an IP address"))
        let forWithoutWatch = try await WireToolRunner.run(["reachability", "--for", "1"])
        #expect(forWithoutWatch.status != 0)
    }
}
}
