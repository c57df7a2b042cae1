import AsyncHTTPClient
import Glibc
import NIOCore
import NIOPosix

// AsyncHTTPClient as a load generator, the peer of `wire bench` in run.sh's client rows: C concurrent
// keep-alive request loops for S seconds against one URL, on T NIO event-loop threads (default 1, as
// `wrk -t1` and `wire bench -t 1`). Prints one JSON line: requests/s and this process's CPU per request.
// With --download, one GET whose body is counted and dropped (run.sh's bulk row; time and RSS come from
// /usr/bin/time around it).
//
//   AHCClient URL [CONCURRENCY=64] [SECONDS=5] [THREADS=1]
//   AHCClient --download URL

/// This process's user+system CPU time so far, in seconds (getrusage: every thread, the event loop's and the
/// concurrency pool's alike).
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let seconds = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec
    let micros = usage.ru_utime.tv_usec + usage.ru_stime.tv_usec
    return Double(seconds) + Double(micros) / 1e6
}

/// One request through `client`, its body read to the end; false on any failure or a status other than 200.
func fetch(_ client: HTTPClient, _ url: String) async -> Bool {
    do {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        return response.status == .ok
    } catch {
        return false
    }
}

/// A download answered with a status other than 200.
struct UnexpectedStatus: Error {
    /// The status code received.
    let code: UInt
}

/// One GET of `url` whose body is streamed and dropped; prints the bytes received as a JSON line.
func download(_ url: String) async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let client = HTTPClient(eventLoopGroup: group)
    let clock = ContinuousClock()
    let start = clock.now
    var bytes = 0
    do {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(600))
        guard response.status == .ok else { throw UnexpectedStatus(code: response.status.code) }
        for try await chunk in response.body { bytes += chunk.readableBytes }
    } catch {
        try await client.shutdown().get()
        throw error
    }
    let elapsed = start.duration(to: clock.now)
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print(#"{"client":"AsyncHTTPClient 1.37.0","bytes":\#(bytes),"seconds":\#(seconds)}"#)
    try await client.shutdown().get()
    try await group.shutdownGracefully()
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    print("usage: AHCClient URL [CONCURRENCY=64] [SECONDS=5] [THREADS=1] | AHCClient --download URL")
    exit(2)
}
if arguments[1] == "--download", arguments.count == 3 {
    try await download(arguments[2])
    exit(0)
}
let url = arguments[1]
let concurrency = arguments.count > 2 ? Int(arguments[2]) ?? 64 : 64
let seconds = arguments.count > 3 ? Double(arguments[3]) ?? 5 : 5
let threads = arguments.count > 4 ? Int(arguments[4]) ?? 1 : 1

let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
var configuration = HTTPClient.Configuration()
configuration.httpVersion = .http1Only
configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = concurrency
let client = HTTPClient(eventLoopGroup: group, configuration: configuration)

// Open every connection first, so that the timed part measures keep-alive requests only.
await withTaskGroup(of: Bool.self) { tasks in
    for _ in 0..<concurrency { tasks.addTask { await fetch(client, url) } }
    await tasks.waitForAll()
}

let clock = ContinuousClock()
let cpuBefore = processCPUSeconds()
let start = clock.now
let end = start + .milliseconds(Int(seconds * 1000))
let (completed, errors) = await withTaskGroup(of: (Int, Int).self) { tasks in
    for _ in 0..<concurrency {
        tasks.addTask {
            var ok = 0, failed = 0
            while clock.now < end {
                if await fetch(client, url) { ok += 1 } else { failed += 1 }
            }
            return (ok, failed)
        }
    }
    var sum = (0, 0)
    for await (ok, failed) in tasks { sum.0 += ok; sum.1 += failed }
    return sum
}
let elapsed = start.duration(to: clock.now)
let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
let cpu = processCPUSeconds() - cpuBefore
let rate = Double(completed) / elapsedSeconds
let cpuPerRequest = completed > 0 ? cpu * 1e6 / Double(completed) : 0
print("""
    {"client":"AsyncHTTPClient 1.37.0","requests":\(completed),"errors":\(errors),"seconds":\(elapsedSeconds),\
    "requests_per_second":\(rate),"cpu_us_per_request":\(cpuPerRequest)}
    """)
try await client.shutdown().get()
try await group.shutdownGracefully()
