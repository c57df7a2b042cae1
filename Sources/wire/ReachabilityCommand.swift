import ArgumentParser
import Wire
import WireClient

/// `wire reachability`: whether the network, an address or a host is reachable, from the kernel's links, addresses
/// and routes over netlink (WireClient's `NetworkReachabilityManager`).
///
/// ```
/// wire reachability                       # one line, exit 0 when reachable, 1 when not
/// wire reachability --address 10.0.0.1    # a route to this address
/// wire reachability --host example.org    # the host's addresses, resolved
/// wire reachability --watch               # a line per change of path, until interrupted
/// ```
struct ReachabilityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachability",
        abstract: "Whether the network (or an address or a host) is reachable, from the kernel's routing tables.",
        discussion: """
            Prints the status as AFNetworking names it (Not Reachable, Reachable via WiFi for any interface that is \
            not a cellular modem, Reachable via WWAN), then the interface and its kind, and which address families \
            have a route. Exits 0 when reachable and 1 when not; with --watch, prints a line for every change of \
            path (another interface with the same status included) until interrupted or --for seconds pass.
            """
    )

    @Option(name: .long, help: "An IP address (v4 or v6) a route must reach.")
    var address: String?

    @Option(name: .long, help: "A host name: reachable when a route reaches one of its addresses.")
    var host: String?

    @Flag(name: .long, help: "Print every change of path until interrupted.")
    var watch = false

    @Option(name: .customLong("for"), help: "With --watch: stop after this many seconds.")
    var duration: Double?

    func validate() throws {
        if address != nil && host != nil { throw ValidationError("--address and --host name one target: give one") }
        if duration != nil && !watch { throw ValidationError("--for applies to --watch") }
        if let duration, !(duration > 0) { throw ValidationError("--for takes a positive number of seconds") }
    }

    func run() async throws {
        let manager: NetworkReachabilityManager
        if let address {
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

    /// `Reachable via WiFi: eth0 (wired), IPv4 and IPv6 routes`.
    static func line(_ path: ReachabilityPath) -> String {
        var text = path.status.description
        if let name = path.interfaceName {
            text += ": \(name)"
            if let kind = path.interfaceKind { text += " (\(kind))" }
        }
        let families = [path.hasIPv4Route ? "IPv4" : nil, path.hasIPv6Route ? "IPv6" : nil].compactMap { $0 }
        if !families.isEmpty { text += ", \(families.joined(separator: " and ")) route\(families.count > 1 ? "s" : "")" }
        return text
    }
}
