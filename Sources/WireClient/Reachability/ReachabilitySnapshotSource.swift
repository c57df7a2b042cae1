/// Where a reachability manager gets its view of the network: an injection point, so that tests can
/// play the kernel. `SystemReachabilitySource` is the real one.
public protocol ReachabilitySnapshotSource: Sendable {
    /// Starts watching the network. `onChange` is called, from any thread, after the network may have changed
    /// (coalesced: once for a burst); the manager then takes a new snapshot. Resources the watch needs (sockets)
    /// are opened before this returns, on the calling thread.
    ///
    /// - Throws: when the network cannot be watched at all.
    func startWatching(onChange: @escaping @Sendable () -> Void) throws -> any ReachabilityWatch
}

/// A running watch of the network, from `ReachabilitySnapshotSource.startWatching`.
public protocol ReachabilityWatch: Sendable {
    /// The network now, with the kernel's route lookups for `destinations` (may block briefly; never called on
    /// an event-loop thread).
    ///
    /// - Throws: when the kernel's view cannot be read.
    func snapshot(lookingUp destinations: [ReachabilitySnapshot.IPAddress]) throws -> ReachabilitySnapshot

    /// Stops watching and releases the watch's resources; `onChange` is not called afterwards. Idempotent.
    func stop()
}
