import Dispatch
import Foundation
import Synchronization
import Testing
import WireTestSupport
import Wire
import WireClient

/// The resource downloader against a loopback server that holds `/hold/…` responses until the test lets them go and
/// counts every request.
@Suite(.sharedIO(minutes: 1))
struct ResourceDownloaderTests {
    @Test func oneHundredConcurrentRequestersOfOneURLMakeOneRequest() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let downloader = makeDownloader()
            let log = Recorder<Outcome>()
            let receipts = Recorder<DownloadReceipt>()
            let url = server.url("/hold/one")
            DispatchQueue.concurrentPerform(iterations: 100) { _ in
                if let receipt = downloader.download(url, into: log) { receipts.record(receipt) }
            }
            #expect(receipts.all.count == 100)
            #expect(Set(receipts.all.map(\.task.taskIdentifier)).count == 1)
            #expect(Set(receipts.all.map(\.receiptID)).count == 100)
            #expect(await eventually(within: .seconds(10)) { server.requests.count == 1 })
            held.open("/hold/one")
            #expect(await eventually(within: .seconds(10)) { log.all.count == 100 })
            #expect(log.all.allSatisfy { $0 == .success("/hold/one", hadResponse: true) })
            #expect(server.requests.count == 1)
        }
    }

    @Test func aThousandRequestsForAHundredURLsMakeAHundredRequests() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let downloader = makeDownloader()
            let log = Recorder<Outcome>()
            DispatchQueue.concurrentPerform(iterations: 1000) { index in
                downloader.download(server.url("/hold/\(index % 100)"), into: log)
            }
            // Every requester is registered before any response leaves: 4 running, 96 queued, 900 joined.
            #expect(downloader.activeDownloadCount == 4)
            #expect(downloader.queuedDownloadCount == 96)
            held.openAll()
            #expect(await eventually(within: .seconds(20)) { log.all.count == 1000 })
            #expect(server.requests.count == 100)
            #expect(Set(server.requests.map(\.target)).count == 100)
            #expect(held.maximumInFlight <= 4)
        }
    }

    @Test func cancellingOneOfTwoReceiptsFailsOnlyThatRequester() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let downloader = makeDownloader()
            let first = Recorder<Outcome>()
            let second = Recorder<Outcome>()
            let url = server.url("/hold/two")
            let receipt = try #require(downloader.download(url, into: first))
            let other = try #require(downloader.download(url, into: second))
            #expect(receipt.task === other.task)
            downloader.cancel(receipt)
            #expect(await eventually(within: .seconds(10)) { first.all.count == 1 })
            #expect(
                first.all == [.failure(.cancelled, reason: "ResourceDownloader cancelled URL request: \(url.absoluteString)")])
            #expect(receipt.task.state != .completed)
            // A second cancel of the same receipt is a no-op.
            downloader.cancel(receipt)
            held.open("/hold/two")
            #expect(await eventually(within: .seconds(10)) { second.all.count == 1 })
            #expect(second.all == [.success("/hold/two", hadResponse: true)])
            #expect(first.all.count == 1)
            #expect(server.requests.count == 1)
        }
    }

    @Test func cancellingTheOnlyReceiptOfARunningDownloadCancelsIt() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let downloader = makeDownloader()
            let log = Recorder<Outcome>()
            let receipt = try #require(downloader.download(server.url("/hold/run"), into: log))
            #expect(await eventually(within: .seconds(10)) { server.requests.count == 1 })
            downloader.cancel(receipt)
            #expect(await eventually(within: .seconds(10)) { receipt.task.state == .completed })
            #expect(receipt.task.error?.code == .cancelled)
            #expect(await eventually(within: .seconds(10)) { downloader.activeDownloadCount == 0 })
            // The receipt's handler is called on its queue, which nothing orders after the count: waited for, not
            // assumed (one ThreadSanitizer run read the log before the handler had run).
            #expect(await eventually(within: .seconds(10)) { log.all.count == 1 })
            #expect(log.all.count == 1)
            #expect(
                log.all.first
                    == .failure(
                        .cancelled, reason: "ResourceDownloader cancelled URL request: \(server.url("/hold/run").absoluteString)")
            )
            held.openAll()
        }
    }

    @Test func cancellingTheOnlyReceiptOfAQueuedDownloadKeepsItOffTheNetwork() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let downloader = makeDownloader(maximumActiveDownloads: 1)
            let log = Recorder<Outcome>()
            downloader.download(server.url("/hold/first"), into: log)
            let queued = try #require(downloader.download(server.url("/queued"), into: log))
            #expect(downloader.queuedDownloadCount == 1)
            downloader.cancel(queued)
            #expect(downloader.queuedDownloadCount == 0)
            #expect(await eventually(within: .seconds(10)) { queued.task.state == .completed })
            downloader.download(server.url("/after"), into: log)
            held.open("/hold/first")
            #expect(await eventually(within: .seconds(10)) { log.all.count == 3 })
            #expect(server.requests.map(\.target) == ["/hold/first", "/after"])
            #expect(
                log.all.contains(
                    .failure(
                        .cancelled, reason: "ResourceDownloader cancelled URL request: \(server.url("/queued").absoluteString)")))
        }
    }

    @Test func atMostFourDownloadsRunAtOnce() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let downloader = makeDownloader()
            #expect(downloader.maximumActiveDownloads == 4)
            let log = Recorder<Outcome>()
            for index in 0..<10 { downloader.download(server.url("/hold/\(index)"), into: log) }
            #expect(downloader.activeDownloadCount == 4)
            #expect(downloader.queuedDownloadCount == 6)
            #expect(await eventually(within: .seconds(10)) { server.requests.count == 4 })
            #expect(Set(server.requests.map(\.target)) == ["/hold/0", "/hold/1", "/hold/2", "/hold/3"])
            // Letting one go starts exactly the next one (FIFO).
            held.open("/hold/0")
            #expect(await eventually(within: .seconds(10)) { server.requests.count == 5 })
            #expect(server.requests.last?.target == "/hold/4")
            #expect(downloader.activeDownloadCount == 4)
            held.openAll()
            #expect(await eventually(within: .seconds(10)) { log.all.count == 10 })
            #expect(held.maximumInFlight == 4)
            #expect(await eventually(within: .seconds(10)) { downloader.activeDownloadCount == 0 })
        }
    }

    @Test(arguments: [DownloadPrioritization.fifo, .lifo])
    func queuedDownloadsStartInPrioritizationOrder(_ order: DownloadPrioritization) async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let downloader = makeDownloader(prioritization: order, maximumActiveDownloads: 1)
            let log = Recorder<Outcome>()
            downloader.download(server.url("/hold/gate"), into: log)
            for name in ["a", "b", "c"] { downloader.download(server.url("/\(name)"), into: log) }
            held.open("/hold/gate")
            #expect(await eventually(within: .seconds(10)) { log.all.count == 4 })
            let expected = order == .fifo ? ["/hold/gate", "/a", "/b", "/c"] : ["/hold/gate", "/c", "/b", "/a"]
            #expect(server.requests.map(\.target) == expected)
        }
    }

    @Test func aCacheHitIssuesNoRequestAndReturnsNoReceipt() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let downloader = makeDownloader()
            let log = Recorder<Outcome>()
            let url = server.url("/cached")
            #expect(downloader.download(url, into: log) != nil)
            #expect(await eventually(within: .seconds(10)) { log.all.count == 1 })
            #expect(downloader.cache?.value(for: ClientRequest(url: url)) == Data("/cached".utf8))
            #expect(downloader.download(url, into: log) == nil)
            #expect(await eventually(within: .seconds(10)) { log.all.count == 2 })
            #expect(log.all.last == .success("/cached", hadResponse: false))
            #expect(server.requests.count == 1)
            // A policy that ignores local data goes to the network.
            var reload = ClientRequest(url: url)
            reload.cachePolicy = .reloadIgnoringLocalCacheData
            #expect(
                downloader.download(
                    reload, success: { _, _, _ in log.record(.success("reload", hadResponse: true)) },
                    failure: { _, _, _ in }) != nil)
            #expect(await eventually(within: .seconds(10)) { log.all.count == 3 })
            #expect(server.requests.count == 2)
        }
    }

    @Test func aLateCompletionOfACancelledDownloadDoesNotReachANewerOne() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let downloader = makeDownloader()
            // The session's completions wait on a suspended queue, so the old download's completion comes only after
            // the newer download of the same URL is registered.
            let completions = DispatchQueue(label: "late-completions")
            downloader.sessionManager.completionQueue = completions
            let old = Recorder<Outcome>()
            let newer = Recorder<Outcome>()
            let url = server.url("/hold/late")
            let oldReceipt = try #require(downloader.download(url, into: old))
            #expect(await eventually(within: .seconds(10)) { server.requests.count == 1 })
            completions.suspend()
            downloader.cancel(oldReceipt)
            let newReceipt = try #require(downloader.download(url, into: newer))
            #expect(newReceipt.task !== oldReceipt.task)
            completions.resume()
            #expect(await eventually(within: .seconds(10)) { oldReceipt.task.state == .completed })
            // Let the old completion run through the downloader (it runs before anything queued after it).
            await withCheckedContinuation { continuation in completions.async { continuation.resume() } }
            await withCheckedContinuation { continuation in downloader.callbackQueue.async { continuation.resume() } }
            #expect(newer.all.isEmpty)
            held.open("/hold/late")
            #expect(await eventually(within: .seconds(10)) { newer.all.count == 1 })
            #expect(newer.all == [.success("/hold/late", hadResponse: true)])
            #expect(old.all.count == 1)
        }
    }

    @Test func handlersMayCallBackIntoTheDownloader() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let downloader = makeDownloader()
            let log = Recorder<Outcome>()
            downloader.download(
                ClientRequest(url: server.url("/outer")),
                success: { _, _, _ in
                    // Under a held lock either call would deadlock.
                    if let receipt = downloader.download(server.url("/hold/inner"), into: log) { downloader.cancel(receipt) }
                    downloader.download(server.url("/outer"), into: log)
                }, failure: { _, _, _ in })
            #expect(await eventually(within: .seconds(10)) { log.all.count == 2 })
            #expect(log.all.contains(.success("/outer", hadResponse: false)))
            held.openAll()
        }
    }

    @Test func onlyGETIsDownloaded() async throws {
        let downloader = makeDownloader()
        let log = Recorder<Outcome>()
        var request = ClientRequest(url: URL(string: "http://127.0.0.1:9/x")!)
        request.method = "POST"
        #expect(
            downloader.download(
                request, success: { _, _, _ in },
                failure: { _, _, error in
                    log.record(.failure(error.code, reason: nil))
                }) == nil)
        #expect(await eventually(within: .seconds(10)) { log.all == [.failure(.requestSerializationFailed, reason: nil)] })
    }

    @Test func theAsyncFormReturnsTheValueAndCancelsWithItsTask() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let downloader = makeDownloader()
            let result = try await downloader.download(ClientRequest(url: server.url("/async")))
            #expect(result.value == Data("/async".utf8))
            #expect(result.response?.statusCode == 200)
            let waiting = Task { try await downloader.download(ClientRequest(url: server.url("/hold/async"))) }
            #expect(await eventually(within: .seconds(10)) { server.requests.count == 2 })
            waiting.cancel()
            await #expect(throws: ClientError(.cancelled)) { try await waiting.value }
            #expect(await eventually(within: .seconds(10)) { downloader.activeDownloadCount == 0 })
            held.openAll()
        }
    }

    @Test func theImagesVariantReadsDimensionsAndCostsThem() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let downloader = ResourceDownloader<ImageData>.images(
                cache: AutoPurgingCache<ImageData>(purgesOnMemoryPressure: false))
            #expect(downloader.acceptHeader == "image/*")
            let image = try await downloader.download(ClientRequest(url: server.url("/png/1"))).value
            #expect(image.pixelWidth == 1 && image.pixelHeight == 1 && image.mimeType == "image/png")
            #expect(downloader.cache?.memoryUsage == 4)
            // A body that is no image fails the requester with the serializer's error.
            await #expect(throws: ClientError(.unacceptableContentType(nil))) {
                _ = try await downloader.download(ClientRequest(url: server.url("/text")))
            }
        }
    }

    @Test func theSharedDownloaderIsOneInstance() {
        #expect(ResourceDownloader<Data>.shared === ResourceDownloader<Data>.shared)
        #expect(ResourceDownloader<Data>.shared.maximumActiveDownloads == 4)
        #expect(ResourceDownloader<Data>.shared.prioritization == .fifo)
        #expect(ResourceDownloader<Data>.defaultSessionConfiguration.timeoutIntervalForRequest == .seconds(60))
    }
}
