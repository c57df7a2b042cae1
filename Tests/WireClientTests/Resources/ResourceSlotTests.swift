import Dispatch
import Foundation
import Synchronization
import Testing
import WireTestSupport
@_spi(Locking) import Wire
import WireClient

/// Resource slots: one active load per slot, supersession, placeholders, cache hits before `load` returns, and the
/// download cancelled when the slot (or its owner) goes.
@Suite(.sharedIO(minutes: 1))
struct ResourceSlotTests {
    func text(_ data: Data?) -> String? { data.map { String(decoding: $0, as: UTF8.self) } }

    @Test func aNewLoadSupersedesThePreviousOneWhoseCallbacksNeverArrive() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let downloader = makeDownloader()
            let slot = ResourceSlot(downloader: downloader)
            let shown = Recorder<String?>()
            slot.onValueChange = { shown.record($0.map { String(decoding: $0, as: UTF8.self) }) }
            let delivered = Recorder<String>()
            slot.load(
                ClientRequest(url: server.url("/hold/a")), placeholder: Data("P".utf8),
                success: { _, _, value in delivered.record("a " + String(decoding: value, as: UTF8.self)) },
                failure: { _, _, error in delivered.record("a failed \(error.code)") })
            let first = try #require(slot.activeReceipt)
            #expect(await eventually(within: .seconds(10)) { server.requests.count == 1 })
            slot.load(url: server.url("/hold/b"))
            let second = try #require(slot.activeReceipt)
            #expect(second.task !== first.task)
            // The superseded download had no other requester: it is cancelled.
            #expect(await eventually(within: .seconds(10)) { first.task.state == .completed })
            #expect(first.task.error?.code == .cancelled)
            #expect(second.task.originalRequest.value(forHTTPHeaderField: "Accept") == "*/*")
            held.openAll()
            #expect(await eventually(within: .seconds(10)) { text(slot.value) == "/hold/b" })
            #expect(slot.activeReceipt == nil)
            #expect(delivered.all.isEmpty)
            #expect(shown.all == ["P", "/hold/b"])
        }
    }

    @Test func concurrentLoadsLeaveOneDownloadAndCancelEveryOther() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let downloader = makeDownloader()
            let slot = ResourceSlot(downloader: downloader)
            DispatchQueue.concurrentPerform(iterations: 50) { index in
                slot.load(url: server.url("/hold/c\(index)"))
            }
            let survivor = try #require(slot.activeReceipt)
            // Every superseded download was cancelled, queued or running: only the survivor is left.
            #expect(
                await eventually(within: .seconds(10)) {
                    downloader.queuedDownloadCount == 0 && downloader.activeDownloadCount == 1
                })
            held.openAll()
            #expect(await eventually(within: .seconds(10)) { slot.value != nil })
            #expect(text(slot.value) == survivor.task.originalRequest.url.path)
        }
    }

    @Test func loadingTheURLAlreadyLoadingDoesNothing() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let slot = ResourceSlot(downloader: makeDownloader())
            slot.load(url: server.url("/hold/same"))
            let receipt = try #require(slot.activeReceipt)
            slot.load(url: server.url("/hold/same"), placeholder: Data("ignored".utf8))
            #expect(slot.activeReceipt == receipt)
            #expect(slot.value == nil)
            held.openAll()
            #expect(await eventually(within: .seconds(10)) { text(slot.value) == "/hold/same" })
            #expect(server.requests.count == 1)
        }
    }

    @Test func placeholdersAndFailures() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let slot = ResourceSlot(downloader: makeDownloader())
            slot.value = Data("old".utf8)
            // A nil placeholder leaves the value as it is while loading.
            slot.load(url: server.url("/hold/p"))
            #expect(text(slot.value) == "old")
            // A failure keeps the placeholder and reaches the failure handler once.
            let failures = Recorder<ClientError.Code>()
            slot.load(
                ClientRequest(url: URL(string: "http://127.0.0.1:1/refused")!), placeholder: Data("P".utf8),
                success: { _, _, _ in failures.record(.cancelled) }, failure: { _, _, error in failures.record(error.code) })
            #expect(text(slot.value) == "P")
            #expect(await eventually(within: .seconds(10)) { failures.all.count == 1 })
            #expect(failures.all != [.cancelled])
            #expect(text(slot.value) == "P")
            // No URL: the placeholder, even nil.
            slot.load(url: nil)
            #expect(slot.value == nil)
            held.openAll()
        }
    }

    @Test func aCachedValueIsDeliveredBeforeLoadReturns() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let downloader = makeDownloader()
            let url = server.url("/c")
            downloader.cache?.add(Data("from cache".utf8), for: ClientRequest(url: url))
            let slot = ResourceSlot(downloader: downloader)
            slot.load(url: url, placeholder: Data("P".utf8))
            #expect(text(slot.value) == "from cache")
            #expect(slot.activeReceipt == nil)
            // With a success handler the value is handed over, not set.
            let other = ResourceSlot(downloader: downloader)
            let handed = Lock<String?>(nil)
            other.load(
                ClientRequest(url: url),
                success: { _, response, value in
                    handed.withLock { $0 = String(decoding: value, as: UTF8.self) + (response == nil ? "" : "!") }
                })
            #expect(handed.withLock { $0 } == "from cache")
            #expect(other.value == nil)
            #expect(server.requests.isEmpty)
        }
    }

    @Test func freeingTheSlotCancelsItsDownload() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let downloader = makeDownloader()
            var slot: ResourceSlot<Data>? = ResourceSlot(downloader: downloader)
            slot?.load(url: server.url("/hold/gone"))
            let receipt = try #require(slot?.activeReceipt)
            #expect(await eventually(within: .seconds(10)) { server.requests.count == 1 })
            slot = nil
            #expect(await eventually(within: .seconds(10)) { receipt.task.state == .completed })
            #expect(receipt.task.error?.code == .cancelled)
            #expect(await eventually(within: .seconds(10)) { downloader.activeDownloadCount == 0 })
            held.openAll()
        }
    }

    @Test func aDownloaderWithSlotsOfLiveOwnersIsFreedWhenReleased() async throws {
        final class Owner: Sendable {}
        let owner = Owner()
        var downloader: ResourceDownloader<Data>? = makeDownloader()
        let slot = try #require(downloader?.slot(for: owner))
        let weak = ResourceDownloaderLifetimeTests.WeakDownloader(try #require(downloader))
        // The registry keeps the owner's slot; the slot must not keep the downloader in turn.
        downloader = nil
        #expect(weak.isGone)
        #expect(slot.downloader == nil)
        let failures = Recorder<ClientError.Code>()
        slot.load(
            ClientRequest(url: try #require(URL(string: "http://127.0.0.1:9/x"))), placeholder: Data("p".utf8),
            failure: { _, _, error in failures.record(error.code) })
        #expect(failures.all == [.cancelled])
        #expect(slot.value == Data("p".utf8))
        _ = owner
    }

    @Test func slotsPerOwnerAreDroppedWithTheirOwner() async throws {
        final class Owner: Sendable {}
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let downloader = makeDownloader()
            let keeper = Owner()
            var owner: Owner? = Owner()
            let receipt: DownloadReceipt
            do {
                // Only the registry keeps the slot: the test holds none of its own.
                let slot = downloader.slot(for: owner!)
                #expect(downloader.slot(for: owner!) === slot)
                #expect(downloader.slot(for: keeper) !== slot)
                slot.load(url: server.url("/hold/owned"))
                receipt = try #require(slot.activeReceipt)
            }
            owner = nil
            _ = downloader.slot(for: keeper)
            #expect(await eventually(within: .seconds(10)) { receipt.task.state == .completed })
            #expect(receipt.task.error?.code == .cancelled)
            held.openAll()
        }
    }
}
