import Synchronization

extension HTTPClient {
    /// A client for the whole process, for the common case of a program that just makes requests.
    ///
    /// ```swift
    /// let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://localhost:8080/"))
    /// ```
    ///
    /// It runs on one event loop of its own (never one per core), started on first use, with the default
    /// configuration, and lives as long as the process: its `shutdown()` does nothing, so no caller can shut it
    /// down under another. Make a client of your own for other settings or to control its life. If its loop
    /// cannot start (no thread or descriptor left for it), the process goes on: every request through `shared` then
    /// throws `HTTPClientError` of code `.startFailed`, carrying the `IOError` that stopped it.
    public static let shared: HTTPClient = makeShared()

    /// The identity of `shared` once made (0 before): `shutdown()` asks it without making it.
    private static let sharedIdentity = Atomic<UInt>(0)

    /// Whether this client is `HTTPClient.shared`.
    package var isShared: Bool {
        Self.sharedIdentity.load(ordering: .acquiring) == UInt(bitPattern: ObjectIdentifier(self))
    }

    private static func makeShared() -> HTTPClient {
        let client: HTTPClient
        do {
            client = try HTTPClient(group: try EventLoopGroup(loopCount: 1, namePrefix: "wire-shared"))
        } catch {
            // Only resource exhaustion gets here (the default configuration is valid). A static cannot throw, and a
            // library must not stop its process: the requests say why instead.
            client = HTTPClient(
                failedToStart: HTTPClientError(
                    .startFailed, "cannot start HTTPClient.shared's event loop: \(error)", ioError: error as? IOError))
        }
        sharedIdentity.store(UInt(bitPattern: ObjectIdentifier(client)), ordering: .releasing)
        return client
    }
}
