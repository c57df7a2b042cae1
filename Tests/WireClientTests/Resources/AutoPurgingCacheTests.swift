import Foundation
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireTestSupport
import WireClient

/// The auto-purging image cache: the purge arithmetic, LRU order with reads counting, request keys, the oversize
/// refusal, image costs, and memory pressure through an injected source (plus the Linux source's parsing and its
/// start/stop on this machine).
@Suite(.sharedIO(minutes: 1))
struct AutoPurgingCacheTests {
    /// Capacity 100, preferred 60, cost = byte count.
    func smallCache() -> AutoPurgingCache<Data> {
        AutoPurgingCache<Data>(memoryCapacity: 100, preferredMemoryUsageAfterPurge: 60, purgesOnMemoryPressure: false)
    }

    func bytes(_ count: Int) -> Data { Data(repeating: 7, count: count) }

    @Test func defaultsAreAFNetworkingsBinaryMegabytes() {
        let cache = AutoPurgingCache<Data>(purgesOnMemoryPressure: false)
        #expect(cache.memoryCapacity == 104_857_600)
        #expect(cache.preferredMemoryUsageAfterPurge == 62_914_560)
    }

    @Test func purgesLeastRecentlyUsedWithReadsCountingUntilAtLeastTheExcessIsRemoved() {
        let cache = smallCache()
        cache.add(bytes(30), withIdentifier: "a")
        cache.add(bytes(30), withIdentifier: "b")
        cache.add(bytes(30), withIdentifier: "c")
        #expect(cache.memoryUsage == 90)
        // Reading a makes b the least recently used.
        #expect(cache.value(withIdentifier: "a") != nil)
        // 90 + 20 = 110 > 100: purge at least 110 − 60 = 50 bytes, oldest first: b (30), then c (60 ≥ 50).
        #expect(cache.add(bytes(20), withIdentifier: "d"))
        #expect(cache.memoryUsage == 50)
        #expect(cache.value(withIdentifier: "b") == nil)
        #expect(cache.value(withIdentifier: "c") == nil)
        #expect(cache.value(withIdentifier: "a") != nil)
        #expect(cache.value(withIdentifier: "d") != nil)
    }

    @Test func usageEqualToCapacityDoesNotPurge() {
        let cache = smallCache()
        cache.add(bytes(50), withIdentifier: "a")
        cache.add(bytes(50), withIdentifier: "b")
        #expect(cache.memoryUsage == 100)
        #expect(cache.count == 2)
        // One byte more is strictly above: purge 101 − 60 = 41 bytes, which takes a (50).
        cache.add(bytes(1), withIdentifier: "c")
        #expect(cache.memoryUsage == 51)
        #expect(cache.value(withIdentifier: "a") == nil)
    }

    @Test func anEntryCostingMoreThanTheCapacityIsRefusedAndEvictsNothing() {
        let cache = smallCache()
        cache.add(bytes(40), withIdentifier: "a")
        #expect(!cache.add(bytes(101), withIdentifier: "huge"))
        #expect(cache.memoryUsage == 40)
        #expect(cache.value(withIdentifier: "a") != nil)
        #expect(cache.value(withIdentifier: "huge") == nil)
    }

    @Test func anEntryThatForcesAPurgeBeyondEverythingOlderGoesToo() {
        // AF's rule, kept: 50 + 70 = 120 > 100, so 60 bytes must go; a (50) is not enough, so the new entry goes too.
        let cache = smallCache()
        cache.add(bytes(50), withIdentifier: "a")
        #expect(!cache.add(bytes(70), withIdentifier: "b"))
        #expect(cache.memoryUsage == 0)
        #expect(cache.count == 0)
    }

    @Test func replacingAnIdentifierSubtractsTheOldCostAndRefreshesIt() {
        let cache = AutoPurgingCache<Data>(
            memoryCapacity: 100, preferredMemoryUsageAfterPurge: 90,
            purgesOnMemoryPressure: false)
        cache.add(bytes(40), withIdentifier: "a")
        cache.add(bytes(30), withIdentifier: "b")
        cache.add(bytes(10), withIdentifier: "a")
        #expect(cache.memoryUsage == 40)
        cache.add(bytes(55), withIdentifier: "c")
        // 95 + 10 = 105 > 100: purge at least 15 bytes; b is now the oldest (a was refreshed) and is enough.
        cache.add(bytes(10), withIdentifier: "d")
        #expect(cache.memoryUsage == 75)
        #expect(cache.value(withIdentifier: "b") == nil)
        #expect(cache.value(withIdentifier: "a") == bytes(10))
    }

