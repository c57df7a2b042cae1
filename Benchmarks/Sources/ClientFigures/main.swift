import Glibc
import Synchronization
import Wire

// Client-engine figures: C concurrent keep-alive request loops through one HTTPClient for S
// seconds against a server on loopback; prints one JSON line: requests/s and this process's CPU per request
// (the shape AHCClient and URLSessionClient print, so run.sh reads all three alike).
//
//   ClientFigures PORT [CONNECTIONS=64] [SECONDS=4] [LOOPS=1]
//   ON_LOOP=1 ClientFigures PORT ...    # the request tasks prefer the client's loop as their task executor
//   PROXY=http://127.0.0.1:3128 ClientFigures PORT ...   # through a proxy (any URL Proxy(parsing:) reads): forwarded
//   PROXY=… TUNNEL=1 ClientFigures PORT ...               # through a CONNECT tunnel per connection (curl's -p)
//   LISTENER=1 ClientFigures PORT ...    # with an event listener that counts the events (the listener's cost)
//
// With --download, one GET through HTTPClient whose body is counted and dropped by a task on Swift's global
// executor (not on the client's loop, as `wire get` reads it; ON_LOOP=1 puts it there): the bulk row's library
// figure, the shape of AHCClient --download.
//
//   ClientFigures --download URL
//
// Run it pinned to one core and the server to the other, e.g.
//   taskset -c 1 .build/release/ClientFigures 18080 64 4
// against nginx pinned with taskset -c 0; wrk on the same URL in the same run is the C floor.

func report(_ text: String) {
    let line = text + "\n"
    _ = line.withCString { write(1, $0, strlen($0)) }
}

func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// One GET of `url` whose body is streamed and dropped; prints the bytes received as a JSON line. With `ON_LOOP=1` the
/// task that sends it and reads the body prefers the client's loop as its executor (as `wire get` reads bodies).
func download(_ url: String) async throws {
    let group = try EventLoopGroup(loopCount: 1)
    let client = try HTTPClient(group: group)
    let onLoop = getenv("ON_LOOP").map { String(cString: $0) == "1" } ?? false
    let start = Deadline.now()
    @Sendable func receive() async throws -> Int {
        let response = try await client.execute(HTTPClientRequest(url: url))
        guard response.head.status.code == 200 else {
            report("status \(response.head.status.code)")
            exit(1)
        }
        var bytes = 0
        for try await chunk in response.body { bytes += chunk.readableBytes }
        return bytes
    }
    // A plain task off the loop: `Task(executorPreference: nil)` would mark it as preferring an executor (see below).
    let transfer = onLoop ? Task(executorPreference: group.next()) { try await receive() } : Task { try await receive() }
    let bytes: Int
    do {
        bytes = try await transfer.value
    } catch {
        await client.shutdown()
        await group.shutdownGracefully()
        throw error
    }
    let seconds = Double(Deadline.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    report(#"{"client":"Wire HTTPClient","bytes":\#(bytes),"seconds":\#(seconds)}"#)
    await client.shutdown()
    await group.shutdownGracefully()
}

let arguments = CommandLine.arguments
if arguments.count == 3 && arguments[1] == "--download" {
    try await download(arguments[2])
    exit(0)
}
guard arguments.count >= 2, let port = Int(arguments[1]) else {
    report("usage: ClientFigures PORT [CONNECTIONS=64] [SECONDS=4] [LOOPS=1] | ClientFigures --download URL")
    exit(2)
}
let connections = arguments.count > 2 ? Int(arguments[2]) ?? 64 : 64
let seconds = arguments.count > 3 ? Double(arguments[3]) ?? 4 : 4
let loops = arguments.count > 4 ? Int(arguments[4]) ?? 1 : 1

let group = try EventLoopGroup(loopCount: loops)
var configuration = HTTPClientConfiguration()
configuration.maxConnectionsPerHost = connections
if let proxy = getenv("PROXY").map({ String(cString: $0) }) {
    configuration.proxy = .proxy(try Proxy(parsing: proxy))
    configuration.tunnelsThroughHTTPProxy = getenv("TUNNEL").map { String(cString: $0) == "1" } ?? false
}
// LISTENER=1: a listener as cheap as one can be (an atomic count), so the figure is the cost of telling it.
let events = Atomic<Int>(0)
if getenv("LISTENER").map({ String(cString: $0) == "1" }) ?? false {
    configuration.eventListener = { _ in events.wrappingAdd(1, ordering: .relaxed) }
}
let client = try HTTPClient(configuration: configuration, group: group)
let url = "http://127.0.0.1:\(port)/"

// Open the connections first, so the timed part measures keep-alive requests only.
try await withThrowingTaskGroup(of: Void.self) { tasks in
    for _ in 0..<connections {
        tasks.addTask { _ = try await client.execute(HTTPClientRequest(url: url)).body.collect(upTo: 1 << 16) }
    }
    try await tasks.waitForAll()
}

let completed = Atomic<Int>(0)
let cpuBefore = processCPUSeconds()
let start = Deadline.now()
let end = start + .milliseconds(Int(seconds * 1000))
// ON_LOOP=1: each request loop prefers one of the client's loops as its task executor (the way `wire get` runs its
// transfers), so a request's hand-overs stay on the loop's thread. Without it, a plain child task on Swift's global
// executor: not `addTask(executorPreference: nil)`, which marks the task as having an initial executor preference (its
// job flags' bit 29, though the preference is none), so that every executor check of the runtime takes the task's
// status-record lock (five per request, counted with uprobes on `AsyncTask::getPreferredTaskExecutor`).
let onLoop = getenv("ON_LOOP").map { String(cString: $0) == "1" } ?? false
@Sendable func requestLoop() async throws {
    while Deadline.now() < end {
        _ = try await client.execute(HTTPClientRequest(url: url)).body.collect(upTo: 1 << 16)
        completed.wrappingAdd(1, ordering: .relaxed)
    }
}
try await withThrowingTaskGroup(of: Void.self) { tasks in
    for _ in 0..<connections {
        if onLoop {
            tasks.addTask(executorPreference: group.next()) { try await requestLoop() }
        } else {
            tasks.addTask { try await requestLoop() }
        }
    }
    try await tasks.waitForAll()
}
let elapsedNanoseconds = Deadline.now().uptimeNanoseconds - start.uptimeNanoseconds
let elapsed = Double(elapsedNanoseconds) / 1e9
let total = completed.load(ordering: .relaxed)
let cpu = processCPUSeconds() - cpuBefore
let rate = Double(total) / elapsed
let cpuPerRequest = total > 0 ? cpu * 1e6 / Double(total) : 0
let told = events.load(ordering: .relaxed)
report(
    #"{"client":"Wire HTTPClient","requests":\#(total),"seconds":\#(elapsed),"requests_per_second":\#(rate),"cpu_us_per_request":\#(cpuPerRequest),"events":\#(told)}"#
)
await client.shutdown()
await group.shutdownGracefully()
