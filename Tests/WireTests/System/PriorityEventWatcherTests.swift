import Foundation
import Synchronization
import Testing
import WireTestSupport
@_spi(Locking) import Wire

/// `PriorityEventWatcher` against the kernel: a cgroup v2 group's `cgroup.events` raises POLLPRI when a process
/// moves in or out (the same kernfs notification as `memory.events`), and PSI triggers are armed or refused; every
/// descriptor is closed once stopped.
extension IOSuite {
    @Suite(.exclusiveIO) struct PriorityEventWatcherTests {
        /// A writable cgroup v2 mount (root in a VM or container that delegates it), or nil.
        static let cgroup2Root: String? = {
            guard let mountInfo = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
            for line in mountInfo.split(separator: "\n") {
                let halves = line.split(separator: " - ", maxSplits: 1)
                guard halves.count == 2, halves[1].hasPrefix("cgroup2 ") else { continue }
                let fields = halves[0].split(separator: " ")
                guard fields.count >= 5, access(String(fields[4]), W_OK) == 0 else { continue }
                return String(fields[4])
            }
            return nil
        }()

        /// What each open descriptor of the process refers to (`/proc/self/fd` links).
        static func descriptorTargets() -> [String] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
        }

        @Test(.enabled(if: cgroup2Root != nil, "needs a writable cgroup v2 mount"))
        func aKernfsChangeIsReportedWithTheFileReadAgain() async throws {
            let group = Self.cgroup2Root! + "/wire-watch-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            try #require(mkdir(group, 0o755) == 0)
            defer { rmdir(group) }
            // Foundation's Process keeps descriptors of its own open after its first use: start one before the census.
            do { TestProcessWarmUp.run() }
            let before = openDescriptors()
            let seen = Lock<[String]>([])
            let watcher = try PriorityEventWatcher(
                files: [.init(path: group + "/cgroup.events"), .init(path: group + "/absent")], threadName: "test-watch"
            ) { index, contents in
                seen.withLock { $0.append("\(index): \(String(decoding: contents, as: UTF8.self))") }
            }
            #expect(watcher.watchedIndices == [0])
            do {
                // In a scope of its own: the child's pipes close when it is released, before the census.
                let child = try TestProcess("/bin/sleep", ["30"])
                try "\(child.process.processIdentifier)".write(
                    toFile: group + "/cgroup.procs", atomically: false, encoding: .utf8)
                #expect(
                    await eventually(within: .seconds(10)) { seen.withLock { $0.contains { $0.hasPrefix("0: populated 1\n") } } })
                child.stop()
            }
            #expect(await eventually(within: .seconds(10)) { seen.withLock { $0.last?.hasPrefix("0: populated 0\n") ?? false } })
            watcher.stop()
            watcher.stop()
            let count = seen.withLock { $0.count }
            #expect(count >= 2)
            // The watcher's own descriptors, by what they are: the child's pipes and Foundation's reaping close on
            // threads of their own, sometimes seconds later, so the process-wide count is no measure here.
            let targets = Self.descriptorTargets()
            #expect(!targets.contains { $0.hasPrefix(group) }, "a watched file is still open")
            // New eventfds, less those of run loops Foundation started meanwhile on threads of its own (each comes with
            // a timerfd, which Wire never opens; see `newlyOpened`): a bare count failed once under ThreadSanitizer.
            let doorbells = before.newlyOpened().filter { $0.hasSuffix("anon_inode:[eventfd]") }
            #expect(doorbells.isEmpty, "the watcher's doorbell is still open: \(doorbells)")
        }

        @Test func aTriggerIsArmedWithTheFirstLineTheKernelTakes() async throws {
            let before = await descriptorBaseline()
            let psi = "/proc/pressure/memory"
            let watcher = try PriorityEventWatcher(
                files: [
                    .init(path: psi, triggers: ["not a trigger"]),
                    .init(path: psi, triggers: ["not a trigger", "some 150000 1000000", "some 300000 2000000"]),
                    .init(path: "/nonexistent/pressure", triggers: ["some 150000 1000000"]),
                ], threadName: "test-psi"
            ) { _, _ in }
            #expect(watcher.watchedIndices == (access(psi, W_OK) == 0 ? [1] : []))
            watcher.stop()
            _ = await descriptorBaseline()
            #expect(before.newlyOpened() == [])
        }
    }
}

/// Runs one short child so that Foundation's process machinery has opened what it keeps open.
enum TestProcessWarmUp {
    static func run() {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try? process.run()
        process.waitUntilExit()
    }
}
