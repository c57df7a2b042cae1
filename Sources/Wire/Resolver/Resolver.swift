/// Turns a host name into the addresses to try, in the order to try them.
///
/// Wire's default is `SystemResolver` (`getaddrinfo` on a blocking pool). A custom resolver
/// (a fixed table in tests, a DNS cache in a service) only has to return addresses.
public protocol Resolver: Sendable {
    /// The addresses for `host` and `port`.
    ///
    /// - Throws: `NameResolutionError` (or any error) when the name cannot be resolved.
    func resolve(host: String, port: Int) async throws -> [SocketAddress]
}

/// The system's resolver: `/etc/hosts`, then DNS, as `getaddrinfo(3)` and nsswitch.conf decide.
///
/// `getaddrinfo` blocks, so it runs on a small pool of threads of its own, never on an event
/// loop or a Swift concurrency thread. Numeric addresses are parsed without a lookup.
public struct SystemResolver: Resolver {
    /// Creates the system resolver.
    public init() {}

    /// Resolves `host`, skipping the lookup for numeric IPv4 and IPv6 addresses.
    public func resolve(host: String, port: Int) async throws -> [SocketAddress] {
        let literal = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if let numeric = try? SocketAddress(ipAddress: literal, port: port) { return [numeric] }
        return try await BlockingPool.shared.run { () throws(NameResolutionError) -> [SocketAddress] in
            try Posix.getAddressInfo(host: literal, port: port)
        }
    }
}

/// A resolver with a fixed answer per host name: for tests, and for pinning a name to addresses
/// the way curl's `--resolve` does.
public struct StaticResolver: Resolver {
    private let table: [String: [SocketAddress]]
    private let fallback: (any Resolver)?

    /// Answers from `table`, and asks `fallback` (if any) for other names.
    public init(_ table: [String: [SocketAddress]], fallback: (any Resolver)? = nil) {
        self.table = table
        self.fallback = fallback
    }

    /// The table's addresses for `host`, with `port` applied.
    public func resolve(host: String, port: Int) async throws -> [SocketAddress] {
        if let addresses = table[host.lowercased()] { return addresses.map { $0.withPort(port) } }
        if let fallback { return try await fallback.resolve(host: host, port: port) }
        throw NameResolutionError.unknownHost(host)
    }
}

extension SystemResolver {
    /// Resolves `host` on the calling thread, blocking it: for a tool's start-up outside Swift
    /// concurrency (the load generator), never for an event loop.
    package static func resolveBlocking(host: String, port: Int) throws(NameResolutionError) -> [SocketAddress] {
        if let numeric = try? SocketAddress(ipAddress: host, port: port) { return [numeric] }
        return try Posix.getAddressInfo(host: host, port: port)
    }
}
