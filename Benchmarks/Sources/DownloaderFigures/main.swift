import Dispatch
import FoundationEssentials
import Glibc
import Synchronization
import Wire
import WireClient

// Resource-downloader figures for issue 16: the CPU of a cache hit, and of many requests for fewer URLs through the
// downloader (merged, then cached) against the same requests through HTTPSessionManager (each one a transfer). One
// JSON line per run: requests, wall seconds, this process's CPU seconds and CPU per request.
//
//   DownloaderFigures serve PORT                              Wire's server answering "Hello, World!" to every GET
//   DownloaderFigures hit URL [N=200000]                      memory-cache hits of one 10 KiB-ish resource
//   DownloaderFigures disk-hit URL [N=20000] DIR              hits of URLCache's directory DIR through the
//                                                            downloader (no memory cache, a memory-less
//                                                            URLCache): URL must be fresh (Cache-Control max-age)
//   DownloaderFigures downloader BASE [REQUESTS=10000] [URLS=1000]   BASE/r/<i mod URLS>, all issued at once
//   DownloaderFigures manager BASE [REQUESTS=10000] [URLS=1000]      the same GETs, 4 at a time (the downloader's
//                                                                    maximumActiveDownloads), no merging
//
// Pin the server and the client to different cores, e.g.
//   taskset -c 0 .build/release/DownloaderFigures serve 18097 &
//   taskset -c 1 .build/release/DownloaderFigures downloader http://127.0.0.1:18097

func report(_ text: String) {
    let line = text + "\n"
    _ = line.withCString { write(1, $0, strlen($0)) }
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func summary(_ mode: String, requests: Int, start: ContinuousClock.Instant, cpuStart: Double) -> String {
    let cpu = cpuSeconds() - cpuStart
    let wall = seconds(start.duration(to: .now))
    return #"{"mode":"\#(mode)","requests":\#(requests),"seconds":\#(wall),"cpu":\#(cpu),"cpuPerRequestMicros":\#(cpu / Double(requests) * 1e6)}"#
}

/// Counts callbacks down and resumes the waiter at zero.
final class Countdown: Sendable {
    private let state: Mutex<(left: Int, waiter: CheckedContinuation<Void, Never>?)>
    init(_ count: Int) { state = Mutex((count, nil)) }
    func done() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.left -= 1
            guard state.left == 0 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
    func wait() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.left == 0 { return true }
                state.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

/// Issues `requests` downloads at once (callback form) and waits for every callback; returns the failures.
func downloadAll(_ downloader: ResourceDownloader<Data>, _ requests: [ClientRequest]) async -> Int {
    let countdown = Countdown(requests.count)
    let failures = Atomic<Int>(0)
    for request in requests {
        downloader.download(request, success: { _, _, _ in countdown.done() }, failure: { _, _, _ in
            failures.add(1, ordering: .relaxed)
            countdown.done()
        })
    }
    await countdown.wait()
    return failures.load(ordering: .relaxed)
}

/// The next request to send, shared by the workers.
final class Cursor: Sendable {
    let value = Atomic<Int>(0)
}

/// The GETs through HTTPSessionManager's session, four at a time, each its own transfer.
func fetchAll(_ list: [ClientRequest]) async throws {
    let manager = try HTTPSessionManager()
    manager.responseSerializer = HTTPResponseSerializer()
    let next = Cursor()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<4 {
            group.addTask {
                while true {
                    let index = next.value.add(1, ordering: .relaxed).oldValue
                    guard index < list.count else { return }
                    _ = try await manager.session.data(for: list[index])
                }
            }
        }
        try await group.waitForAll()
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    report("usage: DownloaderFigures hit URL [N] | downloader BASE [REQUESTS] [URLS] | manager BASE [REQUESTS] [URLS]")
    exit(2)
}
let mode = arguments[1]
let target = arguments[2]
let first = arguments.count > 3 ? Int(arguments[3]) : nil
let second = arguments.count > 4 ? Int(arguments[4]) : nil

switch mode {
case "serve":
    let configuration = HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: Int(target) ?? 0))
    let group = try EventLoopGroup(loopCount: 1)
    let server = HTTPServer(configuration: configuration, group: group, handler: HTTPFixedResponseHandler.hello)
    let bound = try await server.start()
    report("listening on \(bound.port ?? 0)")
    while true { try await Task.sleep(for: .seconds(3600)) }
case "hit":
    let count = first ?? 200_000
    guard let url = URL(string: target) else { exit(2) }
    let downloader = ResourceDownloader<Data>(responseSerializer: HTTPResponseSerializer(), cache: AutoPurgingCache<Data>())
    let request = ClientRequest(url: url)
    // The one download that fills the cache.
    _ = try await downloader.download(request)
    let batch = 1_000
    let start = ContinuousClock.now
    let cpuStart = cpuSeconds()
    var failures = 0
    for _ in 0..<(count / batch) {
        failures += await downloadAll(downloader, Array(repeating: request, count: batch))
    }
    guard failures == 0 else { report("\(failures) failures"); exit(1) }
    report(summary("hit", requests: count / batch * batch, start: start, cpuStart: cpuStart))
case "disk-hit":
    let count = first ?? 20_000
    guard let url = URL(string: target), arguments.count > 4 else { exit(2) }
    var configuration = ResourceDownloader<Data>.defaultSessionConfiguration
    configuration.urlCache = URLCache(memoryCapacity: 0, diskCapacity: 1 << 30, directory: arguments[4])
    let manager = try HTTPSessionManager(configuration: configuration)
    manager.responseSerializer = HTTPResponseSerializer()
    let downloader = ResourceDownloader<Data>(sessionManager: manager, responseSerializer: HTTPResponseSerializer(), cache: nil)
    let request = ClientRequest(url: url)
    // The one download that stores the entry.
    let stored = try await downloader.download(request)
    guard stored.response?.source == .networkStored || stored.response?.source == .cache else {
        report("not stored: \(String(describing: stored.response?.source))")
        exit(1)
    }
    let start = ContinuousClock.now
    let cpuStart = cpuSeconds()
    // One at a time: requests for one URL issued together would merge into one task, and one disk read.
    for _ in 0..<count { _ = try await downloader.download(request) }
    let last = try await downloader.download(request)
    guard last.response?.source == .cache else { report("the last answer came from \(String(describing: last.response?.source))"); exit(1) }
    report(summary("disk-hit", requests: count, start: start, cpuStart: cpuStart))
case "downloader", "manager":
    let requests = first ?? 10_000
    let urls = second ?? 1_000
    let base = target.hasSuffix("/") ? String(target.dropLast()) : target
    let list = (0..<requests).map { ClientRequest(url: URL(string: "\(base)/r/\($0 % urls)")!) }
    let start = ContinuousClock.now
    let cpuStart = cpuSeconds()
    if mode == "downloader" {
        let downloader = ResourceDownloader<Data>(responseSerializer: HTTPResponseSerializer(), cache: AutoPurgingCache<Data>())
        let failures = await downloadAll(downloader, list)
        guard failures == 0 else { report("\(failures) failures"); exit(1) }
    } else {
        try await fetchAll(list)
    }
    report(summary(mode, requests: requests, start: start, cpuStart: cpuStart))
default:
    report("unknown mode \(mode)")
    exit(2)
}
