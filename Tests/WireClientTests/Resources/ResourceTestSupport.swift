import Foundation
import Synchronization
import Testing
@_spi(Locking) import Wire
import WireClient

/// A server whose `/hold/…` responses wait until the test opens that path's gate; everything else answers at once.
/// Every response body is the request's path, so a value tells which request it answers. Counts requests in flight.
final class HeldResponses: Sendable {
    private struct State {
        var open: Set<String> = []
        var openAll = false
        var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]
        var inFlight = 0
        var maximumInFlight = 0
    }

    private let state = Lock(State())

    /// The most requests the server held at once.
    var maximumInFlight: Int { state.withLock { $0.maximumInFlight } }

    /// The handler for `LoopbackServer`.
    var handler: @Sendable (LoopbackServer.Recorded, HTTPResponseWriter) async throws -> Void {
        { [self] request, writer in
            state.withLock { state in
                state.inFlight += 1
                state.maximumInFlight = max(state.maximumInFlight, state.inFlight)
            }
            if request.target.hasPrefix("/hold") { await wait(request.target) }
            // Out of flight before the answer leaves, so the client cannot start its next download earlier.
            state.withLock { $0.inFlight -= 1 }
            if request.target.hasPrefix("/png") {
                try await writer.respond(
                    HTTPResponseHead(status: .ok, headers: ["Content-Type": "image/png"]),
                    body: ByteBuffer(bytes: onePixelPNG))
            } else {
                try await writer.reply(200, request.target)
            }
        }
    }

    private func wait(_ path: String) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.openAll || state.open.contains(path) { return true }
                state.waiters[path, default: []].append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Lets the held responses of `path` (and later requests of it) go.
    func open(_ path: String) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open.insert(path)
            return state.waiters.removeValue(forKey: path) ?? []
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Lets every held response go, now and later.
    func openAll() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.openAll = true
            defer { state.waiters = [:] }
            return state.waiters.values.flatMap { $0 }
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A 1×1 PNG header (signature, IHDR): enough for `ImageData`'s header reader.
let onePixelPNG: [UInt8] = [
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4, 0x89,
]

/// What a requester was told, for the downloader and slot tests.
enum Outcome: Sendable, Equatable {
    case success(String, hadResponse: Bool)
    case failure(ClientError.Code, reason: String?)
}

/// A downloader of bytes for one test: its own cache, no pressure monitor, callbacks on a private queue.
func makeDownloader(
    prioritization: DownloadPrioritization = .fifo, maximumActiveDownloads: Int = 4,
    cached: Bool = true
) -> ResourceDownloader<Data> {
    ResourceDownloader<Data>(
        prioritization: prioritization, maximumActiveDownloads: maximumActiveDownloads,
        cache: cached ? AutoPurgingCache<Data>(purgesOnMemoryPressure: false) : nil)
}

extension ResourceDownloader where Value == Data {
    /// Downloads `url`, recording what its requester was told in `log`.
    @discardableResult
    func download(_ url: URL, into log: Recorder<Outcome>, receiptID: UUID = UUID()) -> DownloadReceipt? {
        download(
            ClientRequest(url: url), receiptID: receiptID,
            success: { _, response, data in
                log.record(.success(String(decoding: data, as: UTF8.self), hadResponse: response != nil))
            },
            failure: { _, _, error in
                log.record(.failure(error.code, reason: error.failureReason))
            })
    }
}