    @Test func removalsReportWhetherAnythingWasThere() {
        let cache = smallCache()
        #expect(!cache.removeValue(withIdentifier: "a"))
        #expect(!cache.removeAll())
        cache.add(bytes(10), withIdentifier: "a")
        cache.add(bytes(10), withIdentifier: "b")
        #expect(cache.removeValue(withIdentifier: "a"))
        #expect(cache.memoryUsage == 10)
        #expect(cache.removeAll())
        #expect(cache.memoryUsage == 0)
        #expect(cache.value(withIdentifier: "b") == nil)
    }

    @Test func requestKeysAreTheAbsoluteURLFollowedByTheAdditionalIdentifier() {
        let cache = smallCache()
        let request = ClientRequest(url: URL(string: "http://example.test/a.png?x=1")!)
        cache.add(bytes(10), for: request, additionalIdentifier: "thumb")
        #expect(cache.value(withIdentifier: "http://example.test/a.png?x=1thumb") != nil)
        #expect(cache.value(for: request) == nil)
        #expect(cache.value(for: request, additionalIdentifier: "thumb") != nil)
        #expect(cache.removeValue(for: request, additionalIdentifier: "thumb"))
        #expect(cache.shouldCache(bytes(1), for: request))
    }

    @Test func imageCostIsPixelWidthTimesHeightTimesFourAndSaturates() {
        let image = ImageData(data: Data(), mimeType: "image/png", pixelWidth: 10, pixelHeight: 20)
        #expect(image.cost == 800)
        let huge = ImageData(data: Data(), mimeType: "image/png", pixelWidth: .max, pixelHeight: .max)
        #expect(huge.cost == .max)
        let cache = AutoPurgingCache<ImageData>(
            memoryCapacity: 1000, preferredMemoryUsageAfterPurge: 500,
            purgesOnMemoryPressure: false)
        #expect(cache.add(image, withIdentifier: "i"))
        #expect(cache.memoryUsage == 800)
        #expect(!cache.add(huge, withIdentifier: "h"))
    }

    @Test func manyEntriesStayInLeastRecentlyUsedOrder() {
        // 20,000 entries of 1 byte in a 10,000-byte cache purged to 5,000: each purge removes the oldest 5,001.
        let cache = AutoPurgingCache<Data>(
            memoryCapacity: 10_000, preferredMemoryUsageAfterPurge: 5_000,
            purgesOnMemoryPressure: false)
        for index in 0..<20_000 {
            cache.add(bytes(1), withIdentifier: "k\(index)")
            if index % 3 == 0 { _ = cache.value(withIdentifier: "k\(index / 2)") }
        }
        #expect(cache.memoryUsage <= 10_000)
        #expect(cache.value(withIdentifier: "k19999") != nil)
        #expect(cache.value(withIdentifier: "k0") == nil)
    }

    // MARK: Memory pressure

    @Test func pressureFromTheSourceEmptiesEveryRegisteredCache() {
        let source = ManualPressureSource()
        let monitor = MemoryPressureMonitor(source: source)
        let first = AutoPurgingCache<Data>(memoryPressureMonitor: monitor)
        let second = AutoPurgingCache<ImageData>(memoryPressureMonitor: monitor)
        let exempt = AutoPurgingCache<Data>(purgesOnMemoryPressure: false, memoryPressureMonitor: monitor)
        first.add(bytes(100), withIdentifier: "a")
        second.add(ImageData(data: Data(), mimeType: "image/png", pixelWidth: 2, pixelHeight: 2), withIdentifier: "b")
        exempt.add(bytes(100), withIdentifier: "c")
        #expect(source.starts == 1)
        #expect(monitor.isMonitoring)
        #expect(source.fire())
        #expect(first.memoryUsage == 0 && first.count == 0)
        #expect(second.memoryUsage == 0 && second.count == 0)
        #expect(exempt.count == 1)
        #expect(monitor.pressureEvents == 1)
        // Still registered after a purge: the next pressure empties them again.
        first.add(bytes(1), withIdentifier: "a")
        source.fire()
        #expect(first.count == 0)
    }

