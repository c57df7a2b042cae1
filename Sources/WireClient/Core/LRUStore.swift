/// Entries keyed by string in least-recently-used order: a dictionary from key to slot, and an intrusive doubly linked
/// list threaded through one array of nodes (freed slots reused), so insert, read, remove and evict are O(1).
///
/// Order is access order: every insert and every read moves the entry to the most-recent end, which is exactly the
/// order a monotonic access counter would give (ties cannot happen), without storing or sorting the counter.
struct LRUStore<Value: Sendable>: Sendable {
    private struct Node: Sendable {
        var key: String
        var value: Value?
        var cost: UInt64
        var older: Int
        var newer: Int
    }

    private static var none: Int { -1 }

    private var nodes: [Node] = []
    private var freeSlots: [Int] = []
    private var slots: [String: Int] = [:]
    /// The least recently used entry, next to be purged.
    private var oldest = LRUStore.none
    /// The most recently used entry.
    private var newest = LRUStore.none

    /// The sum of the costs of all entries.
    private(set) var totalCost: UInt64 = 0

    /// The number of entries.
    var count: Int { slots.count }

    /// The value under `key`, which becomes the most recently used; nil when absent.
    mutating func value(forKey key: String) -> Value? {
        guard let slot = slots[key] else { return nil }
        moveToNewest(slot)
        return nodes[slot].value
    }

    /// Whether `key` is present, without touching the order.
    func contains(_ key: String) -> Bool { slots[key] != nil }

    /// Stores `value` under `key` as the most recently used, replacing (and un-costing) any previous value.
    mutating func insert(_ value: Value, cost: UInt64, forKey key: String) {
        if let slot = slots[key] {
            totalCost -= nodes[slot].cost
            nodes[slot].value = value
            nodes[slot].cost = cost
            totalCost += cost
            moveToNewest(slot)
            return
        }
        let node = Node(key: key, value: value, cost: cost, older: newest, newer: Self.none)
        let slot: Int
        if let reused = freeSlots.popLast() {
            nodes[reused] = node
            slot = reused
        } else {
            nodes.append(node)
            slot = nodes.count - 1
        }
        if newest != Self.none { nodes[newest].newer = slot }
        newest = slot
        if oldest == Self.none { oldest = slot }
        slots[key] = slot
        totalCost += cost
    }

    /// Removes the entry under `key`; returns whether there was one.
    @discardableResult
    mutating func removeValue(forKey key: String) -> Bool {
        guard let slot = slots[key] else { return false }
        release(slot)
        return true
    }

    /// The key of the least recently used entry, next to be purged; nil when empty.
    var oldestKey: String? { oldest == Self.none ? nil : nodes[oldest].key }

    /// Removes the least recently used entry; returns its cost, or nil when empty.
    mutating func removeOldest() -> UInt64? {
        guard oldest != Self.none else { return nil }
        let cost = nodes[oldest].cost
        release(oldest)
        return cost
    }

    /// Removes everything.
    mutating func removeAll() {
        nodes.removeAll()
        freeSlots.removeAll()
        slots.removeAll()
        oldest = Self.none
        newest = Self.none
        totalCost = 0
    }

    /// The keys from least to most recently used (for tests and diagnostics; O(n)).
    var keysByAge: [String] {
        var keys: [String] = []
        var slot = oldest
        while slot != Self.none {
            keys.append(nodes[slot].key)
            slot = nodes[slot].newer
        }
        return keys
    }

    private mutating func unlink(_ slot: Int) {
        let older = nodes[slot].older
        let newer = nodes[slot].newer
        if older != Self.none { nodes[older].newer = newer } else { oldest = newer }
        if newer != Self.none { nodes[newer].older = older } else { newest = older }
        nodes[slot].older = Self.none
        nodes[slot].newer = Self.none
    }

    private mutating func moveToNewest(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        nodes[slot].older = newest
        if newest != Self.none { nodes[newest].newer = slot }
        newest = slot
        if oldest == Self.none { oldest = slot }
    }

    private mutating func release(_ slot: Int) {
        unlink(slot)
        slots[nodes[slot].key] = nil
        totalCost -= nodes[slot].cost
        nodes[slot].key = ""
        nodes[slot].value = nil
        nodes[slot].cost = 0
        freeSlots.append(slot)
    }
}
