import Glibc
import Wire
import WireLoad

// wire-profile: a fixed amount of HTTP/1.1 work on Wire's own event loops, with no Swift task, so that valgrind
// can run it. (Every `wire` subcommand runs on Swift's global executor, whose worker threads valgrind cannot
// follow.) Count instructions per request with:
//
//   valgrind --tool=callgrind --separate-threads=yes ./wire-profile server -n 200000 -c 64
//
// and read the `wire-profile-serve-0` thread's file for the server, `wire-bench-0` for the load engine.
// `wire-profile serve` only serves (until killed), for a heap profile of held connections:
//
//   valgrind --tool=massif --vgdb=yes ./wire-profile serve    # then `vgdb detailed_snapshot` around a load

let usage = """
    usage: wire-profile server [-n REQUESTS] [-c CONNECTIONS] [--pipeline N]
           wire-profile serve
           wire-profile client URL [-n REQUESTS] [-c CONNECTIONS] [--pipeline N]
      server   an embedded `wire serve --hello` on one loop, loaded by the `wire bench` engine on another
      client   the `wire bench` engine alone, against a server elsewhere (http://IP:PORT/PATH)
      serve    the embedded server alone: prints `listening on PORT` and serves until killed
    """

/// Counts responses; the profile needs no latencies.
struct NoLatencies: LatencyRecorder {
    mutating func record(nanoseconds: UInt64) {}
    mutating func reset() {}
    func summary() -> Int { 0 }
    mutating func takeInterval() -> Int { 0 }
}

func fail(_ message: String) -> Never {
    let text = Array("wire-profile: \(message)\n\(usage)\n".utf8)
    _ = text.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    exit(2)
}

var arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first, ["server", "client", "serve"].contains(mode) else {
    fail("say server, client or serve")
}
arguments.removeFirst()
var url: HTTPURL?
if mode == "client" {
    guard let text = arguments.first, let parsed = try? HTTPURL(text) else { fail("client needs an http:// URL") }
    url = parsed
    arguments.removeFirst()
}
var requests = 100_000
var connections = 64
var pipeline = 1
while let flag = arguments.first {
    arguments.removeFirst()
    guard let text = arguments.first, let value = Int(text), value > 0 else { fail("\(flag) needs a positive number") }
    arguments.removeFirst()
    switch flag {
    case "-n": requests = value
    case "-c": connections = value
    case "--pipeline": pipeline = value
    default: fail("unknown option \(flag)")
    }
}

// The server must outlive the run: its loop contexts (and their listeners) live as long as it does.
var embedded: (server: HTTPServer, group: EventLoopGroup)?
if url == nil {
    do {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "wire-profile-serve")
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(address: try SocketAddress(ipAddress: "127.0.0.1", port: 0)),
            group: group, handler: HTTPFixedResponseHandler.hello)
        let address = try server.startBlocking()
        url = try HTTPURL("http://127.0.0.1:\(address.port ?? 0)/")
        embedded = (server, group)
    } catch {
        fail("cannot start the embedded server: \(error)")
    }
}
if mode == "serve", let port = url?.port {
    let line = Array("listening on \(port)\n".utf8)
    _ = line.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    while true { pause() }
}
guard let target = url, !target.isTLS, let port = target.port else { fail("need an http:// URL with a port") }
let address: SocketAddress
do {
    address = try SocketAddress(ipAddress: target.host, port: port)
} catch {
    fail("\(target.host) is not an IP address: \(error)")
}
var plan: LoadPlan
do {
    plan = LoadPlan(
        addresses: [address], host: target.host, port: port,
        request: try LoadPlan.serializeRequest(method: .get, url: target, headers: HTTPHeaders(), body: nil))
} catch {
    fail("cannot serialize the request: \(error)")
}
plan.connections = connections
plan.pipeline = pipeline
plan.stop = .requests(requests)

do {
    let result = try LoadGenerator.run(plan, recorder: NoLatencies.self)
    let seconds = Double(result.duration.components.seconds) + Double(result.duration.components.attoseconds) / 1e18
    print("\(result.statistics.responses) responses in \(seconds) s, \(result.statistics.errorCount) errors")
} catch {
    fail("\(error)")
}
embedded?.group.shutdown()
