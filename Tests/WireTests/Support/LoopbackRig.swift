import Synchronization
import Wire

/// Servers and clients on one event loop, on loopback, for a test that sends requests through Wire's own server:
/// made by `withLoopbackRig`, which shuts each of them down afterwards, whatever the test did.
final class LoopbackRig: Sendable {
    let group: EventLoopGroup
    private let servers = Mutex<[HTTPServer]>([])
    private let clients = Mutex<[HTTPClient]>([])

    fileprivate init() throws {
        group = try EventLoopGroup(loopCount: 1)
    }

    /// Starts a server on `host` and `port` (0: one the system picks) answering with `handler`; returns the port it
    /// listens on.
    func server(
        host: String = "127.0.0.1", port: Int = 0,
        handler: @escaping @Sendable (HTTPServerRequest, HTTPResponseWriter) async throws -> Void
    ) async throws -> Int {
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(address: try SocketAddress(ipAddress: host, port: port)),
            group: group, handler: handler)
        servers.withLock { $0.append(server) }
        let address = try await server.start()
        guard let port = address.port else { throw RigError.noPort(address) }
        return port
    }

    /// A client on the rig's loop.
    func client(_ configuration: HTTPClientConfiguration = HTTPClientConfiguration()) throws -> HTTPClient {
        let client = try HTTPClient(configuration: configuration, group: group)
        clients.withLock { $0.append(client) }
        return client
    }

    fileprivate func shutDown() async {
        for client in clients.withLock({ $0 }) { await client.shutdown() }
        for server in servers.withLock({ $0 }) { await server.shutdown(gracePeriod: .seconds(1)) }
        await group.shutdownGracefully()
    }

    enum RigError: Error {
        case noPort(SocketAddress)
    }
}

/// Runs `body` with a new `LoopbackRig` within `seconds` (`withTimeout`), then shuts the rig's clients, servers and
/// loop down, whatever `body` did, and returns what it returned or throws what it threw.
func withLoopbackRig<T: Sendable>(
    seconds: Double = 10,
    _ body: @escaping @Sendable (LoopbackRig) async throws -> T
) async throws -> T {
    let rig = try LoopbackRig()
    let outcome: Result<T, any Error>
    do {
        outcome = .success(try await withTimeout(seconds: seconds) { try await body(rig) })
    } catch {
        outcome = .failure(error)
    }
    await rig.shutDown()
    return try outcome.get()
}
