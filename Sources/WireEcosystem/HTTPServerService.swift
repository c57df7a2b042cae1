import ServiceLifecycle
import Wire

/// An `HTTPServer` as a ServiceLifecycle `Service`: it runs until the service group shuts down, then stops the way
/// a load balancer expects.
///
/// On graceful shutdown (a `ServiceGroup` configured with `gracefulShutdownSignals: [.sigterm]` receiving SIGTERM,
/// say) the server stops accepting, closes its idle keep-alive connections, lets the requests in flight finish
/// within `gracePeriod` (their responses say `Connection: close`), closes whatever is left when it passes, and
/// `run()` returns. If the service's task is cancelled instead, the server closes everything at once.
///
/// ```swift
/// let server = HTTPServer(configuration: configuration, group: loops, handler: handler)
/// let group = ServiceGroup(
///     services: [HTTPServerService(server: server, gracePeriod: .seconds(20))],
///     gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
public struct HTTPServerService: Service {
    /// The server this service starts and stops.
    public let server: HTTPServer
    /// How long requests in flight may take once graceful shutdown begins.
    public var gracePeriod: Duration

    /// Wraps `server`.
    /// - Parameters:
    ///   - server: The server; `run()` starts it unless it is already listening.
    ///   - gracePeriod: How long requests in flight may take after graceful shutdown begins. Default 10 s.
    public init(server: HTTPServer, gracePeriod: Duration = .seconds(10)) {
        self.server = server
        self.gracePeriod = gracePeriod
    }

    /// Starts the server (unless it already listens), waits for graceful shutdown or cancellation, and stops it.
    /// - Throws: What `HTTPServer.start()` throws (the address in use, say).
    public func run() async throws {
        if server.localAddress == nil { _ = try await server.start() }
        let cancelled: Bool
        do {
            try await gracefulShutdown()
            cancelled = false
        } catch {
            // Only cancellation ends the wait with an error.
            cancelled = true
        }
        await server.shutdown(gracePeriod: cancelled ? .zero : gracePeriod)
    }
}
