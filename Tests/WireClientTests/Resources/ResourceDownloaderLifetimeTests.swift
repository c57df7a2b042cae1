import Foundation
import Synchronization
import Testing
import WireTestSupport
@_spi(Locking) import Wire
import WireClient

/// The downloader's and the slot's edges: what releasing a downloader does to its downloads, and URLs that can never
/// be downloaded.
@Suite(.sharedIO(minutes: 1))
struct ResourceDownloaderLifetimeTests {
    /// A weak reference readable from any thread.
    final class WeakDownloader: Sendable {
        private let reference = Lock<Reference>(Reference())
        private struct Reference { weak var downloader: ResourceDownloader<Data>? }
        init(_ downloader: ResourceDownloader<Data>) { reference.withLock { $0.downloader = downloader } }
        var isGone: Bool { reference.withLock { $0.downloader == nil } }
    }

    /// A weak reference to a session, readable from any thread.
    final class WeakSession: Sendable {
        private let reference = Lock<Reference>(Reference())
        private struct Reference { weak var manager: SessionManager? }
        init(_ manager: SessionManager) { reference.withLock { $0.manager = manager } }
        var isGone: Bool { reference.withLock { $0.manager == nil } }
    }

    @Test func releasingADownloaderFreesTheSessionItMadeAndLeavesOneItWasGiven() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            var made: ResourceDownloader<Data>? = ResourceDownloader<Data>(cache: nil)
            let madeSession = WeakSession(try #require(made?.sessionManager.session))
            let log = Recorder<Outcome>()
            _ = try #require(made?.download(server.url("/hold/running"), into: log))
            #expect(await eventually(within: .seconds(10)) { server.requests.count == 1 })
            // Released with its download on the network: the session it made goes with it (LeakSanitizer's check).
            made = nil
            #expect(await eventually(within: .seconds(10)) { madeSession.isGone })
            held.openAll()

            let given = try HTTPSessionManager()
            given.responseSerializer = HTTPResponseSerializer()
            var borrower: ResourceDownloader<Data>? = ResourceDownloader<Data>(sessionManager: given, cache: nil)
            #expect(borrower?.sessionManager === given)
            borrower = nil
            // A manager it was given still runs tasks, for its owner to invalidate.
            let status = await withCheckedContinuation { (done: CheckedContinuation<Int?, Never>) in
                given.session.dataTask(with: ClientRequest(url: server.url("/after"))) { response, _, _ in
                    done.resume(returning: response?.statusCode)
                }.resume()
            }
            #expect(status == 200)
            given.session.invalidateSession(cancelingTasks: true)
        }
    }

    @Test func releasingADownloaderWithDownloadsInFlightFreesItAndCancelsThem() async throws {
        let held = HeldResponses()
        try await LoopbackServer.with(held.handler) { server in
            let log = Recorder<Outcome>()
            let (weak, receipts) = try await Self.startTwoDownloadsAndRelease(server, log: log)
            // The running download's task used to hold its downloader until the server answered.
            #expect(weak.isGone)
            #expect(await eventually(within: .seconds(10)) { log.all.count == 2 })
            for url in [server.url("/hold/running"), server.url("/queued")] {
                #expect(
                    log.all.contains(
                        .failure(.cancelled, reason: "ResourceDownloader cancelled URL request: \(url.absoluteString)")))
            }
            #expect(await eventually(within: .seconds(10)) { receipts.allSatisfy { $0.task.state == .completed } })
            #expect(receipts.allSatisfy { $0.task.error?.code == .cancelled })
            held.openAll()
            #expect(server.requests.map(\.target) == ["/hold/running"], "the queued download never reaches the network")
        }
    }

    /// Starts a running and a queued download on a downloader of its own, then lets the downloader go.
    private static func startTwoDownloadsAndRelease(_ server: LoopbackServer, log: Recorder<Outcome>) async throws
        -> (WeakDownloader, [DownloadReceipt])
    {
        let downloader = makeDownloader(maximumActiveDownloads: 1)
        let running = try #require(downloader.download(server.url("/hold/running"), into: log))
        let queued = try #require(downloader.download(server.url("/queued"), into: log))
        #expect(downloader.activeDownloadCount == 1 && downloader.queuedDownloadCount == 1)
        // The server holds the running download's request: the download is on the network when the downloader goes.
        #expect(await eventually(within: .seconds(10)) { server.requests.count == 1 })
        return (WeakDownloader(downloader), [running, queued])
    }

    @Test(arguments: ["ftp://127.0.0.1/a.png", "file:///etc/passwd", "gopher://127.0.0.1/x", "http:/no-host"])
    func aURLThatCannotBeDownloadedGetsNoReceiptAndFailsAtOnce(_ text: String) async throws {
        let downloader = makeDownloader()
        let log = Recorder<Outcome>()
        let url = try #require(URL(string: text))
        #expect(downloader.download(url, into: log) == nil)
        #expect(downloader.activeDownloadCount == 0 && downloader.queuedDownloadCount == 0)
        #expect(await eventually(within: .seconds(5)) { log.all.count == 1 })
        #expect(log.all.first.map { if case .failure(.badURL, _) = $0 { true } else { false } } == true)
    }

    @Test(arguments: ["ftp://127.0.0.1/a.png", "http:/no-host"])
    func aSlotLoadingAURLThatCannotBeDownloadedShowsThePlaceholderAndFailsBeforeReturning(_ text: String) throws {
        let slot = ResourceSlot(downloader: makeDownloader())
        slot.value = Data("before".utf8)
        let failures = Recorder<ClientError.Code>()
        slot.load(
            ClientRequest(url: try #require(URL(string: text))), placeholder: nil,
            failure: { _, _, error in failures.record(error.code) })
        #expect(failures.all == [.badURL])
        #expect(slot.value == nil, "a nil placeholder is shown too")
        #expect(slot.activeReceipt == nil)

        slot.load(url: URL(string: text), placeholder: Data("placeholder".utf8))
        #expect(slot.value == Data("placeholder".utf8))
    }
}
