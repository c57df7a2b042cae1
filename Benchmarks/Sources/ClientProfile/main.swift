import Glibc
import Synchronization
import Wire

// HTTPClient's instructions per request under callgrind. valgrind 3.19 dies inside libdispatch's signal thread, which
// an `async` main starts, so this program's main is synchronous: it starts one task on the client's loop (and every
// request loop prefers that loop as its executor, so no Swift task runs on the global executor), then blocks on a
// semaphore until the work is done. The work is a fixed count of requests, so two runs of different lengths give the
// exact cost of one request as (Ir₂ − Ir₁) ÷ (requests₂ − requests₁), start-up and shutdown cancelled out.
//
//   ClientProfile PORT CONNECTIONS REQUESTS_PER_CONNECTION
//   LISTENER=1 ClientProfile …    # with an event listener that counts the events
//   ON_LOOP=actor ClientProfile …  # the request loops isolated to an actor whose executor is the loop, no preference
//
//   swift build -c release --product ClientProfile
//   cp .build/release/ClientProfile /tmp/cp && strip --strip-debug /tmp/cp   # valgrind 3.19 cannot read this DWARF
//   valgrind --tool=callgrind /tmp/cp 18391 64 50; valgrind --tool=callgrind /tmp/cp 18391 64 150

func report(_ text: String) {
    let line = text + "\n"
    _ = line.withCString { write(1, $0, strlen($0)) }
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let port = Int(arguments[1]), let connections = Int(arguments[2]),
    let perConnection = Int(arguments[3])
else {
    report("usage: ClientProfile PORT CONNECTIONS REQUESTS_PER_CONNECTION")
    exit(2)
}

/// What the run counted, shared by its tasks and the main thread.
final class Counters: Sendable {
    let completed = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    let events = Atomic<Int>(0)
}

/// Request loops isolated to the client's loop as an actor's serial executor: they run on the loop's thread, as with a
/// task executor preference, but a task without a preference finds its executor without the runtime's status lock.
actor LoopIsolated {
    let loop: EventLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    init(loop: EventLoop) { self.loop = loop }

    func requests(_ count: Int, client: HTTPClient, url: String, counters: Counters) async {
        await runRequests(count, client: client, url: url, counters: counters)
    }
}

/// One connection's share of the requests, one after another, in the caller's isolation (the actor's, or a task's
/// that prefers the loop).
@Sendable nonisolated(nonsending) func runRequests(_ count: Int, client: HTTPClient, url: String, counters: Counters) async {
    for _ in 0..<count {
        do {
            _ = try await client.execute(HTTPClientRequest(url: url)).body.collect(upTo: 1 << 16)
            counters.completed.wrappingAdd(1, ordering: .relaxed)
        } catch {
            counters.failed.wrappingAdd(1, ordering: .relaxed)
        }
    }
}

/// Runs the requests and returns (completed, failed, events); blocks the calling (main) thread on a pipe meanwhile.
func profile(port: Int, connections: Int, perConnection: Int) throws -> (Int, Int, Int) {
    let group = try EventLoopGroup(loopCount: 1)
    let loop = group.next()
    var configuration = HTTPClientConfiguration()
    configuration.maxConnectionsPerHost = connections
    let counters = Counters()
    if getenv("LISTENER").map({ String(cString: $0) == "1" }) ?? false {
        configuration.eventListener = { _ in counters.events.wrappingAdd(1, ordering: .relaxed) }
    }
    let client = try HTTPClient(configuration: configuration, group: group)
    let url = "http://127.0.0.1:\(port)/"
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { throw IOError(syscall: "pipe", errno: Errno(rawValue: errno)) }
    let (readEnd, writeEnd) = (ends[0], ends[1])
    let mode = getenv("ON_LOOP").map { String(cString: $0) }
    let isolated = mode == "actor"
    // `PROFILE_GLOBAL=1`: the request loops on Swift's global executor (valgrind serialises its threads).
    let global = getenv("PROFILE_GLOBAL").map { String(cString: $0) == "1" } ?? false
    let runner = LoopIsolated(loop: loop)
    @Sendable func run() async {
        await withTaskGroup(of: Void.self) { tasks in
            for _ in 0..<connections {
                if isolated {
                    tasks.addTask { await runner.requests(perConnection, client: client, url: url, counters: counters) }
                    continue
                }
                if global {
                    tasks.addTask { await runRequests(perConnection, client: client, url: url, counters: counters) }
                    continue
                }
                tasks.addTask(executorPreference: loop) {
                    await runRequests(perConnection, client: client, url: url, counters: counters)
                }
            }
        }
        await client.shutdown()
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }
    // Not `Task(executorPreference: nil)` for the actor's runs: that marks a task as preferring an executor, so the
    // runtime's executor checks would take its status-record lock all the same.
    if isolated || global { Task { await run() } } else { Task(executorPreference: loop) { await run() } }
    var byte: UInt8 = 0
    while read(readEnd, &byte, 1) < 0 && errno == EINTR {}
    group.shutdown()
    return (
        counters.completed.load(ordering: .relaxed), counters.failed.load(ordering: .relaxed),
        counters.events.load(ordering: .relaxed)
    )
}

let (completed, failed, told) = try profile(port: port, connections: connections, perConnection: perConnection)
report(#"{"client":"Wire HTTPClient","requests":\#(completed),"failed":\#(failed),"events":\#(told)}"#)
exit(0)
