public import FoundationEssentials

/// A memory cache bounded by cost that purges least-recently-used entries (AFAutoPurgingImageCache, for any value).
///
/// ```swift
/// let cache = AutoPurgingCache<Data>()          // 100 MiB, purged down to 60 MiB
/// cache.add(Data(count: 1024), withIdentifier: "avatar-42")
/// let hit = cache.value(withIdentifier: "avatar-42")
/// ```
///
/// Adding and reading both count as use. When an `add` takes the total cost strictly above `memoryCapacity`, the least
/// recently used entries are removed, oldest first, until at least `memoryUsage − preferredMemoryUsageAfterPurge`
/// bytes were removed. An entry that alone costs more than `memoryCapacity` is refused and evicts nothing. Every
/// operation is synchronous under one lock (the cost closure runs before it is taken), so `memoryUsage` read after
/// `add` returns is final. With `purgesOnMemoryPressure` the cache empties itself when its `MemoryPressureMonitor`
/// reports memory pressure (cgroup v2 `memory.events`, PSI on Linux).
public final class AutoPurgingCache<Value: Sendable>: Sendable {
    /// The total cost above which an `add` purges.
    public let memoryCapacity: UInt64
    /// What a purge brings the total cost down to (at most).
    public let preferredMemoryUsageAfterPurge: UInt64

    private let cost: @Sendable (Value) -> UInt64
    /// In a class of its own so the pressure monitor can hold the entries without holding the cache.
    private let store: Locked<LRUStore<Value>>
    private let pressureRegistration: (monitor: MemoryPressureMonitor, token: UInt64)?

    /// Creates a cache.
    /// - Parameters:
    ///   - memoryCapacity: The total cost above which an `add` purges; 100 MiB by default.
    ///   - preferredMemoryUsageAfterPurge: What a purge brings the total down to; 60 MiB by default. Must not exceed
    ///     `memoryCapacity`.
    ///   - purgesOnMemoryPressure: Whether `monitor` empties this cache on memory pressure.
    ///   - monitor: Where memory pressure is heard; the process-wide monitor by default.
    ///   - cost: An entry's cost in bytes; called outside the cache's lock.
    public init(
        memoryCapacity: UInt64 = 104_857_600, preferredMemoryUsageAfterPurge: UInt64 = 62_914_560,
        purgesOnMemoryPressure: Bool = true, memoryPressureMonitor monitor: MemoryPressureMonitor = .shared,
        cost: @escaping @Sendable (Value) -> UInt64
    ) {
        precondition(
            preferredMemoryUsageAfterPurge <= memoryCapacity,
            "AutoPurgingCache: preferredMemoryUsageAfterPurge must not exceed memoryCapacity")
        self.memoryCapacity = memoryCapacity
        self.preferredMemoryUsageAfterPurge = preferredMemoryUsageAfterPurge
        self.cost = cost
        let store = Locked(LRUStore<Value>())
        self.store = store
        if purgesOnMemoryPressure {
            // The store, not the cache, is captured: the monitor must not keep the cache alive.
            let token = monitor.register {
                _ = store.withLock { store in
                    defer { store.removeAll() }
                    return store.count > 0
                }
            }
            pressureRegistration = (monitor, token)
        } else {
            pressureRegistration = nil
        }
    }

    deinit {
        if let pressureRegistration { pressureRegistration.monitor.unregister(pressureRegistration.token) }
    }

    /// The total cost of the entries now.
    public var memoryUsage: UInt64 { store.withLock { $0.totalCost } }

    /// The number of entries now.
    public var count: Int { store.withLock { $0.count } }

    /// Stores `value` under `identifier` as the most recently used, replacing any previous value, then purges if the
    /// total is strictly above `memoryCapacity`.
    /// - Returns: Whether `value` is in the cache when `add` returns: false when it alone costs more than
    ///   `memoryCapacity` (nothing is evicted then), or when the purge it caused had to remove it too.
    @discardableResult
    public func add(_ value: Value, withIdentifier identifier: String) -> Bool {
        let cost = self.cost(value)
        guard cost <= memoryCapacity else { return false }
        let capacity = memoryCapacity
        let preferred = preferredMemoryUsageAfterPurge
        return store.withLock { store in
            store.insert(value, cost: cost, forKey: identifier)
            if store.totalCost > capacity {
                let bytesToPurge = store.totalCost - preferred
                var bytesPurged: UInt64 = 0
                while bytesPurged < bytesToPurge, let purged = store.removeOldest() {
                    bytesPurged += purged
                }
            }
            return store.contains(identifier)
        }
    }

    /// The value under `identifier`, which counts as use; nil when absent.
    // Specialised for the two values the module serves: unspecialised, each call looked up the metadata of the
    // generic types it touches (`Locked<LRUStore<Value>>`, the queue's), more than half of a cache hit's cost.
    @_specialize(exported:true,where Value == Data)
    @_specialize(exported:true,where Value == ImageData)
    public func value(withIdentifier identifier: String) -> Value? {
        store.withLock { $0.value(forKey: identifier) }
    }

