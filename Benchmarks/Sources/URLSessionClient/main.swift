import Foundation
import FoundationNetworking
import Glibc

// Foundation's URLSession (FoundationNetworking, libcurl underneath) as a load generator, the peer of
// `wire bench` in run.sh's client rows: C concurrent keep-alive request loops for S seconds against one URL
// through one session that may open C connections. Prints one JSON line: requests/s and this process's CPU
// per request.
//
//   URLSessionClient URL [CONCURRENCY=64] [SECONDS=5]

/// This process's user+system CPU time so far, in seconds (getrusage, every thread).
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let seconds = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec
    let micros = usage.ru_utime.tv_usec + usage.ru_stime.tv_usec
    return Double(seconds) + Double(micros) / 1e6
}

/// One GET of `url`, body read whole; false on any failure or a status other than 200.
func fetch(_ session: URLSession, _ url: URL) async -> Bool {
    do {
        let (_, response) = try await session.data(from: url)
        return (response as? HTTPURLResponse)?.statusCode == 200
    } catch {
        return false
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 2, let url = URL(string: arguments[1]) else {
    print("usage: URLSessionClient URL [CONCURRENCY=64] [SECONDS=5]")
    exit(2)
}
let concurrency = arguments.count > 2 ? Int(arguments[2]) ?? 64 : 64
let seconds = arguments.count > 3 ? Double(arguments[3]) ?? 5 : 5

let configuration = URLSessionConfiguration.ephemeral
configuration.httpMaximumConnectionsPerHost = concurrency
configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
configuration.urlCache = nil
let session = URLSession(configuration: configuration)

// Open the connections first, so that the timed part measures keep-alive requests only.
await withTaskGroup(of: Bool.self) { tasks in
    for _ in 0..<concurrency { tasks.addTask { await fetch(session, url) } }
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
                if await fetch(session, url) { ok += 1 } else { failed += 1 }
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
    {"client":"URLSession (FoundationNetworking)","requests":\(completed),"errors":\(errors),\
    "seconds":\(elapsedSeconds),"requests_per_second":\(rate),"cpu_us_per_request":\(cpuPerRequest)}
    """)
session.invalidateAndCancel()
