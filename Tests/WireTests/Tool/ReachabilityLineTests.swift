import ArgumentParser
import Testing
import WireClient
import WireTool

/// `wire reachability`'s JSON line for a path, and how its target arguments parse, without sockets.
@Suite struct ReachabilityLineTests {
    @Test func aReachablePathIsOneObjectWithTheFiveFields() {
        let path = ReachabilityPath(
            status: .reachableViaWiFi, interfaceName: "eth0", interfaceKind: .wired,
            hasIPv4Route: true, hasIPv6Route: false)
        #expect(
            ReachabilityCommand.line(path)
                == #"{"status": "reachableViaWiFi", "interface": "eth0", "kind": "wired", "ipv4Route": true, "ipv6Route": false}"#
        )
        let cellular = ReachabilityPath(
            status: .reachableViaWWAN, interfaceName: "wwan0", interfaceKind: .wwan,
            hasIPv4Route: false, hasIPv6Route: true)
        #expect(
            ReachabilityCommand.line(cellular)
                == #"{"status": "reachableViaWWAN", "interface": "wwan0", "kind": "wwan", "ipv4Route": false, "ipv6Route": true}"#
        )
    }

    @Test func anUnreachablePathHasNullInterfaceAndKind() {
        #expect(
            ReachabilityCommand.line(.notReachable)
                == #"{"status": "notReachable", "interface": null, "kind": null, "ipv4Route": false, "ipv6Route": false}"#)
        #expect(ReachabilityCommand.line(.unknown).hasPrefix(#"{"status": "unknown", "interface": null"#))
    }

    @Test func theTargetIsPositionalOrAnOptionButOnlyOne() throws {
        #expect(try ReachabilityCommand.parse(["192.0.2.1"]).target == "192.0.2.1")
        #expect(try ReachabilityCommand.parse(["example.org", "--watch"]).target == "example.org")
        #expect(try ReachabilityCommand.parse(["--address", "192.0.2.1"]).address == "192.0.2.1")
        #expect(try ReachabilityCommand.parse(["--host", "example.org"]).host == "example.org")
        #expect(throws: (any Error).self) { try ReachabilityCommand.parse(["192.0.2.1", "--address", "192.0.2.2"]) }
        #expect(throws: (any Error).self) { try ReachabilityCommand.parse(["a.example", "b.example"]) }
    }
}
