import ArgumentParser
import Wire
import WireClient

/// `wire reachability`: whether the network, an address or a host is reachable, from the kernel's links, addresses
/// and routes over netlink (WireClient's `NetworkReachabilityManager`), as one JSON line per path.
///
/// ```
/// wire reachability                       # one line, exit 0 when reachable, 1 when not
/// wire reachability 10.0.0.1              # a route to this address (also --address 10.0.0.1)
/// wire reachability example.org           # the host's addresses, resolved (also --host example.org)
/// wire reachability --watch               # a line per change of path, until interrupted
/// ```
package struct ReachabilityCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "reachability",
        abstract: "Whether the network (or an address or a host) is reachable, from the kernel's routing tables.",
        discussion: """
            Prints one JSON object on a line: {"status": ..., "interface": ..., "kind": ..., "ipv4Route": ..., \
            "ipv6Route": ...}. status is notReachable, reachableViaWiFi (any interface that is not a cellular \
            modem, as AFNetworking names it), reachableViaWWAN, or unknown; interface is the name of the interface \
            the path leaves through and kind its kind (wired, wireless, wwan, tunnel, loopback or other), both null \
            when nothing is reachable; ipv4Route and ipv6Route are booleans: whether that address family has a route \
            through the interface. Exits 0 when reachable and 1 when not; with --watch, prints a line for every \
            change of path (another interface with the same status included) until interrupted or --for seconds pass.
            """
    )

    package init() {}

    @Argument(help: "An IP address (as --address) or a host name (as --host); none for the network as a whole.")
    package var target: String?

    @Option(name: .long, help: "An IP address (v4 or v6) a route must reach.")
    package var address: String?

    @Option(name: .long, help: "A host name: reachable when a route reaches one of its addresses.")
    package var host: String?

    @Flag(name: .long, help: "Print every change of path until interrupted.")
    var watch = false

    @Option(name: .customLong("for"), help: "With --watch: stop after this many seconds.")
    var duration: Double?

    package func validate() throws {
        if [target, address, host].compactMap({ $0 }).count > 1 {
            throw ValidationError("a positional target, --address and --host name one target: give one")
        }
        if duration != nil && !watch { throw ValidationError("--for applies to --watch") }
        if let duration, !(duration > 0) { throw ValidationError("--for takes a positive number of seconds") }
    }

    package func run() async throws {
        let manager: NetworkReachabilityManager
        if let target {
            // An IP literal is an address target; anything else a host name to resolve.
            if let literal = try? SocketAddress(ipAddress: target, port: 0) {
                manager = NetworkReachabilityManager(address: literal)
            } else {
                manager = NetworkReachabilityManager(domain: target)
            }
        } else if let address {
            do {
                manager = NetworkReachabilityManager(address: try SocketAddress(ipAddress: address, port: 0))
            } catch {
                throw ValidationError("--address: not an IP address: \(address)")
            }
        } else if let host {
            manager = NetworkReachabilityManager(domain: host)
        } else {
            manager = NetworkReachabilityManager()
        }
        // Subscribed before monitoring starts, so the first path (delivered at once) is in the stream.
        let paths = manager.paths
        manager.startMonitoring()
        defer { manager.stopMonitoring() }
        var iterator = paths.makeAsyncIterator()
        guard let first = await iterator.next() else { throw ExitCode(1) }
        StandardStreams.output(Self.line(first) + "\n")
        guard watch else { throw first.status.isReachable ? ExitCode.success : ExitCode(1) }
        // The rest of the stream in a task of its own, so that --for can end it: an iteration that is cancelled ends.
        let printer = Task { [iterator] in
            var iterator = iterator
            while let path = await iterator.next() { StandardStreams.output(Self.line(path) + "\n") }
        }
        if let duration {
            try? await Task.sleep(for: .milliseconds(Int(duration * 1000)))
            printer.cancel()
        }
        await printer.value
    }

    /// `{"status": "reachableViaWiFi", "interface": "eth0", "kind": "wired", "ipv4Route": true, "ipv6Route": false}`.
    package static func line(_ path: ReachabilityPath) -> String {
        var bytes: [UInt8] = []
        func key(_ name: String) {
            bytes.append(contentsOf: (bytes.isEmpty ? "{" : ", ").utf8)
            JSONString.append(name, to: &bytes)
            bytes.append(contentsOf: ": ".utf8)
        }
        func string(_ value: String?) {
            if let value { JSONString.append(value, to: &bytes) } else { bytes.append(contentsOf: "null".utf8) }
        }
        key("status")
        string(statusName(path.status))
        key("interface")
        string(path.interfaceName)
        key("kind")
        string(path.interfaceKind?.rawValue)
        key("ipv4Route")
        bytes.append(contentsOf: (path.hasIPv4Route ? "true" : "false").utf8)
        key("ipv6Route")
        bytes.append(contentsOf: (path.hasIPv6Route ? "true" : "false").utf8)
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The status's case name, a stable token for scripts (the description, "Not Reachable", is for people).
    static func statusName(_ status: NetworkReachabilityStatus) -> String {
        switch status {
        case .unknown: "unknown"
        case .notReachable: "notReachable"
        case .reachableViaWWAN: "reachableViaWWAN"
        case .reachableViaWiFi: "reachableViaWiFi"
        }
    }
}
