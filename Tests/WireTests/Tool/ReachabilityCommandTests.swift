import Foundation
import Testing

/// `wire reachability` inside a network namespace of its own (iproute2, as root): not reachable without a route,
/// reachable through a veth once it has an address and a default route, and an address target (positional or
/// `--address`) judged by its route; every line one JSON object `{status, interface, kind, ipv4Route, ipv6Route}`.
extension IOSuite {
    @Suite struct ReachabilityCommandTests {
        static let unavailableReason: String? = {
            if getuid() != 0 { return "not running as root" }
            if !FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip")
                && !FileManager.default.isExecutableFile(atPath: "/sbin/ip")
            {
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
            try await WireToolRunner.run(
                program: shell,
                [
                    "-c", "exec ip netns exec \(namespace) \"$0\" reachability \"$@\"",
                    WireToolRunner.executable.path,
                ] + arguments)
        }

        /// The JSON objects of the tool's lines, each checked to hold exactly the five fields.
        static func objects(_ run: WireToolRunner.Run) throws -> [[String: Any]] {
            try run.text.split(separator: "\n").map { line in
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
                #expect(Set(object.keys) == ["status", "interface", "kind", "ipv4Route", "ipv6Route"], "\(line)")
                return object
            }
        }

        /// The one object of a run without --watch.
        static func object(_ run: WireToolRunner.Run) throws -> [String: Any] {
            let objects = try objects(run)
            try #require(objects.count == 1, "\(run.text) \(run.errors)")
            return objects[0]
        }

        /// Whether `object` says not reachable, with no interface and no route.
        static func isUnreachable(_ object: [String: Any]) -> Bool {
            object["status"] as? String == "notReachable" && object["interface"] is NSNull && object["kind"] is NSNull
                && object["ipv4Route"] as? Bool == false && object["ipv6Route"] as? Bool == false
        }

        /// Whether `object` says reachable through `interface`, a wired link with an IPv4 route.
        static func isReachable(_ object: [String: Any], via interface: String, kind: String) -> Bool {
            object["status"] as? String == "reachableViaWiFi" && object["interface"] as? String == interface
                && object["kind"] as? String == kind
        }

        @Test(.enabled(if: unavailableReason == nil, "needs root and iproute2"))
        func aNamespaceIsUnreachableUntilItHasARoute() async throws {
            let namespace = "wirecmd-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            try await Self.sh("ip netns add \(namespace) && ip -n \(namespace) link add veth0 type veth peer name veth1")
            do {
                let none = try await Self.reachability(in: namespace)
                let nonePath = try Self.object(none)
                #expect(none.status == 1 && Self.isUnreachable(nonePath), "\(none.text) \(none.errors)")

                try await Self.sh(
                    """
                    ip -n \(namespace) link set veth0 up && ip -n \(namespace) link set veth1 up && \
                    ip -n \(namespace) addr add 10.77.0.2/24 dev veth0 && ip -n \(namespace) route add default via 10.77.0.1
                    """)
                let routed = try await Self.reachability(in: namespace)
                let path = try Self.object(routed)
                #expect(
                    routed.status == 0 && Self.isReachable(path, via: "veth0", kind: "wired")
                        && path["ipv4Route"] as? Bool == true, "\(routed.text) \(routed.errors)")
                let watched = try await Self.reachability(in: namespace, ["--watch", "--for", "0.3"])
                let lines = try Self.objects(watched)
                #expect(
                    watched.status == 0 && !lines.isEmpty && Self.isReachable(lines[0], via: "veth0", kind: "wired"),
                    "\(watched.text)")

                try await Self.sh("ip -n \(namespace) route del default")
                for arguments in [["10.77.0.9"], ["--address", "10.77.0.9"]] {
                    let onLink = try await Self.reachability(in: namespace, arguments)
                    let onLinkPath = try Self.object(onLink)
                    #expect(
                        onLink.status == 0 && Self.isReachable(onLinkPath, via: "veth0", kind: "wired")
                            && onLinkPath["ipv4Route"] as? Bool == true && onLinkPath["ipv6Route"] as? Bool == false,
                        "\(arguments) \(onLink.text)")
                }
                for arguments in [["192.0.2.1"], ["--address", "192.0.2.1"]] {
                    let elsewhere = try await Self.reachability(in: namespace, arguments)
                    let elsewherePath = try Self.object(elsewhere)
                    #expect(
                        elsewhere.status == 1 && Self.isUnreachable(elsewherePath),
                        "\(arguments) \(elsewhere.text)")
                }
            } catch {
                try? await Self.sh("ip netns del \(namespace)")
                throw error
            }
            try await Self.sh("ip netns del \(namespace)")
        }

        @Test func badArgumentsAreUsageErrors() async throws {
            let both = try await WireToolRunner.run(["reachability", "--address", "10.0.0.1", "--host", "example.org"])
            #expect(both.status != 0 && both.errors.contains("one target"))
            let positionalAndOption = try await WireToolRunner.run(["reachability", "10.0.0.1", "--host", "example.org"])
            #expect(positionalAndOption.status != 0 && positionalAndOption.errors.contains("one target"))
            let notAnAddress = try await WireToolRunner.run(["reachability", "--address", "not-an-ip"])
            #expect(notAnAddress.status != 0 && notAnAddress.errors.contains("not an IP address"))
            let forWithoutWatch = try await WireToolRunner.run(["reachability", "--for", "1"])
            #expect(forWithoutWatch.status != 0)
        }

        /// A positional IP literal is an address target and anything else a host name, resolved: both reach this
        /// machine's loopback interface (the family of the literal or of the resolved address has the route).
        @Test func aPositionalTargetIsAnAddressOrAHost() async throws {
            for (target, family) in [("127.0.0.1", "ipv4Route"), ("::1", "ipv6Route"), ("localhost", nil)] {
                let run = try await WireToolRunner.run(["reachability", target])
                let path = try Self.object(run)
                #expect(
                    run.status == 0 && Self.isReachable(path, via: "lo", kind: "loopback"), "\(target): \(run.text) \(run.errors)"
                )
                if let family { #expect(path[family] as? Bool == true, "\(target): \(run.text)") }
            }
        }
    }
}