    @Test func theSourceRunsOnlyWhileARegisteredCacheLives() {
        let source = ManualPressureSource()
        let monitor = MemoryPressureMonitor(source: source)
        #expect(!monitor.isMonitoring)
        do {
            let cache = AutoPurgingCache<Data>(memoryPressureMonitor: monitor)
            cache.add(bytes(1), withIdentifier: "a")
            #expect(source.starts == 1)
            #expect(source.stops == 0)
        }
        #expect(source.stops == 1)
        #expect(!monitor.isMonitoring)
        #expect(!source.fire())
    }

    @Test func memoryEventsCountersRiseOnlyForHighAndMax() {
        let before = MemoryEventCounters(parsing: "low 0\nhigh 3\nmax 1\noom 0\noom_kill 0\n")
        #expect(before.high == 3 && before.max == 1)
        #expect(!MemoryEventCounters(parsing: "low 9\nhigh 3\nmax 1\noom 2\n").indicatesPressure(since: before))
        #expect(MemoryEventCounters(parsing: "low 0\nhigh 4\nmax 1\n").indicatesPressure(since: before))
        #expect(MemoryEventCounters(parsing: "high 3\nmax 2\n").indicatesPressure(since: before))
        #expect(MemoryEventCounters(parsing: "garbage\nhigh x\n") == MemoryEventCounters(parsing: ""))
    }

    @Test func memoryEventsPathComesFromTheUnifiedHierarchy() {
        let mountInfo = """
            25 30 0:23 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory
            26 30 0:24 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw
            """
        #expect(
            LinuxMemoryPressureSource.memoryEventsPath(
                cgroup: "4:memory:/x\n0::/app.slice/web.service\n",
                mountInfo: mountInfo)
                == "/sys/fs/cgroup/unified/app.slice/web.service/memory.events")
        // The root group has no memory.events; cgroup v1 only has no 0:: line; no cgroup2 mount.
        #expect(LinuxMemoryPressureSource.memoryEventsPath(cgroup: "0::/\n", mountInfo: mountInfo) == nil)
        #expect(LinuxMemoryPressureSource.memoryEventsPath(cgroup: "4:memory:/x\n", mountInfo: mountInfo) == nil)
        #expect(
            LinuxMemoryPressureSource.memoryEventsPath(cgroup: "0::/a\n", mountInfo: "1 2 0:1 / / rw - ext4 sda rw")
                == nil)
    }

    // Opens descriptors and a thread (the suite is .sharedIO): never beside a test that compares the descriptors.
    @Test func theLinuxSourceArmsPSIWhereTheKernelHasItAndStopsCleanly() throws {
        let source = LinuxMemoryPressureSource()
        #expect(!source.isWatching)
        source.start {}
        let hasPSI = FileManager.default.isWritableFile(atPath: "/proc/pressure/memory")
        #expect(source.isWatching == hasPSI)
        source.stop()
        #expect(!source.isWatching)
        // Absent files: nothing is watched and no thread runs.
        let absent = LinuxMemoryPressureSource(procRoot: "/nonexistent", cgroupEventsPath: "/nonexistent/memory.events")
        absent.start {}
        #expect(!absent.isWatching)
        absent.stop()
    }
}

/// A memory-pressure source the test fires by hand.
final class ManualPressureSource: MemoryPressureSource {
    private let state = Lock<(handler: (@Sendable () -> Void)?, starts: Int, stops: Int)>((nil, 0, 0))

    func start(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0 = (handler, $0.starts + 1, $0.stops) }
    }

    func stop() {
        state.withLock { $0 = (nil, $0.starts, $0.stops + 1) }
    }

    var starts: Int { state.withLock { $0.starts } }
    var stops: Int { state.withLock { $0.stops } }

    /// Reports pressure as the kernel would; false when the source is not started.
    @discardableResult
    func fire() -> Bool {
        guard let handler = state.withLock({ $0.handler }) else { return false }
        handler()
        return true
    }
}
