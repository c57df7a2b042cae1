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
    /// down under another. Make a client of your own for other settings or to control its life. If the
    /// process cannot start even one thread, the first use of `shared` stops the process with that error.
    public static let shared: HTTPClient = makeShared()

    /// The identity of `shared` once made (0 before): `shutdown()` asks it without making it.
    private static let sharedIdentity = Atomic<UInt>(0)

    /// Whether this client is `HTTPClient.shared`.
    var isShared: Bool {
        Self.sharedIdentity.load(ordering: .acquiring) == UInt(bitPattern: ObjectIdentifier(self))
    }

    private static func makeShared() -> HTTPClient {
        let client: HTTPClient
        do {
            client = try HTTPClient(group: try EventLoopGroup(loopCount: 1, namePrefix: "wire-shared"))
        } catch {
            // Only resource exhaustion gets here (the default configuration is valid), and a static cannot throw.
            fatalError("wire: cannot start HTTPClient.shared: \(error)")
        }
        sharedIdentity.store(UInt(bitPattern: ObjectIdentifier(client)), ordering: .releasing)
        return client
    }
}
