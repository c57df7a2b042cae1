import FoundationEssentials
import Glibc
import Synchronization
import Wire
import WireClient

// The manager's instructions per request under callgrind, as ClientProfile counts HTTPClient's: a synchronous main
// (valgrind 3.19 dies in the signal thread an `async` main starts) that starts the request loops as tasks and blocks
// on a pipe until they are done. A fixed count of requests, so two runs of different lengths give the exact cost of
// one request as (Ir₂ − Ir₁) ÷ (requests₂ − requests₁), start-up and shutdown cancelled out.
//
//   ManagerProfile MODE PORT CONNECTIONS REQUESTS_PER_CONNECTION     MODE: client (HTTPClient) or data (the manager)
//
//   swift build -c release --product ManagerProfile
//   cp .build/release/ManagerProfile /tmp/mp && strip --strip-debug /tmp/mp   # valgrind 3.19 cannot read this DWARF
//   valgrind --tool=callgrind /tmp/mp data 18090 64 50; valgrind --tool=callgrind /tmp/mp data 18090 64 250
//
// The GET is of /user.json (nginx as in Benchmarks/README); both modes use one client configured as a session
// configures its own, as ManagerFigures does, so they differ only by the manager layer.

func report(_ text: String) {
    let line = text + "\n"
    _ = line.withCString { write(1, $0, strlen($0)) }
}

let arguments = CommandLine.arguments
guard arguments.count == 5, ["client", "data"].contains(arguments[1]), let port = Int(arguments[2]),
    let connections = Int(arguments[3]), let perConnection = Int(arguments[4])
else {
    report("usage: ManagerProfile client|data PORT CONNECTIONS REQUESTS_PER_CONNECTION")
    exit(2)
}
let viaManager = arguments[1] == "data"

/// What the run counted, shared by its tasks and the main thread.
final class Counters: Sendable {
    let completed = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
}

/// Runs the requests and returns (completed, failed); blocks the calling (main) thread on a pipe meanwhile.
func profile() throws -> (Int, Int) {
    let group = try EventLoopGroup(loopCount: 1)
    var clientConfiguration = HTTPClientConfiguration()
    clientConfiguration.maxConnectionsPerHost = connections
    clientConfiguration.redirects = .disallow
    clientConfiguration.userAgent = nil
    let client = try HTTPClient(configuration: clientConfiguration, group: group)
    var sessionConfiguration = SessionConfiguration.default
    sessionConfiguration.httpClient = client
    let manager = try HTTPSessionManager(configuration: sessionConfiguration)
    manager.responseSerializer = HTTPResponseSerializer()
    let url = "http://127.0.0.1:\(port)/user.json"
    let counters = Counters()
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { throw IOError(syscall: "pipe", errno: Errno(rawValue: errno)) }
    let writeEnd = ends[1]
    Task {
        await withTaskGroup(of: Void.self) { tasks in
            for _ in 0..<connections {
                tasks.addTask {
                    for _ in 0..<perConnection {
                        do {
                            if viaManager {
                                let result = try await manager.get(url)
                                guard result.response?.statusCode == 200, result.value != nil else { exit(1) }
                            } else {
                                let response = try await client.execute(HTTPClientRequest(url: url))
                                _ = try await response.body.collect(upTo: 1 << 16)
                            }
                            counters.completed.wrappingAdd(1, ordering: .relaxed)
                        } catch {
                            counters.failed.wrappingAdd(1, ordering: .relaxed)
                        }
                    }
                }
            }
        }
        manager.session.invalidateSession(cancelingTasks: true)
        await client.shutdown()
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }
    var byte: UInt8 = 0
    while read(ends[0], &byte, 1) < 0 && errno == EINTR {}
    return (counters.completed.load(ordering: .relaxed), counters.failed.load(ordering: .relaxed))
}

let (completed, failed) = try profile()
report(#"{"client":"\#(arguments[1])","requests":\#(completed),"failed":\#(failed)}"#)
exit(0)