    /// Removes the value under `identifier`.
    /// - Returns: Whether there was one.
    @discardableResult
    public func removeValue(withIdentifier identifier: String) -> Bool {
        store.withLock { $0.removeValue(forKey: identifier) }
    }

    /// Removes every entry; the usage becomes 0.
    /// - Returns: Whether anything was removed.
    @discardableResult
    public func removeAll() -> Bool {
        store.withLock { store in
            defer { store.removeAll() }
            return store.count > 0
        }
    }

    // MARK: Requests

    /// The key of `request`'s resource: the URL's absolute string followed, with no separator, by
    /// `additionalIdentifier` (AFNetworking's rule; a filter name, a size).
    public static func identifier(for request: ClientRequest, additionalIdentifier: String?) -> String {
        request.url.absoluteString + (additionalIdentifier ?? "")
    }

    /// Stores `value` for `request` (see `add(_:withIdentifier:)`).
    @discardableResult
    public func add(_ value: Value, for request: ClientRequest, additionalIdentifier: String? = nil) -> Bool {
        add(value, withIdentifier: Self.identifier(for: request, additionalIdentifier: additionalIdentifier))
    }

    /// The value for `request`, which counts as use; nil when absent.
    // Specialised for the two values the module serves: unspecialised, each call looked up the metadata of the
    // generic types it touches (`Locked<LRUStore<Value>>`, the queue's), more than half of a cache hit's cost.
    @_specialize(exported:true,where Value == Data)
    @_specialize(exported:true,where Value == ImageData)
    public func value(for request: ClientRequest, additionalIdentifier: String? = nil) -> Value? {
        value(withIdentifier: Self.identifier(for: request, additionalIdentifier: additionalIdentifier))
    }

    /// Removes the value for `request`.
    /// - Returns: Whether there was one.
    @discardableResult
    public func removeValue(for request: ClientRequest, additionalIdentifier: String? = nil) -> Bool {
        removeValue(withIdentifier: Self.identifier(for: request, additionalIdentifier: additionalIdentifier))
    }

    /// Whether a downloaded value for `request` should be stored: always true here (AFNetworking's default); the
    /// downloader's `shouldCache` hook decides per response.
    public func shouldCache(_ value: Value, for request: ClientRequest, additionalIdentifier: String? = nil) -> Bool {
        true
    }
}

extension AutoPurgingCache where Value == Data {
    /// A cache of byte buffers whose cost is their `count`.
    /// - Parameters:
    ///   - memoryCapacity: The total cost above which an `add` purges; 100 MiB by default.
    ///   - preferredMemoryUsageAfterPurge: What a purge brings the total down to; 60 MiB by default.
    ///   - purgesOnMemoryPressure: Whether `monitor` empties this cache on memory pressure.
    ///   - monitor: Where memory pressure is heard.
    public convenience init(
        memoryCapacity: UInt64 = 104_857_600, preferredMemoryUsageAfterPurge: UInt64 = 62_914_560,
        purgesOnMemoryPressure: Bool = true, memoryPressureMonitor monitor: MemoryPressureMonitor = .shared
    ) {
        self.init(
            memoryCapacity: memoryCapacity, preferredMemoryUsageAfterPurge: preferredMemoryUsageAfterPurge,
            purgesOnMemoryPressure: purgesOnMemoryPressure, memoryPressureMonitor: monitor
        ) { UInt64($0.count) }
    }
}

extension AutoPurgingCache where Value == ImageData {
    /// A cache of images whose cost is the decoded size, `pixelWidth × pixelHeight × 4` bytes (see `ImageData.cost`).
    /// - Parameters:
    ///   - memoryCapacity: The total cost above which an `add` purges; 100 MiB by default.
    ///   - preferredMemoryUsageAfterPurge: What a purge brings the total down to; 60 MiB by default.
    ///   - purgesOnMemoryPressure: Whether `monitor` empties this cache on memory pressure.
    ///   - monitor: Where memory pressure is heard.
    public convenience init(
        memoryCapacity: UInt64 = 104_857_600, preferredMemoryUsageAfterPurge: UInt64 = 62_914_560,
        purgesOnMemoryPressure: Bool = true, memoryPressureMonitor monitor: MemoryPressureMonitor = .shared
    ) {
        self.init(
            memoryCapacity: memoryCapacity, preferredMemoryUsageAfterPurge: preferredMemoryUsageAfterPurge,
            purgesOnMemoryPressure: purgesOnMemoryPressure, memoryPressureMonitor: monitor
        ) { $0.cost }
    }
}

extension ImageData {
    /// The bytes the decoded image would take, `pixelWidth × pixelHeight × 4` (RGBA, 8 bits each); saturates at
    /// `UInt64.max` rather than trapping, since the dimensions come from the peer's header.
    public var cost: UInt64 {
        let width = UInt64(max(0, pixelWidth))
        let height = UInt64(max(0, pixelHeight))
        let (area, areaOverflow) = width.multipliedReportingOverflow(by: height)
        let (bytes, bytesOverflow) = area.multipliedReportingOverflow(by: 4)
        return areaOverflow || bytesOverflow ? .max : bytes
    }
}
