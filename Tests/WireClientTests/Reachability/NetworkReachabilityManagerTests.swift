import Foundation
import Testing
import Wire
import WireClient
import WireTestSupport

/// The manager's delivery rules against a source the test plays: the first callback always, then status changes
/// only; `paths` on any path change; stop keeps the last status and silences everything; callbacks off the lock.
@Suite(.timeLimit(.minutes(1)))
struct NetworkReachabilityManagerTests {
    typealias Snapshot = ReachabilitySnapshot

    /// A source whose network is a value the test sets; `change()` reports it like the kernel would.
    final class ScriptedSource: ReachabilitySnapshotSource, ReachabilityWatch {
        let current = Guarded(Snapshot())
        let onChange = Guarded<(@Sendable () -> Void)?>(nil)
        let stops = Guarded(0)

        func startWatching(onChange: @escaping @Sendable () -> Void) throws -> any ReachabilityWatch {
            self.onChange.withLock { $0 = onChange }
            return self
        }
        func snapshot(lookingUp destinations: [Snapshot.IPAddress]) throws -> Snapshot { current.withLock { $0 } }
        func stop() { stops.withLock { $0 += 1 } }

        func set(_ snapshot: Snapshot) {
            current.withLock { $0 = snapshot }
            onChange.withLock { $0 }?()
        }
    }

    static let up = Snapshot.Link.flagUp | Snapshot.Link.flagRunning
    static func network(via name: String, kind: InterfaceKind, index: Int = 2) -> Snapshot {
        Snapshot(
            links: [Snapshot.Link(index: index, name: name, kind: kind, flags: up, operationalState: .up)],
            addresses: [
                Snapshot.Address(interfaceIndex: index, address: Snapshot.IPAddress(bytes: [10, 0, 0, 2])!, prefixLength: 8)
            ],
            routes: [
                Snapshot.Route(destination: Snapshot.IPAddress(bytes: [0, 0, 0, 0])!, prefixLength: 0, outputInterfaces: [index])
            ]
        )
    }

    @Test func firstCallbackAlwaysThenOnlyChanges() async throws {
        let source = ScriptedSource()
        let manager = NetworkReachabilityManager(source: source)
        #expect(manager.networkReachabilityStatus == .unknown)
        let recorder = ReachabilityRecorder(manager)
        manager.startMonitoring()
        #expect(await recorder.waitForCount(1))
        #expect(recorder.statuses == [.notReachable])

        // Notifications that change nothing deliver nothing; a change delivers once.
        for _ in 0..<5 { source.set(Snapshot()) }
        source.set(Self.network(via: "eth0", kind: .wired))
        #expect(await recorder.waitForLast(.reachableViaWiFi) != nil)
        #expect(manager.isReachable && manager.isReachableViaWiFi && !manager.isReachableViaWWAN)

        // Another interface, same status: a path, no callback.
        source.set(Self.network(via: "wlan0", kind: .wireless, index: 3))
        #expect(await eventually(within: .seconds(5)) { recorder.paths.last?.interfaceName == "wlan0" })
        source.set(Self.network(via: "wwan0", kind: .wwan, index: 4))
        #expect(await recorder.waitForLast(.reachableViaWWAN) != nil)
        #expect(manager.path.isExpensive)
        #expect(recorder.statuses == [.notReachable, .reachableViaWiFi, .reachableViaWWAN])
        // Paths come through their own stream, which may trail the status callback.
        #expect(await eventually(within: .seconds(5)) { recorder.paths.map(\.interfaceName) == [nil, "eth0", "wlan0", "wwan0"] })

        // A restart delivers the unchanged status again, at once.
        manager.startMonitoring()
        #expect(source.stops.withLock { $0 } == 1)
        #expect(await recorder.waitForCount(4))
        #expect(recorder.statuses.last == .reachableViaWWAN)

        // After stop: the last status stays, nothing more is delivered.
        manager.stopMonitoring()
        source.set(Snapshot())
        try await Task.sleep(for: .milliseconds(100))  // a window for a wrong delivery; not synchronisation
        #expect(recorder.statuses.count == 4)
        #expect(manager.networkReachabilityStatus == .reachableViaWWAN)
        #expect(source.stops.withLock { $0 } == 2)
    }

    @Test func callbacksRunOnTheCallbackQueueWithoutTheLockAndInOrder() async throws {
        let source = ScriptedSource()
        let manager = NetworkReachabilityManager(source: source)
        let queue = DispatchQueue(label: "reachability-test")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        manager.callbackQueue = queue
        let seen = Guarded<[String]>([])
        let changes = NetworkReachabilityManager.didChange.stream()
        // Weak, as an application's block must capture it: the manager keeps its block.
        manager.setReachabilityStatusChangeBlock { [weak manager] status in
            // The manager's own API from inside the block: would deadlock under its lock.
            let current = manager.map { "\($0.networkReachabilityStatus)" } ?? "released"
            let onQueue = DispatchQueue.getSpecific(key: key) == true
            seen.withLock { $0.append("\(status)|\(current)|\(onQueue)") }
        }
        manager.startMonitoring()
        #expect(await eventually(within: .seconds(5)) { seen.withLock { $0.count } == 1 })
        source.set(Self.network(via: "eth0", kind: .wired))
        #expect(await eventually(within: .seconds(5)) { seen.withLock { $0.count } == 2 })
        #expect(seen.withLock { $0 } == ["Not Reachable|Not Reachable|true", "Reachable via WiFi|Reachable via WiFi|true"])
        var received: [NetworkReachabilityStatus] = []
        for await change in changes where change.manager === manager {
            received.append(change.status)
            if received.count == 2 { break }
        }
        #expect(received == [.notReachable, .reachableViaWiFi])
        manager.stopMonitoring()
    }

    @Test func unwatchableSourceDeliversUnknownOnce() async throws {
        struct Broken: ReachabilitySnapshotSource {
            struct Refused: Error {}
            func startWatching(onChange: @escaping @Sendable () -> Void) throws -> any ReachabilityWatch { throw Refused() }
        }
        let manager = NetworkReachabilityManager(source: Broken())
        let recorder = ReachabilityRecorder(manager)
        manager.startMonitoring()
        #expect(await recorder.waitForCount(1))
        #expect(recorder.statuses == [.unknown])
        manager.stopMonitoring()
    }
}
